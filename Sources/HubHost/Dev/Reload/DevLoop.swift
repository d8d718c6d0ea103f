import Dispatch
import FoundationEssentials
import HubCore
import Logging

/// The development loop behind `hubhost dev`: watches the plugin folders and the view file, probes every new
/// plugin build in a child process, swaps it in beside the old version, and re-renders the view.
///
/// A reload, step by step: the watcher reports a settled file (quiet period over, completely written, new
/// content) → the probe gate runs the conformance suite in a child (a crash, hang or failure quarantines that
/// version and the old one keeps serving) → the new version is loaded beside the old one (its registrations held
/// back) → only when its init succeeded: the UI state of live components is saved, the old version unloaded (C:
/// `dlclose`d, Swift: retired, kept mapped), the new registrations applied → the view re-renders and restores
/// the states. A deleted plugin is unloaded and its components fall back.
///
/// # Thread safety
/// Everything runs on `queue` (the main queue in `hubhost dev`): plugin calls, rendering and `onRender`.
public final class DevLoop {
    public struct Options {
        public var pluginFolders: [URL]
        public var viewFile: URL
        /// Private image copies (PluginHost's cache); nil for the default.
        public var imageCacheDirectory: URL?
        public var quietPeriod: Double = 0.15
        public var probeTimeout: Double = 5
        /// Probe new builds in a child process before loading them (off only for measurements).
        public var probe = true
        /// Warn when retired (still mapped) Swift images take more than this many bytes.
        public var retiredMemoryBudget = 256 << 20
        public var viewport = Size(width: 375, height: 667)
        /// Which local image files the view may use; nil: its own folder.
        public var imageAccess: ImageAccess?
        /// Which plugin files may load (checked again for every new build), and who wins a contested namespace.
        public var trust = PluginTrust()
        public var preferredPluginIDs: Set<String> = []
        public var queue = DispatchQueue.main
        /// More widths to draw the view at, beside the interactive one (the viewport's).
        public var extraWidths: [Double] = []
        /// Show every story of every loaded plugin instead of a view (`hubhost dev --gallery`).
        public var gallery = false
        /// Gallery mode: the story open on its own canvas (nil: the sheet of every story).
        public var openStory: StoryKey?
        /// Start the file watchers (off when a caller feeds `handle(_:)` itself, as the benchmark does).
        public var watch = true
        /// UI states to restore at start, by model id (a worker taking over from one that faulted).
        public var initialUIStates: [String: String] = [:]
        /// The view as the page's edits left it in the worker before this one (nil: the file's), drawn from the
        /// first render.
        public var editedViewText: String?
        /// The view file's text as the worker before this one last read it whole: drawn when the file cannot be
        /// read at start (saved half-written, moved away), so a restart keeps showing the last good view.
        public var lastGoodViewText: String?
        /// Put every component's UI state in each `Output` (for a supervisor that keeps a copy).
        public var reportUIStates = false
        /// File versions quarantined earlier in this session (by a worker's supervisor).
        public var quarantinedVersions: [QuarantineRecord] = []

        public init(pluginFolders: [URL], viewFile: URL) {
            self.pluginFolders = pluginFolders
            self.viewFile = viewFile
        }
    }

    /// What one reload did, as the terminal prints it: plugin, version, result, latency.
    public struct Reload: Sendable, CustomStringConvertible {
        public enum Result: String, Sendable {
            case initial, loaded, swapped, quarantined, rejected, unloaded
            case viewUpdated = "view updated"
            case
                viewError = "view error"
            case tapped
            case unchanged
            /// The file changed again while it was being loaded: the next settled write is loaded.
            case waiting = "not loaded yet"
            case edited = "edited in the page"
            case widths = "widths changed"
            /// The page scrolled a large view: the part near its viewport is drawn (no terminal line).
            case scrolled
            /// Gallery mode: a story was opened on its canvas, or the sheet shown again.
            case story
        }
        public var file: String
        public var version: String?
        public var previousVersion: String?
        public var result: Result
        public var detail: String?
        /// Monotonic times: the last inotify event of the file, when it settled, when the render was ready.
        public var lastEventAt: Double?
        public var settledAt: Double?
        public var renderedAt: Double = 0
        /// From the settled file to the finished render (the quiet period excluded).
        public var latency: Double? { settledAt.map { renderedAt - $0 } }
        /// The quiet period and any wait for an unfinished file.
        public var quiet: Double? { settledAt.flatMap { s in lastEventAt.map { s - $0 } } }

        public var description: String {
            var line = file
            if let version { line += " " + (previousVersion.map { "\($0) → " } ?? "") + version }
            line += ": \(result.rawValue)"
            if let latency { line += String(printf: " in %.1f ms", latency * 1000) }
            // The wait for the file to settle, when there was one (a rename lands at once: nothing to say).
            if let quiet, quiet >= 0.0005 { line += String(printf: " (+%.0f ms quiet)", quiet * 1000) }
            if let detail { line += " — \(detail)" }
            return line
        }
    }

    /// One plugin file as the preview's plugin panel lists it.
    public struct PluginRow: Codable, Sendable {
        public var file: String
        public var id: String?
        public var version: String?
        /// The first 12 hex digits of the content digest: which build is serving.
        public var build: String?
        /// active, pinned, retired, rejected, quarantined, unloaded.
        public var state: String
        public var reason: String?
        /// "namespace: name, name".
        public var namespaces: [String]
        /// Wall-clock time of the load, ISO 8601, and how long it took (ms).
        public var loadedAt: String?
        public var loadMilliseconds: Double?
    }

    /// A render and what led to it.
    public struct Output {
        public let sequence: Int
        public let tree: RenderTree?
        public let viewIssues: [String]
        public let quarantines: [QuarantineRecord]
        public let reload: Reload
        /// Reloads of the same batch before `reload` (plugins rebuilt together), drawn in this render too.
        public let earlierReloads: [Reload]
        /// `earlierReloads` and `reload`, in order.
        public var reloads: [Reload] { earlierReloads + [reload] }
        public let tapped: [Int]?
        /// The section of `tapped` ("body", "header", "overlay").
        public let tappedSection: String?
        public let warnings: [String]
        /// What `hubhost render` warns of for the view with the plugins now loaded: images it refuses, component
        /// ids no plugin provides, ids used twice. Shown in the page; printed with a render the view or a plugin
        /// caused (not with every tap).
        public let viewWarnings: [String]
        /// Every plugin file the session knows, latest version first per file.
        public let plugins: [PluginRow]
        /// UI states by model id (with `Options.reportUIStates`).
        public let uiStates: [String: String]
        /// The same view at the other widths of `Options.extraWidths` (static drawings beside the interactive one).
        public let extras: [(width: Double, tree: RenderTree)]
        /// Gallery mode: every story of every loaded plugin, drawn again after every reload.
        public let gallery: [Showcase.Shot]?
        /// For a view of more than `DevLoop.windowedBodyCount` body components: the range of content y the tree
        /// covers (its body holds only the components there); nil when the whole view is drawn.
        public var window: ClosedRange<Double>? = nil
        /// The number of body components of the view.
        public var bodyCount = 0
        /// The interactive view's width (in gallery mode, the sheet's first width).
        public var viewWidth: Double = 0
        /// The bytes a plugin's image loader supplied for the view's remote images (see `ImageResolver.supplied`).
        public var suppliedImages: (String) -> [UInt8]? = { _ in nil }
        /// The widths drawn beside the interactive one (in gallery mode, the sheet's other widths).
        public var extraWidths: [Double] = []
        /// The page whose scroll this render answers (`scrolled` renders).
        public var scrolledBy: String? = nil
        /// Gallery mode: the story open on its canvas (`tree` is it); nil with the sheet (`gallery`).
        public var openStory: StoryKey? = nil
    }

    public internal(set) var options: Options
    public let host: PluginHost
    public let pipeline: RenderPipeline
    /// Called on `queue` after every render.
    public var onRender: (Output) -> Void = { _ in }
    /// Told on `queue` when the view file was read and decoded, before it is drawn, with its text (nil when it is
    /// too large to keep): a supervisor that learns only afterwards would name a crash's model from the old view.
    public var onViewRead: (String?) -> Void = { _ in }
    /// Told on `queue` when a reload starts (what it does) and ends (nil), so a page can show that work is going on.
    public var onActivity: (String?) -> Void = { _ in }
    /// A module file (`*.modules.json`) beside the plugins changed. Its bindings are made as plugins load, so a
    /// supervised worker is replaced by a fresh one (the page's state goes with it); nil: said, in-process.
    public var onModuleFilesChanged: ((URL) -> Void)?

    let reloader: PluginReloader
    /// The providers (key and owner) after the last swap, or the start.
    var providersAtLastSwap: Set<String> = []
    /// Every service and binding, as key and owner.
    private var currentProviders: Set<String> { Set(host.services.registrations.map { "\($0.key) \($0.owner.id)" }) }
    /// Per plugin path, the latest change whose probe is running (older ones are dropped when they finish).
    var probeGenerations: [String: Int] = [:]
    /// Batches of builds whose probes run now, and the builds already probed that wait for them to be loaded too.
    /// The probe batches running, by number: the generation of each file each probes.
    var probeBatchesInFlight: [Int: [String: Int]] = [:]
    var nextProbeBatch = 0
    var probedBuilds: [(change: FileChange, verdict: ProbeGate.Verdict, generation: Int)] = []
    /// A load of the probed builds is scheduled (see `loadWhenProbesSettle`).
    var probedLoadScheduled = false
    private let logger: Logger
    private var watchers: [FileWatcher] = []
    var viewModel: ViewModel?
    /// The page edited the view in memory since the file was last read.
    var isEditedInMemory = false
    /// Gallery mode: what is wrong with the open story that still lets it draw (the page's warnings).
    var openStoryWarnings: [String] = []
    /// The view file's text when it last decoded (nil over `lastGoodViewLimit`): what a next worker is handed.
    public private(set) var lastGoodViewText: String?
    /// Larger views are not carried to a next worker (the channel would copy them on every change).
    static let lastGoodViewLimit = 16 << 20
    private var viewIssues: [String] = []
    /// The decoder's notes on the view (ids used twice), shown with the warnings.
    private var viewNotes: [String] = []
    /// The view's warnings as of the last render that changed the view or the plugins (`Output.viewWarnings`).
    private var viewWarnings: [String] = []

    /// What `hubhost render` warns of for the view with the plugins loaded now: images it refuses or cannot find,
    /// component ids no plugin provides, ids used twice.
    private func currentViewWarnings() -> [String] {
        guard let viewModel else { return viewNotes }
        let file = options.viewFile.lastPathComponent
        let access = options.imageAccess ?? ImageAccess(viewFile: options.viewFile)
        return viewNotes + access.problems(in: viewModel, file: file).map(\.description)
            + access.placeholderWarnings(in: viewModel, file: file).map(\.description)
            + UnresolvedComponents.problems(
                in: viewModel, registry: host.registry, file: file, unavailable: host.unavailableNamespaces
            ).prefix(100)
            .map(\.description)
    }
    private var sequence = 0
    /// A view with more body components than this is drawn in the preview near where the page is scrolled only
    /// (and scrolling the page scrolls the view, as a device would): drawing and sending every component of a
    /// 100k-component view made an 87 MB page that took minutes to show and seconds per tap.
    public static let windowedBodyCount = 2_000
    /// The page's visible height in view points, as its last scroll said (0: not said yet).
    var pageHeight: Double = 0
    /// Whether the view is drawn in windows (`windowedBodyCount`).
    public var isWindowed: Bool { !options.gallery && (viewModel?.body.count ?? 0) > Self.windowedBodyCount }
    /// Viewport heights live above and below the viewport in a windowed view: the page's height and half as much
    /// again below the top it scrolled to, and as much above. The page asks again when it comes within half its
    /// height of an edge, so an answer must reach further than that (with less, some window heights asked for
    /// ever).
    private var windowBuffer: Double {
        let viewport = max(1, options.viewport.height)
        return max(1, (1.5 * pageHeight / viewport).rounded(.up) + 1)
    }
    /// The page whose scroll the last render answers (its own id, echoed in the frame).
    var scrollingPage: String?
    /// The content y a windowed view's tree covers: the engine's live range.
    private func window(of engine: EventEngine) -> ClosedRange<Double> {
        let buffer = options.viewport.height * engine.bufferFraction
        let top = engine.contentOffset.y
        return max(0, top - buffer)...(top + options.viewport.height + buffer)
    }
    /// The tree a render sends: the whole view, or in a windowed view the part near the viewport.
    private func currentTree(_ engine: EventEngine) -> RenderTree {
        isWindowed ? engine.renderTree(bodyWithin: window(of: engine)) : engine.renderTree()
    }
    private var tapped: [Int]?
    private var tappedSection: String?
    /// The event pipeline over the current render: taps from the preview go through it (selection states with
    /// Hub's delays, the selection action, action handlers and observers).
    var engine: EventEngine?
    public init(options: Options, logger: Logger = Logger(label: "hubhost.dev")) {
        self.options = options
        self.logger = logger
        self.host = PluginHost(cacheDirectory: options.imageCacheDirectory, logger: logger)
        host.trust = options.trust
        host.preferredPluginIDs = options.preferredPluginIDs
        host.quarantinedVersions = options.quarantinedVersions
        self.pipeline = RenderPipeline(registry: host.registry)
        let gate =
            options.probe
            ? ProbeGate.standard(
                cacheDirectory: ProbeGate.defaultCacheDirectory(imagesDirectory: options.imageCacheDirectory),
                timeout: options.probeTimeout, warm: true)
            : nil
        self.reloader = PluginReloader(host: host, gate: gate)
    }

    /// Loads the plugins and the view, renders, then watches. Call on `queue`.
    public func start() throws {
        host.adoptCurrentThread()  // a serial queue may run each block on another thread; the queue is the "thread"
        // The watchers take the files as they are before anything reads them: a file changed between this worker's
        // first frame and a later seed was the baseline, never a change (a module file fixed right after a restart
        // stayed broken).
        let watching = options.watch ? makeWatchers() : nil
        let loadedSummary = reloader.loadAll(in: options.pluginFolders)
        providersAtLastSwap = currentProviders
        restore(options.initialUIStates)
        if !options.gallery, !loadView() {
            // The file cannot be read now: the view the last worker drew, with the file's problem said.
            if let carried = options.lastGoodViewText, let decoded = carriedView(carried) {
                viewModel = decoded
                lastGoodViewText = carried
            } else if WorkerEnvironment.isRestart {
                viewIssues.append(
                    "no earlier view to draw meanwhile (none was read whole, or it was over "
                        + "\(Self.lastGoodViewLimit >> 20) MiB, which is not kept across a worker restart); the view is "
                        + "drawn once the file can be read")
            }
        }
        // A story the page had open (the worker before this one) is open again, as the plugins declare it now.
        var storyGone = ""
        if options.gallery, let key = options.openStory {
            viewModel = storyView(key)
            if viewModel == nil {
                options.openStory = nil
                storyGone =
                    "; story \(TerminalText.quoted(key.story)) of \(key.component) is not served now, back to the sheet"
            }
        }
        // The page's edits (in memory) are part of the first render, as its widths are.
        var editsKept = ""
        if !options.gallery || viewModel != nil, let edited = options.editedViewText, let decoded = carriedView(edited)
        {
            viewModel = decoded
            isEditedInMemory = true
            editsKept = "; the page's edits kept (in memory; save the file to keep them)"
        }
        // A worker that replaces one a plugin fault ended says so: "initial" would read as a fresh start.
        let restarted =
            WorkerEnvironment.restartCause.map { "restarted: \($0); " }
            ?? (WorkerEnvironment.isRestart ? "restarted after the fault above; " : "")
        // After a restart, builds may have landed meanwhile: say which are serving.
        let summary = restarted.isEmpty ? loadedSummary : reloader.summary(namingServing: true)
        render(Reload(file: viewName, result: .initial, detail: restarted + summary + editsKept + storyGone))

        guard let watching else { return }
        try watching.plugins.start()
        watchers = [watching.plugins]
        guard let view = watching.view else { return }  // the gallery has no view file to watch
        try view.start()
        watchers.append(view)
    }

    /// The plugin folders' watcher and the view file's (none in the gallery), seeded with the files as they are now.
    private func makeWatchers() -> (plugins: FileWatcher, view: FileWatcher?) {
        let queue = options.queue
        let target = WeakLoop(self)
        let plugins = FileWatcher(
            directories: options.pluginFolders, quietPeriod: options.quietPeriod,
            accepts: { url in
                !url.lastPathComponent.hasPrefix(".")
                    && (url.pathExtension == "so" || url.lastPathComponent.hasSuffix(ModuleFile.suffix))
            },
            onChange: { changes in queue.async { target.loop?.handle(changes) } })
        plugins.onWaiting = { file, why in
            queue.async {
                target.loop?.render(
                    Reload(
                        file: file.lastPathComponent, result: .waiting,
                        detail: "not a whole ELF image yet (\(why)); it is loaded once the rest is written"))
            }
        }
        plugins.seed(
            PluginFolders.pluginFiles(in: options.pluginFolders).files + ModuleFile.files(in: options.pluginFolders))
        guard !options.gallery else { return (plugins, nil) }
        let viewPath = options.viewFile.standardizedFileURL.path
        let view = FileWatcher(
            directories: [options.viewFile.deletingLastPathComponent()], quietPeriod: options.quietPeriod,
            accepts: { $0.standardizedFileURL.path == viewPath }, isReady: { _ in .complete },
            onChange: { changes in queue.async { target.loop?.handle(changes) } })
        view.seed([options.viewFile])
        return (plugins, view)
    }

    public func stop() {
        for watcher in watchers { watcher.stop() }
        watchers = []
    }

    // MARK: - Changes

    /// Applies settled file changes (called by the watchers, on `queue`).
    public func handle(_ changes: [FileChange]) {
        host.adoptCurrentThread()
        // Plugin builds that settled together load together and the view is drawn once for them.
        var builds: [FileChange] = []
        defer { if !builds.isEmpty { probeThenLoad(builds) } }
        for change in changes {
            // A chmod or touch with the content unchanged matters only to a build its permissions kept out.
            if change.sameContent && !reloader.refusedByTrust.contains(change.url.path) { continue }
            if change.url.standardizedFileURL.path == options.viewFile.standardizedFileURL.path {
                viewChanged(change)
            } else if change.url.lastPathComponent.hasSuffix(ModuleFile.suffix) {
                if let onModuleFilesChanged {
                    onModuleFilesChanged(change.url)
                } else {
                    render(
                        Reload(
                            file: change.url.lastPathComponent, result: .unchanged,
                            detail: "module files are bound as plugins load: restart hubhost dev to apply the change"))
                }
            } else if change.kind == .deleted {
                renderPluginReloads([reloader.pluginDeleted(change, aroundSwap: keepingUIStates)])
            } else {
                builds.append(change)
            }
        }
    }

    private func viewChanged(_ change: FileChange) {
        let ok = loadView()
        var reload = Reload(
            file: change.url.lastPathComponent, result: ok ? .viewUpdated : .viewError,
            detail: viewIssues.first, lastEventAt: change.lastEventAt, settledAt: change.settledAt)
        if ok && viewIssues.count > 0 { reload.detail = "\(viewIssues.count) issue(s): \(viewIssues[0])" }
        render(reload)
    }

    // MARK: - Taps

    /// Taps the component at `indexPath` of `section` ("body", "header", "overlay") through the event pipeline:
    /// scrolled on screen if needed, touched and released (Selected, the selection action, None after Hub's
    /// deselect delay), then drawn again with the component highlighted. Returns what happened.
    /// How a tap's answer starts when nothing is at its index path.
    public static let noSuchComponent = "no such component: "

    @discardableResult
    public func tap(indexPath: [Int], section: String = "body") -> String {
        host.adoptCurrentThread()
        guard let engine, !indexPath.isEmpty || section == "header" else { return "no view to tap" }
        // The preview server validates requests; this stays total for any other caller.
        guard indexPath.allSatisfy({ $0 >= 0 }) else { return "tap at \(section) \(indexPath): no such component" }
        let type = ComponentType(rawValue: section == "overlays" ? "overlay" : section) ?? .body
        // The page names components by their index paths; the header's starts with its own index (0), which the
        // event pipeline's header paths leave out ([] is the header, [i] its child i).
        let path = type == .header ? Array(indexPath.dropFirst()) : indexPath
        if type == .body { scrollOnScreen(bodyIndex: indexPath.first) }
        // After the scroll: what the tap did, not what scrolling to it made come and go.
        let trace = EventTrace()
        engine.trace = trace
        let problemsBefore = engine.problems.count
        engine.tap(.indexPath(path, section: type))
        host.scheduler.advance(by: EventEngine.deselectDelay)
        engine.trace = nil
        let said = trace.records.filter { $0.kind != .call && $0.kind != .event }.map(\.message)
        var result = said.isEmpty ? "tap at \(section) \(indexPath): nothing happened" : said.joined(separator: "; ")
        // The page (or a script) named no component there: said as such, for the server to answer 404.
        if engine.problems.count > problemsBefore { result = Self.noSuchComponent + result }
        tapped = indexPath
        tappedSection = type.rawValue
        emit(
            Reload(file: viewName, result: .tapped, detail: result),
            tree: currentTree(engine))
        return result
    }

    /// Scrolls body component `bodyIndex` on screen when it is not (a tap or an inspection from a page scrolled
    /// elsewhere than the view: taps happen on screen, and a large view has live components only near it).
    func scrollOnScreen(bodyIndex: Int?) {
        guard let engine, let index = bodyIndex, let frames = pipeline.layout?.frames, index >= 0, index < frames.count
        else { return }
        let frame = frames[index]
        let top = engine.contentOffset.y
        if frame.minY < top || frame.maxY > top + options.viewport.height {
            engine.scroll(to: Point(x: 0, y: max(0, frame.minY)), programmatic: true)
        }
    }

    /// Scrolls a windowed view so that content y `y` is at the viewport's top, as the page scrolled to it
    /// (`pageHeight`: how much of the view the page shows, in view points), and draws the part near it. A view
    /// drawn whole does not scroll: the page shows all of it.
    @discardableResult
    public func scroll(toY y: Double, pageHeight: Double, page: String? = nil) -> String {
        host.adoptCurrentThread()
        self.pageHeight = pageHeight
        scrollingPage = page
        defer { scrollingPage = nil }
        guard let engine, isWindowed else { return "the whole view is drawn" }
        engine.bufferFraction = windowBuffer
        engine.scroll(to: Point(x: 0, y: y))
        let window = window(of: engine)
        emit(
            Reload(
                file: options.viewFile.lastPathComponent, result: .scrolled,
                detail: "y \(Int(engine.contentOffset.y))"),
            tree: currentTree(engine))
        return "drawn from y \(Int(window.lowerBound)) to \(Int(window.upperBound))"
    }

    // MARK: - Rendering

    /// A view a previous worker handed over (the file's last good text, or the page's edits), decoded.
    private func carriedView(_ text: String) -> ViewModel? {
        try? ViewModelDecoder(file: options.viewFile.lastPathComponent).decode(bytes: Array(text.utf8)).viewModel
    }

    /// What reload lines call the view: its file's name, or "gallery" (whose file name is a placeholder).
    var viewName: String { options.gallery ? "gallery" : options.viewFile.lastPathComponent }

    /// Reads the view file. On a fatal JSON error the last good view model stays and the error is shown.
    @discardableResult
    private func loadView() -> Bool {
        do {
            let bytes = try readWholeFile(options.viewFile.path, limit: ViewModelDecoder.maxViewBytes)
            let result = try ViewModelDecoder(file: options.viewFile.lastPathComponent).decode(bytes: bytes)
            viewModel = result.viewModel
            lastGoodViewText = bytes.count <= Self.lastGoodViewLimit ? String(decoding: bytes, as: UTF8.self) : nil
            onViewRead(lastGoodViewText)
            let droppedEdits = isEditedInMemory
            isEditedInMemory = false
            viewIssues = result.issues.map(\.description)
            if result.suppressedIssueCount > 0 { viewIssues.append("… and \(result.suppressedIssueCount) more") }
            viewNotes = result.notes.map(\.description)
            // The file wins over edits made in the page (they were never written); said, so none is lost unseen.
            if droppedEdits {
                viewNotes.append(
                    "\(options.viewFile.lastPathComponent) changed on disk: the edits made in the page (in memory, "
                        + "never written) were replaced by the file")
            }
            return true
        } catch let failure as DecodeFailure {
            viewIssues = ["\(failure)"]
            return false
        } catch {
            // Say what happened in words (not a Foundation error domain); the last good view keeps rendering.
            let name = options.viewFile.lastPathComponent
            viewIssues = [
                FileManager.default.fileExists(atPath: options.viewFile.path)
                    ? "\(name): cannot read it (\(ErrorText.describe(error))); the last good view is shown"
                    : "\(name): the file is gone (deleted or renamed?); the last good view is shown until it is back"
            ]
            return false
        }
    }

    /// Renders plugins' reloads, once for all of them; when a plugin went or was replaced, one refused because it
    /// registers what that one held may load now (and is in the same render).
    func renderPluginReloads(_ reloads: [Reload]) {
        guard !reloads.isEmpty else { return }
        var reloads = reloads
        if reloads.contains(where: { $0.result == .swapped || $0.result == .unloaded }) {
            reloads += reloader.retryRefusedForConflicts(aroundSwap: keepingUIStates)
        }
        render(reloads.last!, earlier: Array(reloads.dropLast()))
    }

    /// Renders the current view model through a fresh event engine on the same pipeline (instances, reuse
    /// pool and UI states carry over), every body component live, and reports it (`earlier`: reloads of the same
    /// batch, drawn in this render too).
    func render(_ reload: Reload, earlier: [Reload] = []) {
        var reload = reload
        // Plugins may have changed the story (not on the first render: `start` has just looked it up).
        if ![.initial, .tapped, .scrolled, .edited, .widths, .story].contains(reload.result),
            let gone = refreshOpenStory()
        {
            reload.detail = [reload.detail, gone].compactMap { $0 }.joined(separator: "; ")
        }
        var tree: RenderTree?
        if let viewModel {
            let engine = host.makeEventEngine(
                viewModel: viewModel, viewport: options.viewport, viewFile: options.viewFile,
                imageAccess: options.imageAccess, pipeline: pipeline)
            // The preview draws the whole content, so every body component stays live (the engine's live set
            // is the viewport plus this many viewport heights above and below); a large view, the part near
            // where the page is scrolled, which stays where it was.
            let offset = isWindowed ? self.engine?.contentOffset.y ?? 0 : 0
            engine.bufferFraction = isWindowed ? windowBuffer : 10_000
            engine.load()
            if offset > 0 { engine.scroll(to: Point(x: 0, y: offset)) }
            self.engine = engine
            // load() rendered every component live; its tree has them all (no need to draw them again).
            tree = isWindowed ? currentTree(engine) : pipeline.lastTree ?? engine.renderTree()
        } else {
            engine = nil
        }
        emit(reload, earlier: earlier, tree: tree)
    }

    func emit(_ reload: Reload, earlier: [Reload] = [], tree: RenderTree?) {
        var reload = reload
        reload.renderedAt = Monotonic.now()
        let earlier = earlier.map {
            var drawn = $0
            drawn.renderedAt = reload.renderedAt
            return drawn
        }
        sequence += 1
        var warnings: [String] = []
        let retiredBytes = reloader.retiredImageBytes
        if retiredBytes > options.retiredMemoryBudget {
            warnings.append(
                String(
                    printf:
                        "retired Swift images keep %.1f MiB mapped (budget %.0f MiB); restart hubhost dev to reclaim it",
                    Double(retiredBytes) / 1_048_576, Double(options.retiredMemoryBudget) / 1_048_576)
            )
        }
        logger.debug("\(reload)")
        // A tap or a change of widths changes neither the view nor the plugins: the warnings stand as they were.
        // The module files' problems stand with them (a changed file starts a new worker, which binds it again).
        let bindingProblems = reloader.moduleFileProblems.map(\.description)
        if ![.tapped, .widths, .scrolled].contains(reload.result) {
            viewWarnings = bindingProblems + (options.gallery ? openStoryWarnings : currentViewWarnings())
        }
        // The sheet is drawn while no story is open on its canvas.
        let gallery =
            options.gallery && options.openStory == nil
            ? Showcase.shots(of: host, widths: [options.viewport.width] + options.extraWidths) : nil
        // Gallery mode has no view: what is wrong with the stories is the page's warnings.
        if let gallery { viewWarnings = bindingProblems + gallery.problems }
        // A windowed view is not drawn at other widths: each would be the whole view again, at every scroll.
        let windowed = isWindowed && tree != nil
        var output = Output(
            sequence: sequence, tree: tree, viewIssues: viewIssues,
            quarantines: reloader.quarantines.values.sorted { $0.file < $1.file }, reload: reload,
            earlierReloads: earlier,
            tapped: tapped, tappedSection: tappedSection, warnings: warnings, viewWarnings: viewWarnings,
            plugins: pluginRows(),
            uiStates: options.reportUIStates ? currentUIStates() : [:],
            extras: tree == nil || windowed ? [] : extraDrawings(), gallery: gallery?.shots)
        output.bodyCount = viewModel?.body.count ?? 0
        output.extraWidths = options.extraWidths
        output.viewWidth = options.viewport.width
        if let engine { output.suppliedImages = engine.images.suppliedSoFar }
        if reload.result == .scrolled { output.scrolledBy = scrollingPage }
        output.openStory = options.gallery ? options.openStory : nil
        if windowed, let engine { output.window = window(of: engine) }
        onRender(output)
    }

    /// The plugin panel's rows: every file, the serving (or latest) record of each.
    private func pluginRows() -> [PluginRow] {
        var latest: [String: PluginRecord] = [:]
        for record in host.plugins {
            if let current = latest[record.file.path], current.isLoaded && !record.isLoaded { continue }
            latest[record.file.path] = record
        }
        // A file deleted since (and so unloaded) is not the session's any more.
        latest = latest.filter { $0.value.isLoaded || FileManager.default.fileExists(atPath: $0.key) }
        // A new file whose probe failed never became a record: listed from its quarantine, as the page says.
        let probedOnly = reloader.quarantines.filter { path, _ in
            latest[path] == nil && FileManager.default.fileExists(atPath: path)
        }.map { path, quarantine in
            PluginRow(
                file: PathText.fileName(path), id: nil, version: nil, build: String(quarantine.hash.prefix(12)),
                state: "quarantined", reason: quarantine.reason, namespaces: [], loadedAt: nil, loadMilliseconds: nil)
        }
        return
            (latest.values.sorted { $0.file.path < $1.file.path }.map { record in
                var row = PluginRow(
                    file: record.file.lastPathComponent, id: record.id, version: record.version,
                    build: record.contentHash.map { String($0.prefix(12)) }, state: record.state.name,
                    reason: record.reason,
                    namespaces: record.namespaces.map { "\($0.namespace): \($0.components.joined(separator: ", "))" },
                    loadedAt: record.loadedAt.map { $0.ISO8601Format() },
                    loadMilliseconds: record.loadDuration.map { ($0 * 10_000).rounded() / 10 })
                if let quarantine = reloader.quarantines[record.file.path] {
                    if record.isLoaded && quarantine.hash != record.contentHash {
                        // A newer build was quarantined: the one serving is fine, and says what became of the other.
                        row.reason =
                            "build \(quarantine.hash.prefix(12)) was quarantined (\(quarantine.reason)); this one keeps serving"
                    } else {
                        row.state = "quarantined"
                        row.reason = quarantine.reason
                        row.build = String(quarantine.hash.prefix(12))
                    }
                }
                return row
            } + probedOnly).sorted { $0.file < $1.file }
    }

    /// Runs a swap or unload with the UI states of live components saved before and put back after it.
    func keepingUIStates(_ swap: () -> Void) {
        var states = snapshotUIStates()
        swap()
        // A plugin that provides services or bindings came, went or changed: every component is made and configured
        // again, as configure is where consumers acquire what they use (they kept the old provider's results).
        // Compared with what was there at the last swap, not before this one: a new build's keys nobody held are
        // registered during its init, before the swap.
        let providers = currentProviders
        if providers != providersAtLastSwap {
            states = pipeline.pool.uiStates.all.merging(states) { _, live in live }
            pipeline.tearDown()
        }
        providersAtLastSwap = providers
        restore(states)
    }

    /// UI states of every live component by model id, read before an unload destroys the instances.
    private func snapshotUIStates() -> [String: String] {
        var states: [String: String] = [:]
        for wrapper in pipeline.liveWrappers {
            if let id = wrapper.model?.identifier, let state = wrapper.component.restorableUIState?.currentUIState {
                states[id] = state
            }
        }
        return states
    }

    /// Every UI state the session knows: saved ones, and the live components' current ones.
    private func currentUIStates() -> [String: String] {
        pipeline.pool.uiStates.all.merging(snapshotUIStates()) { _, live in live }
    }

    /// Puts the snapshot back after the unload (whose purge cannot read destroyed instances), so the next render
    /// restores each state into the new version's component for the same model.
    private func restore(_ states: [String: String]) {
        for (id, state) in states { pipeline.pool.uiStates.save(state, forModelIdentifier: id) }
    }

    /// Bytes retired Swift images keep mapped.
    public var retiredImageBytes: Int { reloader.retiredImageBytes }
}

/// Lets watcher threads reach the loop without keeping it alive.
final class WeakLoop: @unchecked Sendable {
    weak var loop: DevLoop?
    init(_ loop: DevLoop) { self.loop = loop }
}
