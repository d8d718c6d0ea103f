import Foundation
import HubCore
import HubHost
import Logging

/// The events section: taps per second through hit testing, selection and actions, and frames per second
/// scrolling through a 100k view, with the components of the C demo plugin (`libHubDemoC.so`, dlopened through
/// the plugin host) against Swift twins of the same components, in one run, interleaved, medians. Also the live
/// instances and the memory during the scroll.
enum EventsBench {
    static let viewport = Size(width: 375, height: 667)

    static func run() throws {
        let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let cPlugin = binDirectory.appendingPathComponent("libHubDemoC.so")
        guard FileManager.default.fileExists(atPath: cPlugin.path) else {
            print("events: skipped: \(cPlugin.path) is missing (build the HubDemoC product in the same configuration)")
            return
        }
        var logger = Logger(label: "bench.events")
        logger.logLevel = .error
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("hubbench-events-\(getpid())")
        defer { try? FileManager.default.removeItem(at: cache) }
        let cHost = PluginHost(cacheDirectory: cache, logger: logger)
        let record = cHost.load(file: cPlugin)
        if let reason = record.reason {
            print("events: cannot load \(cPlugin.lastPathComponent): \(reason)")
            return
        }
        // The twins live in a host of their own under the same namespace, so both run the same view models
        // through the same engine, actions and URI opener.
        let swiftHost = PluginHost(cacheDirectory: cache, logger: logger)
        try swiftHost.registry.register(TwinFactory(), forNamespace: "cdemo", owner: Owner(id: "bench.swift-twins"))
        try swiftHost.actionFactories.register(
            TwinActionFactory(logger: logger), forKey: "cdemo", owner: Owner(id: "bench.swift-twins"))

        try taps(cHost: cHost, swiftHost: swiftHost)
        try scrolling(cHost: cHost, swiftHost: swiftHost)
    }

    // MARK: Taps

    static func tapView() -> ViewModel {
        let body = (0..<60).map { i in
            ComponentModel(
                identifier: "badge-\(i)", index: i,
                componentIdentifier: ComponentIdentifier(namespace: "cdemo", name: "badge"),
                componentCategory: "banner", title: "Badge \(i)",
                target: Target(
                    uri: "hub:badge/\(i)",
                    actions: i % 2 == 0 ? [ComponentIdentifier(namespace: "cdemo", name: "log")] : []),
                custom: JSONObject([("color", .string("#FF8800"))]))
        }
        return ViewModel(identifier: "taps", body: body)
    }

    /// Taps on the centres of the displayed badges, each followed by the 0.2 s deselect; returns seconds per tap.
    static func tapRun(_ host: PluginHost, view: ViewModel, taps: Int) -> (
        seconds: Double, opened: Int, check: [String]
    ) {
        let engine = host.makeEventEngine(viewModel: view, viewport: viewport)
        engine.load()
        let points = engine.displayedWrappers.map { w in
            Point(x: w.frame.x + w.frame.width / 2, y: w.frame.y + w.frame.height / 2 - engine.contentOffset.y)
        }
        let before = host.services.openedURIs.count
        let start = Measure.threadCPU()
        for i in 0..<taps {
            engine.apply(.tap(.point(points[i % points.count])))
            engine.apply(.advance(seconds: 0.25))
        }
        let seconds = (Measure.threadCPU() - start) / Double(taps)
        let check = engine.displayedWrappers.prefix(4).map { "\($0.model?.identifier ?? "?"):\($0.selectionState)" }
        engine.pipeline.tearDown()
        return (seconds, host.services.openedURIs.count - before, check)
    }

    static func taps(cHost: PluginHost, swiftHost: PluginHost) throws {
        let view = tapView()
        let taps = 5_000
        // Warm up, and check both did the same.
        let cWarm = tapRun(cHost, view: view, taps: 200)
        let swiftWarm = tapRun(swiftHost, view: view, taps: 200)
        guard cWarm.opened == swiftWarm.opened, cWarm.opened > 0, cWarm.check == swiftWarm.check else {
            print(
                "events: the C components and their twins behaved differently (\(cWarm.opened) vs \(swiftWarm.opened) URIs opened)"
            )
            return
        }
        // Pairs of short runs in alternating order, on this thread's CPU time; the ratio is the median of the
        // pairs' ratios.
        let pairs = 11
        let (c, swift) = Measure.alternatingPairs(
            pairs, { tapRun(cHost, view: view, taps: taps).seconds },
            { tapRun(swiftHost, view: view, taps: taps).seconds })
        let cm = Measure.medianOf(c)
        let sm = Measure.medianOf(swift)
        print(
            "taps (hit test → highlight → selected → target action or default selection → URI opener → deselect after 0.2 s; \(taps) taps a run, \(pairs) pairs of runs, thread CPU time, medians):"
        )
        print(String(format: "  C plugin components:  %8.0f taps/s  (%.2f µs/tap)", 1 / cm, cm * 1e6))
        print(String(format: "  Swift twins:          %8.0f taps/s  (%.2f µs/tap)", 1 / sm, sm * 1e6))
        print(
            "  ratio C / Swift: median of paired runs \(Measure.ratio(Measure.medianOf(zip(c, swift).map { $0 / $1 }), 1)); "
                + "of medians \(Measure.ratio(cm, sm))  (goal ≤ 1.15×)")
    }

    // MARK: Scrolling

    static func scrollView(count: Int) -> ViewModel {
        let id = ComponentIdentifier(namespace: "cdemo", name: "banner")
        let colors = ["#1DB954", "#3366CC", "#CC3366"]
        let body = (0..<count).map { i in
            ComponentModel(
                identifier: "banner-\(i)", index: i, componentIdentifier: id, componentCategory: "banner",
                title: "Banner \(i)", custom: JSONObject([("color", .string(colors[i % 3]))]))
        }
        return ViewModel(identifier: "scroll", body: body)
    }

    struct ScrollResult {
        var seconds: Double
        var frames: Int
        var maxInstances: Int
        var peakLive: Int
        var rssGrowth: Int
        var drawn: Int
    }

    /// Scrolls from the top to the bottom, `step` points a frame; a frame is the scroll event (live set,
    /// appearance, content offset) plus drawing every displayed component.
    static func scrollRun(_ host: PluginHost, view: ViewModel, step: Double) -> ScrollResult {
        let engine = host.makeEventEngine(viewModel: view, viewport: viewport)
        engine.load()
        let height = engine.pipeline.layout?.contentSize.height ?? 0
        let rssBefore = Measure.currentRSS()
        var rssMax = rssBefore
        var frames = 0
        var drawn = 0
        var maxInstances = 0
        let start = Measure.threadCPU()
        var y = 0.0
        while y < height - viewport.height {
            y += step
            engine.scroll(to: Point(x: 0, y: y))
            for wrapper in engine.displayedWrappers { drawn += wrapper.draw().count }
            frames += 1
            if frames % 4096 == 0 {
                maxInstances = max(maxInstances, engine.pipeline.pool.wrapperCount)
                rssMax = max(rssMax, Measure.currentRSS())
            }
        }
        let seconds = Measure.threadCPU() - start
        maxInstances = max(maxInstances, engine.pipeline.pool.wrapperCount)
        let result = ScrollResult(
            seconds: seconds, frames: frames, maxInstances: maxInstances, peakLive: engine.peakLiveBodyCount,
            rssGrowth: rssMax - rssBefore, drawn: drawn)
        engine.pipeline.tearDown()
        return result
    }

    static func scrolling(cHost: PluginHost, swiftHost: PluginHost) throws {
        let count = 100_000
        let view = scrollView(count: count)
        let step = 200.0
        let rssStart = Measure.currentRSS()
        let pairs = 5
        let (c, swift) = Measure.alternatingPairs(
            pairs, { scrollRun(cHost, view: view, step: step) }, { scrollRun(swiftHost, view: view, step: step) })
        guard c[0].frames == swift[0].frames, c[0].drawn == swift[0].drawn else {
            print(
                "events: scrolling the C components and their twins drew different things (\(c[0].drawn) vs \(swift[0].drawn) items)"
            )
            return
        }
        let cm = Measure.medianOf(c.map { $0.seconds / Double($0.frames) })
        let sm = Measure.medianOf(swift.map { $0.seconds / Double($0.frames) })
        print(
            "scrolling a \(count / 1000)k-banner view top to bottom (\(c[0].frames) frames of \(Int(step)) points: scroll event + draw of every displayed component; \(pairs) pairs of runs, thread CPU time, medians):"
        )
        print(String(format: "  C plugin components:  %8.0f frames/s  (%.2f µs/frame)", 1 / cm, cm * 1e6))
        print(String(format: "  Swift twins:          %8.0f frames/s  (%.2f µs/frame)", 1 / sm, sm * 1e6))
        let paired = Measure.medianOf(zip(c, swift).map { $0.seconds / $1.seconds })
        print(
            "  ratio C / Swift: median of paired runs \(Measure.ratio(paired, 1)); of medians \(Measure.ratio(cm, sm))  (goal ≤ 1.15×)"
        )
        print(
            "  live body instances at most: \(c.map(\.peakLive).max()!) (C), \(swift.map(\.peakLive).max()!) (Swift); instances ever alive: \(c.map(\.maxInstances).max()!) (C), \(swift.map(\.maxInstances).max()!) (Swift)"
        )
        // The C bridge caches each model's C strings on the model the first time a plugin reads them, so the C
        // run grows with the models it visits; the instances themselves stay bounded.
        print(
            String(
                format:
                    "  memory: RSS growth during a scroll at most %.1f MB (C), %.1f MB (Swift); RSS %.1f MB before the scrolls (100k models, 2 hosts); peak RSS of the process %.1f MB",
                Double(c.map(\.rssGrowth).max()!) / 1e6, Double(swift.map(\.rssGrowth).max()!) / 1e6,
                Double(rssStart) / 1e6, Double(Measure.peakRSS()) / 1e6))
    }
}

extension Measure {
    /// Resident set size of this process now, in bytes (VmRSS).
    static func currentRSS() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return 0
    }
}

// MARK: Swift twins of the C demo plugin's banner and badge, and of its cdemo:log action (Plugins/DemoC/demo_plugin.c)

private enum Twin {
    static let padding = 16.0
    /// "#RRGGBB" or "#RRGGBBAA" as 0xRRGGBBAA; `fallback` otherwise (the C plugin's parse_color).
    static func color(_ text: String?, _ fallback: UInt32) -> Color {
        guard var text else { return Color(rgba: fallback) }
        if text.hasPrefix("#") { text.removeFirst() }
        guard text.count == 6 || text.count == 8, let value = UInt32(text, radix: 16) else {
            return Color(rgba: fallback)
        }
        return Color(rgba: text.count == 6 ? value << 8 | 0xFF : value)
    }
}

private final class TwinBanner: Component {
    static let style = TextStyle(fontSize: 20, weight: 700, color: .white, alignment: .center, lineLimit: 2)
    var title: String?
    var color = Color(rgba: 0x1DB9_54FF)
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let text = TextMetrics.measure(
            model.title ?? "", style: Self.style, maxWidth: containerSize.width - 2 * Twin.padding)
        return Size(width: containerSize.width, height: max(64, text.height + 2 * Twin.padding))
    }
    func prepareViewForReuse() { title = nil }
    func configureView(with model: ComponentModel, containerSize: Size) {
        title = model.title
        color = Twin.color(model.custom?["color"]?.stringValue, 0x1DB9_54FF)
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.rect(Rect(x: 0, y: 0, width: size.width, height: size.height), RectStyle(fill: color))
        let width = size.width - 2 * Twin.padding
        let text = TextMetrics.measure(title ?? "", style: Self.style, maxWidth: width)
        view.text(
            Rect(x: Twin.padding, y: (size.height - text.height) / 2, width: width, height: text.height), title ?? "",
            Self.style)
    }
}

private final class TwinBadge: Component, ComponentWithSelectionState {
    static let style = TextStyle(fontSize: 12, weight: 600, color: .white, alignment: .center, lineLimit: 1)
    var title: String?
    var color = Color(rgba: 0x007A_FFFF)
    var selection = SelectionState.none
    var layoutTraits: Set<LayoutTrait> { [.centered] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let text = TextMetrics.measure(model.title ?? "", style: Self.style, maxWidth: containerSize.width - 24)
        return Size(width: min(text.width + 24, containerSize.width), height: 28)
    }
    func prepareViewForReuse() {
        title = nil
        selection = .none
    }
    func configureView(with model: ComponentModel, containerSize: Size) {
        title = model.title
        color = Twin.color(model.custom?["color"]?.stringValue, 0x007A_FFFF)
    }
    func drawView(into view: ViewBuilder, size: Size) {
        let bounds = Rect(x: 0, y: 0, width: size.width, height: size.height)
        if selection != .none { view.rect(bounds, RectStyle(fill: .black, cornerRadius: 14)) }
        let fill = selection == .none ? color : Color(rgba: (color.rgba & 0xFFFF_FF00) | 0x99)
        view.rect(bounds, RectStyle(fill: fill, cornerRadius: size.height / 2))
        let text = TextMetrics.measure(title ?? "", style: Self.style, maxWidth: 0)
        view.text(
            Rect(x: 0, y: (size.height - text.height) / 2, width: size.width, height: text.height), title ?? "",
            Self.style)
    }
    func updateViewForSelectionState(_ state: SelectionState) { selection = state }
}

private final class TwinFactory: ComponentFactory {
    func createComponent(forName name: String) -> Component? {
        switch name {
        case "banner": return TwinBanner()
        case "badge": return TwinBadge()
        default: return nil
        }
    }
    var componentNames: [String] { ["banner", "badge"] }
}

/// cdemo:log: logs the component's title and the custom data through the host's logger.
private final class TwinLogAction: Action {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }
    func perform(with context: ActionContext, completion: @escaping AsyncActionCompletion) -> ActionResult {
        // Built eagerly, as the C action formats its message and the host turns it into a String before logging.
        let custom = context.customData.map { JSONValue.object($0).jsonText } ?? "{}"
        let message = "cdemo:log title=\(context.componentModel?.title ?? "(none)") custom=\(custom)"
        logger.log(level: .info, "\(message)")
        return .performed
    }
}

private final class TwinActionFactory: ActionFactory {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }
    func createAction(forName name: String) -> Action? { name == "log" ? TwinLogAction(logger: logger) : nil }
}
