import CHubPlugin
import CHubSystem
import FoundationEssentials
import HubCore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Loads one plugin file in this process and exercises everything it offers, as a host would: init, every
/// component created, layout traits, preferred sizes for every sample model and container, load view, configure
/// with every sample model, draw, reuse with another model, selection, UI state round trip, extension tables,
/// destroy, unload.
///
/// It runs inside the child process of `hubhost probe` / `hubhost validate`, never in a host that serves: a
/// plugin that crashes or hangs here takes only the child down. Before each phase it calls `progress`, which
/// the child prints and flushes, so the parent can name the phase a crash happened in.
public struct ConformanceSuite {
    public let file: URL
    public let cacheDirectory: URL
    public var progress: (ProbePhase) -> Void = { _ in }
    public var logger = Logger(label: "hubhost.probe")
    /// A real view whose models the plugin's components are also run over (`validate --view`).
    public var view: ViewModel?

    public init(file: URL, cacheDirectory: URL) {
        self.file = file
        self.cacheDirectory = cacheDirectory
    }

    /// Runs the suite on `file`, printing each phase and then the report as JSON lines on stdout (write(2), so a
    /// line is out before the plugin's next call can crash the process). Returns whether the plugin is loadable.
    public static func runPrinting(file: URL, cacheDirectory: URL, view: ViewModel? = nil) -> Bool {
        runPrinting(file: file, cacheDirectory: cacheDirectory, view: view, phases: nil)
    }

    /// `runPrinting`, with the phases stored in a scanner's `PhaseBox` instead of printed when there is one.
    static func runPrinting(file: URL, cacheDirectory: URL, view: ViewModel?, phases: PhaseBox.Writer?) -> Bool {
        LeftoverProcesses.adoptInProbe()
        // A crash in the plugin's code then says where, as a worker's does (`{"faultOffset":N}` on the channel).
        if !CallRecorder.locatesFaultsInLastImage {
            csystem_report_faults(ProbeOutput.descriptor)
            CallRecorder.locatesFaultsInLastImage = true
        }
        var suite = ConformanceSuite(file: file, cacheDirectory: cacheDirectory)
        suite.view = view
        func toStandardOutput(_ bytes: UnsafeRawBufferPointer) { ProbeOutput.write(bytes) }
        // The phase in which the plugin closed or replaced standard error, seen at the start of the next one.
        var phase: ProbePhase?
        var lostStandardError: ProbePhase?
        func note(_ next: ProbePhase) {
            if lostStandardError == nil, !ProbeOutput.standardErrorIntact { lostStandardError = phase }
            phase = next
        }
        if let phases {
            suite.progress = { next in
                note(next)
                phases.store(next)
            }
        } else {
            suite.progress = { next in
                note(next)
                ByteWriter.stream(capacity: 1024, to: toStandardOutput) { out in
                    writePhaseLine(next, to: &out)
                    out.byte(0x0A)
                }
            }
        }
        var report = suite.run()
        if lostStandardError == nil, !ProbeOutput.standardErrorIntact { lostStandardError = phase }
        ProbeOutput.restore()
        if let lost = lostStandardError {
            // As a worker's supervisor says it: the plugin would leave hubhost unable to say what goes wrong.
            report.checks.append(
                .init(
                    name: "standard descriptors", component: lost.component, passed: false, fatal: true,
                    message: "closed descriptors it did not open (hubhost's standard error) in \(lost.phase)"))
        }
        // What plugin code forked and left running ends with the probe (it held a scanner's pipe open), and fails
        // `validate`: a worker ends such processes too, and says so on every run.
        let leftovers = LeftoverProcesses.endInProbe()
        if !leftovers.isEmpty {
            report.checks.append(
                .init(
                    name: "processes left running", component: nil, passed: false, fatal: false,
                    message: "plugin code left \(leftovers.count) process(es) running when its probe ended: "
                        + leftovers.joined(separator: ", ") + "; hubhost ended them"))
        }
        ByteWriter.stream(capacity: 16 << 10, to: toStandardOutput) { ProbeJSON.writeReportLine(report, to: &$0) }
        return report.loadable
    }

    /// A progress line, `{"component":…,"model":…,"phase":…}` (keys sorted, as its Codable form), without the
    /// newline.
    static func writePhaseLine(_ phase: ProbePhase, to out: inout ByteWriter) {
        if let component = phase.component {
            out.write("{\"component\":")
            out.writeJSONString(component)
            out.byte(UInt8(ascii: ","))
        } else {
            out.byte(UInt8(ascii: "{"))
        }
        if let model = phase.model {
            out.write("\"model\":")
            out.writeJSONString(model)
            out.byte(UInt8(ascii: ","))
        }
        out.write("\"phase\":")
        out.writeJSONString(phase.phase)
        out.byte(UInt8(ascii: "}"))
    }

    /// The plugin file names the module files of `folder` bind functions of (`all`) and eager singletons to
    /// (`eager`), read once per folder: a scan probes hundreds of plugins of one folder in one process, and listing
    /// the folder for each cost 20 ms in 200.
    static func boundPlugins(in folder: URL) -> (all: Set<String>, eager: Set<String>) {
        boundPluginsLock.withLock {
            if let known = boundPluginsByFolder[folder.path] { return known }
            var found = (all: Set<String>(), eager: Set<String>())
            for url in ModuleFile.files(in: [folder]) {
                for binding in (try? ModuleFile(contentsOf: url))?.bindings ?? [] {
                    found.all.insert(binding.plugin)
                    if binding.eager { found.eager.insert(binding.plugin) }
                }
            }
            boundPluginsByFolder[folder.path] = found
            return found
        }
    }
    nonisolated(unsafe) private static var boundPluginsByFolder: [String: (all: Set<String>, eager: Set<String>)] = [:]
    private static let boundPluginsLock = Lock()

    /// The phase a probe is in while module files make its eager singletons (a quarantine from it is recorded
    /// against the module files too: fixing the binding clears it).
    public static let eagerSingletonsPhase = "module-file eager singletons"

    public func run() -> ProbeReport {
        var report = ProbeReport(file: file.path, hash: nil)
        func check(_ name: String, _ component: String? = nil, fatal: Bool, _ failure: String?, note: String? = nil) {
            report.checks.append(
                .init(
                    name: name, component: component, passed: failure == nil, fatal: fatal,
                    message: failure ?? note))
        }
        func phase(_ name: String, _ component: String? = nil) {
            progress(ProbePhase(phase: name, component: component))
        }
        func modelPhase(_ name: String, _ component: String?, _ model: String?) {
            progress(ProbePhase(phase: name, component: component, model: model))
        }

        phase("validate")
        let image: PluginImageInfo
        do {
            image = try ELFInspector.inspect(file)
            report.hash = image.contentHash
            check("ELF image", fatal: true, nil)
        } catch {
            report.hash = ContentDigest.of(file: file)
            check("ELF image", fatal: true, "\(error)")
            return report
        }

        phase("init")
        // Always in a child that exits after the suite: its private copy needs no file. It is made from the bytes
        // just checked (one read of the file, and what is exercised is exactly what was hashed).
        let host = PluginHost(cacheDirectory: cacheDirectory, logger: logger, copiesInMemory: true)
        host.inspected[file.path] = image
        // A crash or hang is named by the step it happened in: the image's constructors, the entry point, init.
        host.loadStep = { phase($0) }
        let record = host.load(file: file)
        host.loadStep = nil
        phase("init")
        guard record.isLoaded else {
            check("descriptor and init", fatal: true, record.reason ?? "not loaded (\(record.state))")
            return report
        }
        report.plugin = .init(
            id: record.id ?? "", name: record.name, version: record.version ?? "",
            abi: record.abi ?? "", swift: record.isSwiftImage)
        if let damage = record.damagedProcess {
            check(
                "process left usable", fatal: true,
                damage + " (every process that loads it would cut its outputs: a plugin must leave the limit alone)")
            return report
        }
        var descriptorProblems: [String] = []
        if (record.id ?? "").isEmpty { descriptorProblems.append("empty id") }
        if (record.version ?? "").isEmpty { descriptorProblems.append("empty version") }
        if (record.name ?? "").isEmpty { descriptorProblems.append("empty name") }
        check(
            "descriptor and init", fatal: false,
            descriptorProblems.isEmpty ? nil : descriptorProblems.joined(separator: ", "),
            note: "\(record.id ?? "?") \(record.version ?? "?"), ABI \(record.abi ?? "?")")

        // The eager singletons module files beside it make from its functions as it loads, in every command: made
        // here too, so a build whose singleton crashes is quarantined before `hubhost dev` swaps it in for one
        // that works. A binding that cannot be made here (it requires another plugin's key) is not this check's.
        let name = file.lastPathComponent
        let folder = file.deletingLastPathComponent()
        let makesEager = Self.boundPlugins(in: folder).eager.contains(name)
        if makesEager {
            phase(ConformanceSuite.eagerSingletonsPhase)
            host.services.willMakeEagerSingleton = { modelPhase(ConformanceSuite.eagerSingletonsPhase, nil, $0) }
            defer { host.services.willMakeEagerSingleton = nil }
            let problems = host.services.loadModuleFiles(in: [folder]).filter {
                $0.reason.hasPrefix("eager singleton:") && !$0.reason.contains("no binding")
            }
            check(
                "module-file eager singletons", fatal: false,
                problems.isEmpty ? nil : problems.map(\.description).joined(separator: "; "))
        }

        report.namespaces = record.namespaces.map { .init(namespace: $0.namespace, components: $0.components) }
        // A plugin that offers nothing at all is most often an init that forgot to register (it loads, and every
        // component of its namespace falls back without a word about it). One whose functions a module file beside
        // it binds offers those.
        let offersNothing =
            report.namespaces.isEmpty && !host.actionFactories.allEntries.contains { $0.owner == record.owner }
            && !host.actionHandlers.contains { $0.owner == record.owner }
            && !host.layoutManagers.allEntries.contains { $0.owner == record.owner }
            && !host.services.registry.registrations.contains { $0.owner == record.owner }
            && !Self.boundPlugins(in: folder).all.contains(name)
        check(
            "registers components", fatal: false,
            offersNothing
                ? "registers nothing: no component or action factory, action handler, layout manager or service, and "
                    + "no module file beside it binds its functions (does init call register_component_factory?)"
                : nil,
            note: report.namespaces.isEmpty ? "registers no component factory" : nil)

        for namespace in report.namespaces {
            for name in namespace.components {
                exercise(
                    ComponentIdentifier(namespace: namespace.namespace, name: name), host: host,
                    check: check, phase: modelPhase)
            }
        }

        exerciseRegistrations(of: record, host: host, phase: phase, check: check)
        if let view { exerciseView(view, record: record, host: host, phase: phase, check: check) }
        // NaN, infinite or absurd sizes, frames and fonts: the host replaces them and every command that meets them
        // ends "with problems", so validate fails what render would say (the plugin still loads).
        let replaced = BoundaryValues.replacedLines
        check(
            "values handed to the host", fatal: false,
            replaced.isEmpty
                ? nil
                : replaced.prefix(5).map { $0.replacing("hubhost: ", with: "", maxReplacements: 1) }
                    .joined(separator: "; ") + (replaced.count > 5 ? "; … and \(replaced.count - 5) more" : ""))

        phase("unload")
        let unload = host.unload(record)
        switch unload.outcome {
        case .unloaded, .pinned: check("unload", fatal: false, nil, note: unload.description)
        case .stillMapped(let detail): check("unload", fatal: false, "still mapped after dlclose: \(detail)")
        case .notLoaded: check("unload", fatal: false, "was not loaded")
        }
        if record.liveComponentCount > 0 {
            check("unload", fatal: false, "\(record.liveComponentCount) components still alive after unload")
        }
        return report
    }

    /// Runs every component check on one component identifier.
    private func exercise(
        _ identifier: ComponentIdentifier, host: PluginHost,
        check: (String, String?, Bool, String?, String?) -> Void,
        phase report: (String, String?, String?) -> Void
    ) {
        func phase(_ name: String, _ component: String?, model: String? = nil) { report(name, component, model) }
        let id = identifier.description
        let models = SampleModels.models(for: identifier)
        func make() -> PluginComponent? { Self.created(identifier, category: "row", host: host) }

        phase("create", id)
        let refusalsBefore = BoundaryValues.refusals
        guard let component = make() else {
            // The host may have refused what the factory made (a class table too short): that is the reason.
            let refused = BoundaryValues.refusals > refusalsBefore ? BoundaryValues.lastRefusal : nil
            check(
                "create", id, true, refused ?? "the factory lists '\(identifier.name)' but creates nothing for it", nil)
            return
        }
        check("create", id, true, nil, nil)

        phase("layout_traits", id)
        let traits = component.layoutTraits
        check("layout traits", id, false, nil, traits.map(\.description).sorted().joined(separator: ","))

        phase("get_extension", id)
        check("extension tables", id, true, incompleteExtensions(component), nil)

        // Preferred sizes from the raw C call: the bridge sanitises what plugins return, the suite must not.
        phase("size", id)
        var badSizes: [String] = []
        if let preferred = component.klass.pointee.preferred_view_size {
            for model in models {
                for container in SampleModels.containerSizes {
                    let size = preferred(component.instance, CInterop.handle(model), CInterop.size(container))
                    if !(size.width.isFinite && size.height.isFinite && size.width >= 0 && size.height >= 0) {
                        badSizes.append("\(model.identifier) in \(container): \(size.width)×\(size.height)")
                    }
                }
            }
        } else {
            badSizes.append("preferred_view_size is NULL")
        }
        check(
            "preferred size finite and non-negative", id, false,
            badSizes.isEmpty ? nil : badSizes.prefix(3).joined(separator: "; "), nil)

        phase("load_view", id)
        component.loadView()

        let container = SampleModels.containerSizes[0]
        var drawProblems: [String] = []
        // A phase per call, with the sample model: a crash is then named "in draw … for sample model "full"",
        // not "in configure".
        for model in models {
            phase("configure", id, model: model.identifier)
            component.configureView(with: model, containerSize: container)
            phase("size", id, model: model.identifier)
            let size = component.preferredViewSize(for: model, containerSize: container)
            let view = ViewBuilder()
            phase("draw", id, model: model.identifier)
            component.drawView(into: view, size: size)
            for item in view.items where !Self.isFinite(item) {
                drawProblems.append("\(model.identifier): non-finite drawing \(item)")
            }
            if model !== models.last {
                phase("prepare_for_reuse", id, model: model.identifier)
                component.prepareViewForReuse()
            }
        }
        check(
            "configure and draw every sample model", id, false,
            drawProblems.isEmpty ? nil : drawProblems.prefix(3).joined(separator: "; "), "\(models.count) models")

        phase("reuse", id)
        component.prepareViewForReuse()
        component.configureView(with: models[0], containerSize: container)
        component.drawView(
            into: ViewBuilder(), size: component.preferredViewSize(for: models[0], containerSize: container))
        check("reuse with another model", id, false, nil, nil)

        exerciseExtensions(
            component, model: models[0], container: container, id: id, phase: { phase($0, $1) }, check: check)

        if let selection = component.selectionStateHandling {
            phase("selectionState", id)
            for state in [SelectionState.highlighted, .selected, .none] { selection.updateViewForSelectionState(state) }
            check("selection state", id, false, nil, nil)
        }

        if let state = component.restorableUIState {
            phase("uiState", id)
            let saved = state.currentUIState
            var failure: String?
            if let saved, let other = make() {
                other.loadView()
                other.configureView(with: models[0], containerSize: container)
                other.restorableUIState?.restoreUIState(saved)
                let restored = other.restorableUIState?.currentUIState
                if restored != saved {
                    failure =
                        "saved \(saved.debugDescription), a new instance restored from it reports "
                        + "\(restored.debugDescription)"
                }
                other.destroy()
            }
            check("UI state round trip", id, false, failure, saved == nil ? "no state to round-trip" : nil)
        }

        phase("destroy", id)
        component.destroy()

        exerciseStories(identifier, host: host, container: container, phase: report, check: check)
    }

    /// The showcase extension's stories, as `gallery` and `snapshot --gallery` use them: each read, decoded as a
    /// component model and drawn by a fresh instance. No check when the component has no stories.
    private func exerciseStories(
        _ identifier: ComponentIdentifier, host: PluginHost, container: Size,
        phase: (String, String?, String?) -> Void, check: (String, String?, Bool, String?, String?) -> Void
    ) {
        let id = identifier.description
        phase("stories", id, nil)
        let stories = Showcase.pluginStories(identifier, host: host)
        guard !stories.isEmpty else { return }
        var problems = stories.compactMap { story in story.problem.map { "\(story.name): \($0)" } }
        // What `gallery` and `snapshot` fail a story for, so that a plugin `validate` passes passes them too.
        var goldenNames: [String: String] = [:]
        for story in stories {
            let safe = Showcase.Shot.safe(story.name)
            if let other = goldenNames[safe], other != story.name {
                problems.append(
                    "stories \(TerminalText.quoted(other)) and \(TerminalText.quoted(story.name)) would share the "
                        + "golden file \(safe) (rename one)")
            }
            goldenNames[safe] = story.name
        }
        for story in stories where story.problem == nil {
            guard let decoded = Showcase.decodedView(of: story), !decoded.viewModel.body.isEmpty else {
                problems.append("\(story.name): its model_json is not a component model")
                continue
            }
            problems += Showcase.warnings(
                of: story, decoded: decoded, registry: host.registry, servedNamespacesOnly: true
            ).map { "\(story.name): \($0)" }
            // Drawn as `hubhost gallery` draws it: through a render pipeline (sizing, a live instance, draw), at
            // each of its own widths (a component may fail only at one).
            for width in story.drawnWidths([container.width]) {
                phase("drawing a story", id, story.name)
                let pipeline = RenderPipeline(registry: host.registry)
                pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: true)
                _ = pipeline.render(decoded.viewModel, viewport: Size(width: width, height: 667))
                pipeline.tearDown()
            }
        }
        check(
            "stories read and drawn", id, false,
            problems.isEmpty
                ? nil
                : problems.prefix(3).joined(separator: "; ")
                    + (problems.count > 3 ? "; … and \(problems.count - 3) more (hubhost gallery lists them)" : ""),
            "\(stories.count) stories")
    }

    /// Every function pointer a plugin's extension table covers must be set: the host calls them unchecked.
    private func incompleteExtensions(_ component: PluginComponent) -> String? {
        let known: [(String, Int)] = [
            (HUB_EXT_CHILDREN, MemoryLayout<hub_children_ext>.size),
            (HUB_EXT_IMAGE_HANDLING, MemoryLayout<hub_image_handling_ext>.size),
            (HUB_EXT_UI_STATE, MemoryLayout<hub_ui_state_ext>.size),
            (HUB_EXT_SELECTION_STATE, MemoryLayout<hub_selection_state_ext>.size),
            (HUB_EXT_CONTENT_OFFSET_OBSERVER, MemoryLayout<hub_content_offset_observer_ext>.size),
            (HUB_EXT_VIEW_OBSERVER, MemoryLayout<hub_view_observer_ext>.size),
            (HUB_EXT_ACTION_PERFORMER, MemoryLayout<hub_action_performer_ext>.size),
            (HUB_EXT_ACTION_OBSERVER, MemoryLayout<hub_action_observer_ext>.size),
        ]
        var problems: [String] = []
        for (id, size) in known {
            // Every extension table is `uint32_t struct_size` (padded to 8) followed by function pointers.
            guard let table = component.extensionTable(id, as: UInt8.self) else { continue }
            let raw = UnsafeRawPointer(table)
            let structSize = Int(raw.load(as: UInt32.self))
            if structSize < 8 + 8 {
                problems.append("\(id): struct_size \(structSize) covers no function")
                continue
            }
            for offset in stride(from: 8, to: min(structSize, size), by: 8)
            where raw.load(fromByteOffset: offset, as: UInt.self) == 0 {
                problems.append("\(id): function #\((offset - 8) / 8 + 1) is NULL")
            }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    private static func isFinite(_ item: DrawItem) -> Bool {
        func finite(_ r: Rect) -> Bool { [r.x, r.y, r.width, r.height].allSatisfy(\.isFinite) }
        switch item {
        case .rect(let r, _), .text(let r, _, _), .image(let r, _, _, _), .child(let r, _): return finite(r)
        }
    }
}
