import Dispatch
import FoundationEssentials
import HubCore

/// What the preview's workbench asks of the dev loop beyond reloading: the view at more widths, a component's
/// details, and edits made in the page (in memory; the view file is never written).
extension DevLoop {
    /// A component as the inspector shows it.
    public struct Inspection: Codable, Sendable {
        public var section: String
        public var indexPath: [Int]
        public var id: String
        public var component: String
        public var category: String
        /// Who made it: the plugin id, or "fallback (category)".
        public var source: String
        public var traits: [String]
        public var frame: Rect?
        public var selectionState: String
        public var uiState: String?
        /// The component model as Hub JSON (pretty enough to edit: one line).
        public var model: String
    }

    /// The view drawn at each extra width (one-shot pipelines: instances are not kept between renders).
    func extraDrawings() -> [(width: Double, tree: RenderTree)] {
        guard let viewModel else { return [] }
        return options.extraWidths.map { width in
            let pipeline = RenderPipeline(registry: host.registry)
            pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: true)
            let tree = pipeline.render(viewModel, viewport: Size(width: width, height: options.viewport.height))
            pipeline.tearDown()
            return (width, tree)
        }
    }

    /// The view as the page's edits left it (Hub JSON text), or nil when it is the file's: what a worker that
    /// replaces a crashed one starts from, so edits in memory outlive the crash.
    public var editedViewJSON: String? {
        guard isEditedInMemory, let viewModel else { return nil }
        return viewModel.hubJSON.jsonText
    }

    /// The view drawn now (Hub JSON text), whatever it came from.
    public var shownViewJSON: String? { viewModel?.hubJSON.jsonText }

    /// Draws the view at these widths beside the interactive one, from now on. Call on `queue`.
    public func setExtraWidths(_ widths: [Double]) { setWidths(extra: widths, interactive: nil) }

    /// From now on draws the interactive view `interactive` points wide (as `--width`) and the view at `extra`
    /// widths beside it; nil leaves that one as it is. The interactive view is laid out again at its new width,
    /// as a device turned on its side: instances and UI states carry over. Call on `queue`.
    public func setWidths(extra: [Double]?, interactive: Double?) {
        host.adoptCurrentThread()
        if let extra {
            options.extraWidths = Array(extra.filter { InputLimits.containerWidths.contains($0) }.prefix(6))
        }
        if let interactive, InputLimits.containerWidths.contains(interactive) { options.viewport.width = interactive }
        let extra = options.extraWidths.map(Self.widthText).joined(separator: ", ")
        render(
            Reload(
                file: viewName, result: .widths,
                detail: Self.widthText(options.viewport.width) + (extra.isEmpty ? "" : " + [\(extra)]")))
    }

    /// A width as the terminal and the page say it: 414, 414.5.
    public static func widthText(_ width: Double) -> String { String(printf: "%g", width) }

    /// The live component at `indexPath` of `section` (as the page names it: the header's path starts with 0).
    public func inspect(indexPath: [Int], section: String) -> Inspection? {
        host.adoptCurrentThread()
        let type = ComponentType(rawValue: section == "overlays" ? "overlay" : section) ?? .body
        let path = type == .header ? Array(indexPath.dropFirst()) : indexPath
        // In a large view only components near the view's place are live: one another page shows is scrolled to.
        if type == .body, isWindowed, engine?.wrapper(at: path, section: type) == nil {
            scrollOnScreen(bodyIndex: path.first)
        }
        guard let engine, let wrapper = engine.wrapper(at: path, section: type), let model = wrapper.model else {
            return nil
        }
        let source: String
        switch wrapper.source {
        case .factory(_, let owner): source = host.plugins.first { $0.owner == owner }?.id ?? owner.displayName
        case .fallback(let category): source = "fallback (\(category))"
        }
        let node = pipeline.lastTree?.allNodes.first {
            $0.modelID == model.identifier && $0.indexPath == model.indexPath
        }
        return Inspection(
            section: type.rawValue, indexPath: indexPath, id: model.identifier,
            component: model.componentIdentifier.description, category: model.componentCategory, source: source,
            traits: wrapper.layoutTraits.sortedNames, frame: node?.frame,
            selectionState: wrapper.selectionState.description,
            uiState: wrapper.component.restorableUIState?.currentUIState, model: model.hubJSON.jsonText)
    }

    /// Replaces the model at `indexPath` of `section` with `modelJSON` (a Hub JSON component model) in the view
    /// held in memory, and renders. The view file is not written: the next save of the file replaces the edit.
    /// Returns nil when done, else what is wrong.
    public func edit(indexPath: [Int], section: String, modelJSON: String) -> String? {
        host.adoptCurrentThread()
        guard let viewModel else { return "no view to edit" }
        guard case .object(let replacement)? = try? JSONValue.parse(modelJSON) else {
            return "the model is not a JSON object"
        }
        let type = ComponentType(rawValue: section == "overlays" ? "overlay" : section) ?? .body
        guard case .object(var view) = viewModel.hubJSON else { return "the view cannot be edited" }
        let path = type == .header ? Array(indexPath.dropFirst()) : indexPath

        /// `value` with the model at `path` (child indexes) replaced.
        func replaced(_ value: JSONValue, _ path: ArraySlice<Int>) -> JSONValue? {
            guard let index = path.first else { return .object(replacement) }
            guard case .object(var object) = value, case .array(var children)? = object["children"],
                children.indices.contains(index), let child = replaced(children[index], path.dropFirst())
            else { return nil }
            children[index] = child
            object["children"] = .array(children)
            return .object(object)
        }
        switch type {
        case .header:
            guard let header = view["header"], let edited = replaced(header, path[...]) else {
                return "no such component"
            }
            view["header"] = edited
        case .body, .overlay:
            let key = type == .body ? "body" : "overlays"
            guard case .array(var list)? = view[key], let first = path.first, list.indices.contains(first),
                let edited = replaced(list[first], path.dropFirst())
            else { return "no such component" }
            list[first] = edited
            view[key] = .array(list)
        }
        do {
            let decoded = try ViewModelDecoder(file: options.gallery ? nil : options.viewFile.lastPathComponent)
                .decode(Data(JSONValue.object(view).jsonText.utf8))
            self.viewModel = decoded.viewModel
            isEditedInMemory = true
            // A story has no file: its edit lasts until the page goes back to the sheet.
            let kept =
                options.gallery ? "in memory, until the sheet is shown again" : "in memory; save the file to keep it"
            render(Reload(file: viewName, result: .edited, detail: "\(type.rawValue) \(indexPath) (\(kept))"))
            return decoded.issues.first.map(\.description)
        } catch {
            return "\(error)"
        }
    }
}

extension DevLoop {
    /// Changed plugin files, settled together (a build of several plugins): their probes (child processes, up to
    /// the probe timeout each) run off the loop's queue, so taps, view edits and the page are served meanwhile; the
    /// loads and swaps come back to the queue, and the view is drawn once for all of them (200 plugins rebuilt at
    /// once were 200 renders of the view, the last 20 s after the build). When a file changes again before its
    /// probe is done, only its latest change is applied.
    func probeThenLoad(_ changes: [FileChange]) {
        var generations: [String: Int] = [:]
        for change in changes {
            probeGenerations[change.url.path, default: 0] += 1
            generations[change.url.path] = probeGenerations[change.url.path]
        }
        // Builds refused for their permissions are never run, not even in a probe: applied (and said) at once, as
        // every build is when probing is off.
        var unprobed: [FileChange] = []
        var toProbe: [FileChange] = []
        for change in changes {
            if reloader.gate == nil || host.trust.refusal(of: change.url) != nil {
                unprobed.append(change)
            } else {
                toProbe.append(change)
            }
        }
        if !unprobed.isEmpty {
            renderPluginReloads(unprobed.map { reloader.pluginChanged($0, aroundSwap: keepingUIStates) })
        }
        guard let gate = reloader.gate, !toProbe.isEmpty else { return }
        onActivity("probing " + Self.names(of: toProbe))
        nextProbeBatch += 1
        let batchNumber = nextProbeBatch
        probeBatchesInFlight[batchNumber] = generations.filter { path, _ in toProbe.contains { $0.url.path == path } }
        let queue = options.queue
        let target = WeakLoop(self)
        let (batch, latest) = (toProbe, generations)
        // Each verdict comes back as its probe ends: a build that probes fast is not held by one that hangs. On a
        // thread of its own: it only waits, and batches blocking Dispatch's pool each waited for it to grow (a
        // thread a second: a good build behind eight that hang waited 4 s to start its probe).
        let coordinate: @Sendable () -> Void = {
            Self.probe(batch, with: gate) { index, verdict in
                queue.async {
                    guard let loop = target.loop else { return }
                    let path = batch[index].url.path
                    loop.probeBatchesInFlight[batchNumber]?[path] = nil
                    if loop.probeBatchesInFlight[batchNumber]?.isEmpty == true {
                        loop.probeBatchesInFlight[batchNumber] = nil
                    }
                    loop.probedBuilds.append((change: batch[index], verdict: verdict, generation: latest[path]!))
                    loop.loadWhenProbesSettle()
                }
            }
        }
        if !Threads.detach(name: "hubhost-probes", coordinate) { DispatchQueue.global().async(execute: coordinate) }
    }

    /// Loads the probed builds once no probe of a current build runs (the builds of one parallel build settle a
    /// little apart: the view is drawn once for all of them, not once per settling), or a second after the first
    /// one waited, whichever comes first: a probe that hangs runs for the whole probe timeout, and a batch of them
    /// held a good build for 20 s. Not for a probe of a build since replaced: a fix saved after a build that hangs
    /// waited out the hang's probe.
    private func loadWhenProbesSettle() {
        let waitedFor = probeBatchesInFlight.values.contains { files in
            files.contains { path, generation in probeGenerations[path] == generation }
        }
        guard waitedFor else { return loadProbedBuilds() }
        guard !probedLoadScheduled else { return }
        probedLoadScheduled = true
        let target = WeakLoop(self)
        options.queue.asyncAfter(deadline: .now() + 1) {
            guard let loop = target.loop else { return }
            loop.probedLoadScheduled = false
            loop.loadProbedBuilds()
        }
    }

    /// Loads and swaps in every probed build (the latest change of each file), then draws the view once.
    private func loadProbedBuilds() {
        // Only the latest change of each file: a newer one has its own probe running, or landed after this one.
        let current = probedBuilds.filter { probeGenerations[$0.change.url.path] == $0.generation }
        probedBuilds = []
        guard !current.isEmpty else { return }
        host.adoptCurrentThread()
        onActivity("loading " + Self.names(of: current.map(\.change)))
        renderPluginReloads(
            current.map { reloader.pluginChanged($0.change, verdict: $0.verdict, aroundSwap: keepingUIStates) })
        onActivity(nil)
    }

    /// Probes `changes` with the gate, four times as many at a time as it runs, each lane taking the next file when
    /// it is free (a probe that hangs only waits: a hundred builds that hang, two at a time, took minutes, and a good
    /// build behind them waited its turn), telling `done` of each verdict (by index) as it comes.
    private static func probe(
        _ changes: [FileChange], with gate: ProbeGate, done: @escaping @Sendable (Int, ProbeGate.Verdict) -> Void
    ) {
        Threads.forEachIndex(changes.count, lanes: max(1, gate.parallelism) * 4, name: "hubhost-probe") { index in
            done(index, gate.check(changes[index].url))
        }
    }

    /// "libx.so", or "libx.so and 4 more".
    static func names(of changes: [FileChange]) -> String {
        let first = changes.first?.url.lastPathComponent ?? ""
        return changes.count > 1 ? "\(first) and \(changes.count - 1) more" : first
    }
}
