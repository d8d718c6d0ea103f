import Foundation
import HubCore
import HubHost
import HubRender
import Logging

/// The render section: the full pipeline (decode, resolve, configure, size, lay out, emit JSON) over views of
/// 10k and 100k components, with the components of the C demo plugin (`libHubDemoC.so`, dlopened through the
/// plugin host) against Swift twins of the same components registered in-process, in one run, interleaved.
/// Also: the ratio to a loop that only computes the frames, the host's own work per component (components that
/// do nothing but answer the C components' sizes), and the peak memory per component model at 100k (measured in a
/// child process, so earlier sections do not count).
enum RenderBench {
    static let memoryChildVariable = "HUBBENCH_RENDER_MEMORY"
    static let viewport = Size(width: 375, height: 667)

    static func run() throws {
        if let count = ProcessInfo.processInfo.environment[memoryChildVariable].flatMap(Int.init) {
            try memoryChild(count: count)
            exit(0)
        }
        let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let cPlugin = binDirectory.appendingPathComponent("libHubDemoC.so")
        guard FileManager.default.fileExists(atPath: cPlugin.path) else {
            print("render: skipped: \(cPlugin.path) is missing (build the HubDemoC product in the same configuration)")
            return
        }
        let (host, cache) = try loadCPlugin(cPlugin)
        defer { try? FileManager.default.removeItem(at: cache) }
        let swiftRegistry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try swiftRegistry.register(SwiftTwinFactory(), forNamespace: "cdemo", owner: Owner(id: "bench.swift-twins"))
        let nullSizes = NullComponent.Sizes()
        let nullRegistry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try nullRegistry.register(
            NullComponentFactory(sizes: nullSizes), forNamespace: "cdemo", owner: Owner(id: "bench.null-components"))
        // For a profiler: only the 100k pipeline (C; the Swift twins with HUBBENCH_RENDER_TWINS=1; components that
        // do nothing, i.e. the host's own work, with HUBBENCH_RENDER_NULL=1; another size with
        // HUBBENCH_RENDER_COUNT), this many times, nothing else in the samples.
        let environment = ProcessInfo.processInfo.environment
        if let loops = environment["HUBBENCH_RENDER_LOOPS"].flatMap(Int.init) {
            let count = environment["HUBBENCH_RENDER_COUNT"].flatMap(Int.init) ?? 100_000
            let json = makeView(count: count)
            var registry = host.registry
            if environment["HUBBENCH_RENDER_TWINS"] == "1" { registry = swiftRegistry }
            if environment["HUBBENCH_RENDER_NULL"] == "1" {
                nullSizes.sizes = layoutItems(json, registry: host.registry).map(\.preferredSize)
                registry = nullRegistry
            }
            for _ in 0..<loops { _ = try pipeline(json, registry: registry) }
            return
        }

        print(
            "(one-shot render as `hubhost render --format json` does it: body instances reused and nodes written as they are drawn)"
        )
        for (count, repetitions) in [(10_000, 15), (100_000, 9)] {
            let json = makeView(count: count)
            // Warm up both and check they agree, so the comparison is of equal work.
            let cOutput = try pipeline(json, registry: host.registry, keepBody: true)
            let swiftOutput = try pipeline(json, registry: swiftRegistry, keepBody: true)
            guard sameFrames(cOutput, swiftOutput) else {
                print(
                    "render: the C components and their Swift twins lay out differently; the comparison would be unfair"
                )
                return
            }
            let items = layoutItems(json, registry: swiftRegistry)
            nullSizes.sizes = items.map(\.preferredSize)
            // Not kept: a third view held through the runs below changed how fast they decode (by a third).
            guard sameFrames(cOutput, try pipeline(json, registry: nullRegistry, keepBody: true)) else {
                print("render: the components that do nothing lay out differently from the C components")
                return
            }
            var cTimes: [Double] = []
            var cCPUTimes: [Double] = []
            var cDecodeTimes: [Double] = []
            var swiftTimes: [Double] = []
            var frameTimes: [Double] = []
            var silentTimes: [Double] = []
            for _ in 0..<repetitions {
                // Each run's output (and with it the decoded view) is let go after its timing: `hubhost render`
                // keeps the view until the process exits instead of freeing 100k models (ProcessLifetime).
                var output: Output?
                // The same C pipeline writing nothing, right before the one that writes (their difference is
                // the writing) as the Swift run comes right after it (their ratio is goal 6's).
                silentTimes.append(try time { output = try pipeline(json, registry: host.registry, writes: false) })
                output = nil
                try withScratchFile { file in
                    let cpuBefore = Measure.processCPU()
                    cTimes.append(try time { output = try pipeline(json, registry: host.registry, file: file) })
                    cCPUTimes.append(Measure.processCPU() - cpuBefore)
                }
                cDecodeTimes.append(output!.decodeSeconds)
                output = nil
                try withScratchFile { file in
                    swiftTimes.append(try time { output = try pipeline(json, registry: swiftRegistry, file: file) })
                }
                output = nil
                frameTimes.append(time { computeFrames(items) })
            }
            // The decoder alone against Foundation's parser (which builds only untyped objects, no models).
            var decodeTimes: [Double] = []
            var foundationTimes: [Double] = []
            let data = Data(json)
            for _ in 0..<3 {
                decodeTimes.append(try time { _ = try ViewModelDecoder().decode(bytes: json) })
                foundationTimes.append(try time { _ = try JSONSerialization.jsonObject(with: data) })
            }
            // The components that do nothing, writing nothing, last (placed among the runs above, the memory their
            // views free made the next C run decode a third slower at 100k, and the decoder alone a fifth) and
            // timed after their decode, each less a frames-only loop run right after it: the host's own work.
            var hostOwnTimes: [Double] = []
            for _ in 0..<repetitions {
                var output: Output?
                let seconds = try time { output = try pipeline(json, registry: nullRegistry, writes: false) }
                let afterDecode = seconds - output!.decodeSeconds
                output = nil
                hostOwnTimes.append(afterDecode - time { computeFrames(items) })
            }
            // The kernel's part of writing the output file, alone, last (it frees 35 MB of page cache after each).
            let fileWriteTimes = (0..<5).compactMap { _ in fileWriteAlone(byteCount: cOutput.jsonBytes) }
            let c = Measure.medianOf(cTimes)
            let swift = Measure.medianOf(swiftTimes)
            let frames = Measure.medianOf(frameTimes)
            print("render \(count / 1000)k components (median of \(repetitions)):")
            print(
                "  full pipeline, C plugin components:     \(Measure.ms(c))  (\(String(format: "%.2f", c / Double(count) * 1e6)) µs/component)"
            )
            print("  full pipeline, in-process Swift twins:  \(Measure.ms(swift))")
            print("  frames only (collection layout loop):   \(Measure.ms(frames))")
            // Each C run is paired with the Swift run right after it, so slow drifts in machine load cancel out.
            let pairRatios = zip(cTimes, swiftTimes).map { $0 / $1 }
            print(
                "  ratio C / Swift:        \(Measure.ratio(c, swift)) of medians; median of paired runs "
                    + "\(String(format: "%.2f×", Measure.medianOf(pairRatios)))  (goal ≤ 1.15×)")
            print(
                "  ratio C / frames only:  \(Measure.ratio(c, frames));  Swift / frames only: \(Measure.ratio(swift, frames))"
                    + "  (goal ≤ 5×)")
            // Where the C pipeline's time goes: its decode, and everything after it (resolve, configure, size, lay
            // out, write), each against the loop, so the distance to the goal is seen per stage.
            let cDecode = Measure.medianOf(cDecodeTimes)
            let cAfterDecode = Measure.medianOf(zip(cTimes, cDecodeTimes).map { $0 - $1 })
            print(
                "    of which decode \(Measure.ms(cDecode)) (\(Measure.ratio(cDecode, frames)) of frames only); "
                    + "after decode \(Measure.ms(cAfterDecode)) (\(Measure.ratio(cAfterDecode, frames)))")
            // The pipeline runs on one thread, so this is the wall figure unless work moved to other threads (a
            // plugin's, or an output thread like the one tried and removed): the work the wall figure would hide.
            let cCPU = Measure.medianOf(cCPUTimes)
            print(
                "    CPU of the C pipeline, all threads: \(Measure.ms(cCPU)) (\(Measure.ratio(cCPU, frames)) of frames only)"
            )
            // The stages every render has whatever its components do: decoding, the layout loop and writing the
            // JSON (the pipeline less the same pipeline writing nothing, so it is measured as hot in the cache as
            // it runs). The goal's budget for the component work (resolve, reuse, configure through the plugin,
            // size) is what 5× the loop leaves above them.
            let write = Measure.medianOf(zip(cTimes, silentTimes).map { $0 - $1 })
            let floor = cDecode + frames + write
            print(
                "    stages without components (decode + layout loop + writing \(Measure.ms(write))): "
                    + "\(Measure.ms(floor)), \(Measure.ratio(floor, frames)) of frames only")
            print(
                "    component work: \(perComponent(c - floor, count)) per component; the goal leaves "
                    + "\(perComponent(5 * frames - floor, count))")
            // The same pipeline with components that do nothing (they answer the C components' sizes, so the
            // layout is the same) and writing nothing: what it spends after decoding above the loop is the host's
            // own work per component (resolve, reuse, the lifecycle calls, sizing, nodes); the rest of the
            // component work is the components' and the bridge's.
            let hostOwn = Measure.medianOf(hostOwnTimes)
            print(
                "      of which the host's own (components that do nothing): \(perComponent(hostOwn, count)); "
                    + "the C components with the bridge: \(perComponent(c - floor - hostOwn, count))")
            // What the goal leaves for decoding and formatting once the loop, today's component work and the
            // kernel copying the output into a file are paid: the component work has to shrink for any decoder
            // and writer to fit.
            if !fileWriteTimes.isEmpty {
                let fileWrite = Measure.medianOf(fileWriteTimes)
                let left = 5 * frames - frames - (c - floor) - fileWrite
                print(
                    "    the file write alone (\(cOutput.jsonBytes / 1024) KiB in 64 KiB writes, nothing formatted): "
                        + "\(Measure.ms(fileWrite)) (\(Measure.ratio(fileWrite, frames))); after it, the loop and the "
                        + "component work, the goal leaves \(perComponent(left, count)) per component to decode and "
                        + "format (decoding alone: \(perComponent(cDecode, count)))")
            }
            let decode = Measure.medianOf(decodeTimes)
            let foundation = Measure.medianOf(foundationTimes)
            print(
                "  decode to models: \(Measure.ms(decode)); JSONSerialization parse alone: \(Measure.ms(foundation)) "
                    + "(ratio \(Measure.ratio(decode, foundation)))")
        }
        try measureMemoryInChild(count: 100_000)
    }

    static func perComponent(_ seconds: Double, _ count: Int) -> String {
        String(format: "%.0f ns", seconds / Double(count) * 1e9)
    }

    // MARK: The pipeline under test

    struct Output {
        var tree: RenderTree
        var jsonBytes: Int
        /// The part of the run spent decoding the view.
        var decodeSeconds: Double
        /// The decoded view, which the caller lets go.
        var viewModel: ViewModel
    }

    /// decode → resolve → configure → size → lay out → emit JSON, each body node written as it is drawn, as
    /// `hubhost render --format json` does (its indented JSON, into `file` in the chunks the command writes, or
    /// only counted when `file` is nil), and tear the instances down. `keepBody` keeps the body nodes in the
    /// returned tree, to compare frames.
    /// `writes: false` renders the same nodes and writes none (the stream drops them), to tell the writing's cost.
    static func pipeline(
        _ json: [UInt8], registry: ComponentRegistry, retain: Bool = false, keepBody: Bool = false,
        writes: Bool = true, file: Int32? = nil
    ) throws -> Output {
        let start = Measure.now()
        let decoded = try ViewModelDecoder(file: "bench.json").decode(bytes: json)
        let decodeSeconds = Measure.now() - start
        let pipeline = RenderPipeline(registry: registry)
        pipeline.options = RenderPipeline.Options(
            retainBodyInstances: retain, keepDisplayLists: false, keepsStreamedBody: keepBody)
        var bytes = 0
        var written = true
        let tree: RenderTree
        if writes {
            let sink: (UnsafeRawBufferPointer) -> Void = { chunk in
                bytes += chunk.count
                if let file, written { written = writeAll(file, chunk) }
            }
            // Indented, as the command writes it: compact JSON is 40% fewer bytes (about 5 ms less to write at 100k
            // components), so measuring it would understate the writing.
            tree = JSONRenderer().renderStreaming(to: sink) { stream in
                pipeline.options.bodyStream = stream
                defer { pipeline.options.bodyStream = nil }
                return pipeline.render(decoded.viewModel, viewport: viewport)
            }
        } else {
            pipeline.options.bodyStream = RenderPipeline.BodyStream(begin: { _, _ in }, node: { _ in })
            tree = pipeline.render(decoded.viewModel, viewport: viewport)
        }
        pipeline.tearDown()
        guard written else { throw BenchError("render: writing the JSON into a temporary file failed") }
        return Output(tree: tree, jsonBytes: bytes, decodeSeconds: decodeSeconds, viewModel: decoded.viewModel)
    }

    /// The same JSON apart from the plugin id in "source".
    static func sameFrames(_ a: Output, _ b: Output) -> Bool {
        a.tree.body.count == b.tree.body.count && a.tree.contentSize == b.tree.contentSize
            && zip(a.tree.body, b.tree.body).allSatisfy { $0.frame == $1.frame }
    }

    /// The frames-only baseline: the collection layout loop over the layout input the pipeline computes.
    static func computeFrames(_ items: [LayoutItem]) {
        _ = CollectionLayout.compute(
            items: items, width: viewport.width, header: nil, layoutManager: DefaultLayoutManager())
    }

    /// The layout input the pipeline computes, for the frames-only baseline.
    static func layoutItems(_ json: [UInt8], registry: ComponentRegistry) -> [LayoutItem] {
        let viewModel = (try? ViewModelDecoder().decode(bytes: json))!.viewModel
        let sizing = SizingCache(registry: registry)
        return viewModel.body.map {
            LayoutItem(
                traits: sizing.traits(for: $0), preferredSize: sizing.preferredSize(for: $0, containerSize: viewport))
        }
    }

    /// Calls `body` with an unnamed file (O_TMPFILE) in the temporary folder, as `OutputFile` writes a render
    /// before naming it, or with nil where the folder takes no unnamed files (the output is then only counted).
    /// Closed after `body`, outside its timings: freeing the file's pages is not the render's.
    static func withScratchFile(_ body: (Int32?) throws -> Void) rethrows {
        let descriptor = open(
            FileManager.default.temporaryDirectory.path, OutputFile.unnamedFile | O_WRONLY | O_CLOEXEC, 0o600)
        defer { if descriptor >= 0 { close(descriptor) } }
        try body(descriptor >= 0 ? descriptor : nil)
    }

    /// `byteCount` bytes written to an unnamed file (O_TMPFILE) in the temporary folder, 64 KiB a call as
    /// `OutputFile` writes: the kernel's copy into the page cache, with nothing to format. Nil where the folder
    /// takes no unnamed files.
    static func fileWriteAlone(byteCount: Int) -> Double? {
        let descriptor = open(
            FileManager.default.temporaryDirectory.path, OutputFile.unnamedFile | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }  // after the timing: freeing the pages is not the write's
        let chunk = [UInt8](repeating: 0x20, count: 64 << 10)
        var complete = true
        let seconds = chunk.withUnsafeBytes { buffer in
            time {
                var left = byteCount
                while left > 0, complete {
                    let n = min(left, buffer.count)
                    complete = writeAll(descriptor, UnsafeRawBufferPointer(rebasing: buffer.prefix(n)))
                    left -= n
                }
            }
        }
        return complete ? seconds : nil
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = Measure.now()
        try body()
        return Measure.now() - start
    }

    /// A host with `file` loaded, its private copy in a folder of this process's that the caller removes.
    static func loadCPlugin(_ file: URL) throws -> (host: PluginHost, cache: URL) {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("hubbench-render-\(getpid())")
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let host = PluginHost(cacheDirectory: cache, logger: logger)
        let record = host.load(file: file)
        if let reason = record.reason {
            try? FileManager.default.removeItem(at: cache)
            throw BenchError("cannot load \(file.lastPathComponent): \(reason)")
        }
        return (host, cache)
    }

    /// A view of `count` body components cycling through the C plugin's banner, badge and tile.
    static func makeView(count: Int) -> [UInt8] {
        var out = "{\"id\":\"bench\",\"title\":\"\(count) components\",\"body\":["
        let names = ["banner", "badge", "tile", "badge"]
        let colors = ["#1DB954", "#007AFF", "#FF9500", "#AF52DE"]
        for i in 0..<count {
            if i > 0 { out += "," }
            out +=
                "{\"id\":\"c\(i)\",\"component\":{\"id\":\"cdemo:\(names[i % names.count])\"},\"text\":{\"title\":\"Item \(i)\"}"
            if i % 3 == 0 { out += ",\"custom\":{\"color\":\"\(colors[i % colors.count])\"}" }
            out += "}"
        }
        out += "]}"
        return Array(out.utf8)
    }

    // MARK: Memory

    /// Runs the 100k pipeline in a child process and prints its peak memory per component model.
    static func measureMemoryInChild(count: Int) throws {
        try measureMemoryInChild(count: count, retain: false, twins: false)
        try measureMemoryInChild(count: count, retain: false, twins: true)
        try measureMemoryInChild(count: count, retain: true, twins: false)
    }

    static func measureMemoryInChild(count: Int, retain: Bool, twins: Bool) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["render"]
        var environment = ProcessInfo.processInfo.environment
        environment[memoryChildVariable] = String(count)
        environment["HUBBENCH_RENDER_RETAIN"] = retain ? "1" : "0"
        environment["HUBBENCH_RENDER_TWINS"] = twins ? "1" : "0"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("==") }
        for line in lines { print(line) }
    }

    /// In the child: peak RSS over the baseline for one full pipeline run with the C plugin.
    static func memoryChild(count: Int) throws {
        let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let (host, cache) = try loadCPlugin(binDirectory.appendingPathComponent("libHubDemoC.so"))
        defer { try? FileManager.default.removeItem(at: cache) }
        let twins = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try twins.register(SwiftTwinFactory(), forNamespace: "cdemo", owner: Owner(id: "bench.swift-twins"))
        let json = makeView(count: count)
        let retain = ProcessInfo.processInfo.environment["HUBBENCH_RENDER_RETAIN"] == "1"
        let useTwins = ProcessInfo.processInfo.environment["HUBBENCH_RENDER_TWINS"] == "1"
        let baseline = currentRSS()
        let output = try pipeline(json, registry: useTwins ? twins : host.registry, retain: retain)
        let peak = Measure.peakRSS()
        let perModel = Double(peak - baseline) / Double(count)
        print(
            "peak memory over baseline, \(count / 1000)k components, \(useTwins ? "Swift twins" : "C plugin"), \(retain ? "every instance kept live" : "one-shot") "
                + "(input \(json.count / 1024) KiB, JSON out \(output.jsonBytes / 1024) KiB): "
                + "\((peak - baseline) / 1_048_576) MiB = \(Int(perModel)) B per component model (goal ≤ 1024 B)")
    }

    static func currentRSS() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return 0
    }
}

// MARK: - Swift twins of the C demo components (Plugins/DemoC/demo_plugin.c), same sizes and drawings

private final class SwiftTwinFactory: ComponentFactory {
    func createComponent(forName name: String) -> Component? {
        switch name {
        case "banner": return TwinBanner()
        case "badge": return TwinBadge()
        case "tile": return TwinTile()
        default: return nil
        }
    }
    var componentNames: [String] { ["banner", "badge", "tile"] }
}

private let padding = 16.0

/// "#RRGGBB" or "#RRGGBBAA" → 0xRRGGBBAA, else `fallback` (demo_plugin.c's parse_color).
private func parseColor(_ text: String?, _ fallback: UInt32) -> UInt32 {
    guard var text else { return fallback }
    if text.hasPrefix("#") { text.removeFirst() }
    guard text.count == 6 || text.count == 8, let value = UInt32(text, radix: 16) else { return fallback }
    return text.count == 6 ? value << 8 | 0xFF : value
}

private func customString(_ model: ComponentModel, _ key: String) -> String? { model.custom?[key]?.stringValue }

private final class TwinBanner: Component {
    var title: String?
    var color: UInt32 = 0
    static let style = TextStyle(
        fontSize: 20, weight: 700, color: Color(rgba: 0xFFFF_FFFF), alignment: .center, lineLimit: 2)
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let text = TextMetrics.measure(
            model.title ?? "", style: Self.style, maxWidth: containerSize.width - 2 * padding)
        return Size(width: containerSize.width, height: max(64, text.height + 2 * padding))
    }
    func prepareViewForReuse() { title = nil }
    func configureView(with model: ComponentModel, containerSize: Size) {
        title = model.title
        color = parseColor(customString(model, "color"), 0x1DB9_54FF)
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.rect(Rect(x: 0, y: 0, width: size.width, height: size.height), RectStyle(fill: Color(rgba: color)))
        let width = size.width - 2 * padding
        let text = TextMetrics.measure(title ?? "", style: Self.style, maxWidth: width)
        view.text(
            Rect(x: padding, y: (size.height - text.height) / 2, width: width, height: text.height), title ?? "",
            Self.style)
    }
}

private final class TwinBadge: Component {
    var title: String?
    var color: UInt32 = 0
    static let style = TextStyle(
        fontSize: 12, weight: 600, color: Color(rgba: 0xFFFF_FFFF), alignment: .center, lineLimit: 1)
    var layoutTraits: Set<LayoutTrait> { [.centered] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let text = TextMetrics.measure(model.title ?? "", style: Self.style, maxWidth: containerSize.width - 24)
        return Size(width: text.width + 24, height: 28)
    }
    func prepareViewForReuse() { title = nil }
    func configureView(with model: ComponentModel, containerSize: Size) {
        title = model.title
        color = parseColor(customString(model, "color"), 0x007A_FFFF)
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.rect(
            Rect(x: 0, y: 0, width: size.width, height: size.height),
            RectStyle(fill: Color(rgba: color), cornerRadius: size.height / 2))
        let text = TextMetrics.measure(title ?? "", style: Self.style, maxWidth: 0)
        view.text(
            Rect(x: 0, y: (size.height - text.height) / 2, width: size.width, height: text.height), title ?? "",
            Self.style)
    }
}

private final class TwinTile: Component {
    var title: String?
    var imageURI: String?
    var color: UInt32 = 0
    static let style = TextStyle(
        fontSize: 13, weight: 600, color: Color(rgba: 0xFFFF_FFFF), alignment: .left, lineLimit: 1)
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let side = min(120, max(48, (containerSize.width - 45) / 2))
        return Size(width: side, height: side)
    }
    func prepareViewForReuse() {
        title = nil
        imageURI = nil
    }
    func configureView(with model: ComponentModel, containerSize: Size) {
        title = model.title
        imageURI = model.mainImage?.uri
        color = parseColor(customString(model, "color"), 0x8E8E_93FF)
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.image(
            Rect(x: 0, y: 0, width: size.width, height: size.height), uri: imageURI, mode: .aspectFill,
            placeholder: Color(rgba: color))
        guard let title else { return }
        let text = TextMetrics.measure(title, style: Self.style, maxWidth: size.width - 16)
        let scrim = text.height + 12
        view.rect(
            Rect(x: 0, y: size.height - scrim, width: size.width, height: scrim),
            RectStyle(fill: Color(rgba: 0x0000_0080)))
        view.text(
            Rect(x: 8, y: size.height - scrim + 6, width: size.width - 16, height: text.height), title, Self.style)
    }
}

// MARK: - Components that do nothing: the host's own work per component

/// The C demo's component names with their traits; each instance answers the size the C component gave the model
/// (looked up by the model's index) and does nothing else, so a pipeline of them lays out exactly as the C
/// pipeline does and writes the same nodes.
private final class NullComponentFactory: ComponentFactory {
    let sizes: NullComponent.Sizes
    init(sizes: NullComponent.Sizes) { self.sizes = sizes }

    func createComponent(forName name: String) -> Component? {
        switch name {
        case "banner": return NullComponent(traits: [.fullWidth], sizes: sizes)
        case "badge": return NullComponent(traits: [.centered], sizes: sizes)
        case "tile": return NullComponent(traits: [.compactWidth], sizes: sizes)
        default: return nil
        }
    }
    var componentNames: [String] { ["banner", "badge", "tile"] }
}

private final class NullComponent: Component {
    /// The preferred size of each body model by index, set before each view's runs.
    final class Sizes { var sizes: [Size] = [] }

    let layoutTraits: Set<LayoutTrait>
    let sizes: Sizes
    init(traits: Set<LayoutTrait>, sizes: Sizes) {
        layoutTraits = traits
        self.sizes = sizes
    }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size { sizes.sizes[model.index] }
    func prepareViewForReuse() {}
    func configureView(with model: ComponentModel, containerSize: Size) {}
    func drawView(into view: ViewBuilder, size: Size) {}

    // No optional capabilities, answered as a plugin component answers them (from tables it looked up once), not
    // by the dynamic casts of the Swift defaults: those are the Swift components' cost, not the host's.
    var childrenSupport: ComponentWithChildren? { nil }
    var imageHandling: ComponentWithImageHandling? { nil }
    var restorableUIState: ComponentWithRestorableUIState? { nil }
    var selectionStateHandling: ComponentWithSelectionState? { nil }
    var contentOffsetObserver: ComponentContentOffsetObserver? { nil }
    var viewObserver: ComponentViewObserver? { nil }
    var actionPerformerSupport: ComponentActionPerformer? { nil }
    var actionObserver: ComponentActionObserver? { nil }
}
