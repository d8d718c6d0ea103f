import Foundation
import HubCore
import HubHost
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// Hot reload (issue 5): latency from the rename of a new plugin build into the watched folder to the render of a
/// 1,000-component view drawn as the preview pushes it (SVG), through the real dev loop (inotify watcher, quiet period, probe child,
/// load beside, swap, re-render); and memory over 200 reloads of a C and of a Swift plugin.
///
/// The quiet period is reported separately and excluded from the latency goal (p50 ≤ 50 ms, p95 ≤ 100 ms).
/// Baseline, measured in the same run: one full render of the same view in a fresh pipeline.
enum ReloadBench {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let fixture = packageRoot.appendingPathComponent("Tests/HubDevTests/Fixtures/swatch.c")
    static let swiftFixture = packageRoot.appendingPathComponent("Tests/HubHostTests/Fixtures/SwiftFixturePlugin.swift")
    static let include = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")

    static func run() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-reload-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let view = root.appendingPathComponent("view.json")
        try bigView(count: 1000).write(to: view, atomically: true, encoding: .utf8)
        let builds = root.appendingPathComponent("builds")
        try FileManager.default.createDirectory(at: builds, withIntermediateDirectories: true)

        // 50 distinct builds (one colour each), compiled before timing.
        let variants = try (0..<51).map { i -> URL in
            let out = builds.appendingPathComponent("swatch\(i).so")
            try cc(
                out, ["SWATCH_COLOR=0x\(String(format: "%06X", i * 4999 % 0xFFFFFF))FFu", "PLUGIN_VERSION=\"\(i)\""])
            return out
        }
        let target = plugins.appendingPathComponent("libswatch.so")
        try install(variants[0], at: target)

        // RELOAD_BENCH_MEMORY_ONLY=1 skips the latency runs (for quick memory investigations).
        let memoryOnly = ProcessInfo.processInfo.environment["RELOAD_BENCH_MEMORY_ONLY"] == "1"
        for probe in [true, false] where !memoryOnly {
            let samples = try latency(
                view: view, plugins: plugins, cache: root.appendingPathComponent("cache"),
                target: target, variants: Array(variants.dropFirst()), probe: probe)
            let processing = samples.map(\.processing)
            let quiet = samples.map(\.quiet)
            let total = samples.map(\.total)
            print("reload of a C plugin, 1k-component view, \(samples.count) reloads, probe \(probe ? "on" : "off"):")
            print(
                "  latency (settled file → render drawn for the preview, quiet period excluded): p50 \(Measure.ms(Measure.percentile(processing, 0.5))), p95 \(Measure.ms(Measure.percentile(processing, 0.95)))"
                    + (probe ? "  (goal p50 ≤ 50 ms, p95 ≤ 100 ms)" : ""))
            print("  quiet period + settle checks: p50 \(Measure.ms(Measure.percentile(quiet, 0.5)))")
            print(
                "  end to end (rename → drawn): p50 \(Measure.ms(Measure.percentile(total, 0.5))), p95 \(Measure.ms(Measure.percentile(total, 0.95)))"
            )
            if probe {
                baselineRatio(
                    view: view, plugins: plugins, cache: root.appendingPathComponent("cache"),
                    p50: Measure.percentile(processing, 0.5))
            }
        }

        try memoryC(
            view: view, plugins: plugins, cache: root.appendingPathComponent("cache"), target: target,
            a: variants[1], b: variants[2])
        // The same with a 3-component view: what the reload itself costs, apart from per-component growth.
        let small = root.appendingPathComponent("small.json")
        try bigView(count: 3).write(to: small, atomically: true, encoding: .utf8)
        try memoryC(
            view: small, plugins: plugins, cache: root.appendingPathComponent("cache"), target: target,
            a: variants[1], b: variants[2])
        try memorySwift(root: root, view: view, plugins: plugins, cache: root.appendingPathComponent("cache"))
    }

    struct Sample {
        var processing: Double
        var quiet: Double
        var total: Double
    }

    /// Renames each variant over `target` and waits for the dev loop's render of the swap.
    static func latency(view: URL, plugins: URL, cache: URL, target: URL, variants: [URL], probe: Bool) throws
        -> [Sample]
    {
        var options = DevLoop.Options(pluginFolders: [plugins], viewFile: view)
        options.imageCacheDirectory = cache
        options.queue = DispatchQueue(label: "reload-bench")
        options.probe = probe
        let loop = DevLoop(options: options)
        let rendered = DispatchSemaphore(value: 0)
        let box = ReloadBox()
        loop.onRender = { output in
            guard
                output.reload.result == .swapped || output.reload.result == .initial
                    || output.reload.result == .quarantined || output.reload.result == .rejected
            else { return }
            // What the preview pushes: the SVG drawing of the view (the page's frame is that plus boxes).
            box.drawing = output.tree.map { SVGRenderer(showFrames: false).render($0) } ?? ""
            box.pushedAt = Monotonic.now()
            box.last = output.reload
            rendered.signal()
        }
        try options.queue.sync { try loop.start() }
        rendered.wait()
        defer { options.queue.sync { loop.stop() } }
        var samples: [Sample] = []
        // Alternate the variants' order so each rename brings new content.
        for variant in variants {
            let staged = target.deletingLastPathComponent().appendingPathComponent(".staged.tmp")
            try? FileManager.default.removeItem(at: staged)
            try FileManager.default.copyItem(at: variant, to: staged)
            let closed = Monotonic.now()
            guard rename(staged.path, target.path) == 0 else { throw BenchError("rename failed") }
            guard rendered.wait(timeout: .now() + 30) == .success, let reload = box.last, reload.result == .swapped,
                let settled = reload.settledAt, let last = reload.lastEventAt
            else {
                throw BenchError(
                    "reload of \(variant.lastPathComponent) did not swap: \(box.last.map { "\($0)" } ?? "timeout")")
            }
            samples.append(
                Sample(
                    processing: box.pushedAt - settled, quiet: settled - last,
                    total: box.pushedAt - closed))
        }
        return samples
    }

    /// The same view rendered once from scratch (fresh pipeline, plugin loaded): the baseline.
    static func baselineRatio(view: URL, plugins: URL, cache: URL, p50: Double) {
        var options = DevLoop.Options(pluginFolders: [plugins], viewFile: view)
        options.imageCacheDirectory = cache
        options.probe = false
        options.watch = false
        options.queue = DispatchQueue(label: "reload-bench-baseline")
        let loop = DevLoop(options: options)
        var times: [Double] = []
        options.queue.sync {
            try? loop.start()
            guard let model = try? ViewModelDecoder().decode(contentsOf: view).viewModel else { return }
            for _ in 0..<5 {
                let pipeline = RenderPipeline(registry: loop.host.registry)
                let start = Monotonic.now()
                let tree = pipeline.render(model, viewport: Size(width: 375, height: 667))
                _ = SVGRenderer(showFrames: false).render(tree)
                times.append(Monotonic.now() - start)
                pipeline.tearDown()
            }
        }
        let baseline = Measure.medianOf(times)
        print(
            "  baseline: full render + SVG of the 1k view in a fresh pipeline \(Measure.ms(baseline)); reload p50 / baseline = \(Measure.ratio(p50, baseline))"
        )
    }

    /// 200 reloads of a C plugin through the loop (no watcher, no probe: only the host's own memory counts).
    static func memoryC(view: URL, plugins: URL, cache: URL, target: URL, a: URL, b: URL) throws {
        let loop = try directLoop(view: view, plugins: plugins, cache: cache, target: target, first: a)
        var rss: [Int] = []
        var heap: [Int] = []
        for i in 0..<210 {
            try install(i % 2 == 0 ? b : a, at: target)
            loop.options.queue.sync { loop.handle([change(target)]) }
            if i == 9 || i == 209 {
                rss.append(residentBytes())
                heap.append(heapInUse())
            }
        }
        let perReload = Double(rss[1] - rss[0]) / 200
        let heapPerReload = Double(heap[1] - heap[0]) / 200
        // Baseline in the same process: 200 re-renders of the same view (the view file "changed"), no reload.
        var base: [Int] = []
        var baseHeap: [Int] = []
        for i in 0..<210 {
            loop.options.queue.sync { loop.handle([change(view)]) }
            if i == 9 || i == 209 {
                base.append(residentBytes())
                baseHeap.append(heapInUse())
            }
        }
        let perRender = Double(base[1] - base[0]) / 200
        let heapPerRender = Double(baseHeap[1] - baseHeap[0]) / 200
        // And 200 renders through the pipeline alone (no event engine, no reload).
        var plain: [Int] = []
        let model = try ViewModelDecoder().decode(contentsOf: view).viewModel
        for i in 0..<210 {
            loop.options.queue.sync { _ = loop.pipeline.render(model, viewport: Size(width: 375, height: 667)) }
            if i == 9 || i == 209 { plain.append(residentBytes()) }
        }
        let perPlainRender = Double(plain[1] - plain[0]) / 200
        let components = (try? ViewModelDecoder().decode(contentsOf: view).viewModel.body.count) ?? 0
        print(
            "memory, 200 reloads of a C plugin, \(components)-component view (after 10 warm-up reloads): RSS \(rss[0] >> 10) KiB → \(rss[1] >> 10) KiB, \(String(format: "%.1f", perReload / 1024)) KiB per reload (goal: flat); malloc in use \(String(format: "%.1f", heapPerReload / 1024)) KiB per reload"
        )
        // And the loader alone: 200 load + unload cycles of the two builds in a fresh host (no view, no swap).
        let host = PluginHost(cacheDirectory: cache)
        let scratch = plugins.deletingLastPathComponent().appendingPathComponent("loader-only")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var loader: [Int] = []
        var loaderHeap: [Int] = []
        for i in 0..<210 {
            let file = scratch.appendingPathComponent("lib\(i % 2).so")
            try install(i % 2 == 0 ? b : a, at: file)
            host.unload(host.load(file: file))
            if i == 9 || i == 209 {
                loader.append(residentBytes())
                loaderHeap.append(heapInUse())
            }
        }
        let perCycle = Double(loader[1] - loader[0]) / 200
        let heapPerCycle = Double(loaderHeap[1] - loaderHeap[0]) / 200
        print(
            "  loader alone (load + unload, records kept in PluginHost.plugins): \(String(format: "%.1f", perCycle / 1024)) KiB per cycle (malloc in use \(String(format: "%.1f", heapPerCycle / 1024)) KiB); plain dlopen + dlclose of new paths in C: flat"
        )
        print(
            "  baseline: 200 re-renders of the same view without a reload: \(String(format: "%.1f", perRender / 1024)) KiB per render (event engine + pipeline; malloc in use \(String(format: "%.1f", heapPerRender / 1024)) KiB), \(String(format: "%.1f", perPlainRender / 1024)) KiB per render (pipeline alone)"
        )
    }

    /// 200 reloads of a Swift plugin: each retired image stays mapped (the Swift runtime cannot unload it).
    static func memorySwift(root: URL, view: URL, plugins: URL, cache: URL) throws {
        let builds = root.appendingPathComponent("swift")
        try FileManager.default.createDirectory(at: builds, withIntermediateDirectories: true)
        let a = builds.appendingPathComponent("a.so")
        let b = builds.appendingPathComponent("b.so")
        do {
            try swiftc(a, version: "1.0", work: builds)
            try swiftc(b, version: "2.0", work: builds)
        } catch {
            print("memory, Swift plugin: skipped (cannot build the Swift fixture: \(error))")
            return
        }
        let target = plugins.appendingPathComponent("libswiftfixture.so")
        try? FileManager.default.removeItem(at: plugins.appendingPathComponent("libswatch.so"))
        let loop = try directLoop(view: view, plugins: plugins, cache: cache, target: target, first: a)
        var rss: [Int] = []
        var mapped: [Int] = []
        for i in 0..<210 {
            try install(i % 2 == 0 ? b : a, at: target)
            loop.options.queue.sync { loop.handle([change(target)]) }
            if i == 9 || i == 209 {
                rss.append(residentBytes())
                mapped.append(loop.options.queue.sync { loop.retiredImageBytes })
            }
        }
        let perReload = Double(rss[1] - rss[0]) / 200
        let mappedPerReload = Double(mapped[1] - mapped[0]) / 200
        print(
            "memory, 200 reloads of a Swift plugin: RSS \(rss[0] >> 10) KiB → \(rss[1] >> 10) KiB, \(String(format: "%.1f", perReload / 1024)) KiB RSS per reload; retired images mapped \(mapped[1] >> 10) KiB (\(String(format: "%.1f", mappedPerReload / 1024)) KiB per reload)"
        )
    }

    static func directLoop(view: URL, plugins: URL, cache: URL, target: URL, first: URL) throws -> DevLoop {
        try install(first, at: target)
        var options = DevLoop.Options(pluginFolders: [plugins], viewFile: view)
        options.imageCacheDirectory = cache
        options.probe = false
        options.watch = false
        options.queue = DispatchQueue(label: "reload-bench-memory")
        let loop = DevLoop(options: options)
        try options.queue.sync { try loop.start() }
        return loop
    }

    static func change(_ url: URL) -> FileChange {
        let now = Monotonic.now()
        return FileChange(
            url: url, kind: .changed, hash: ContentDigest.of(file: url), stamp: FileStamp.of(url),
            lastEventAt: now, settledAt: now)
    }

    // MARK: - Helpers

    static func bigView(count: Int) -> String {
        let items = (0..<count).map { i in
            let name = i % 3 == 0 ? "swatch" : "label"
            return
                "{\"id\": \"c\(i)\", \"component\": {\"id\": \"swatch:\(name)\"}, \"text\": {\"title\": \"Item \(i)\"}}"
        }
        return "{\"id\": \"bench\", \"body\": [\n" + items.joined(separator: ",\n") + "\n]}"
    }

    static func cc(_ output: URL, _ defines: [String]) throws {
        try runTool(
            "/usr/bin/env",
            ["cc", "-shared", "-fPIC", "-O1", "-I", include.path] + defines.map { "-D\($0)" }
                + ["-o", output.path, fixture.path])
    }

    static func swiftc(_ output: URL, version: String, work: URL) throws {
        try "module CHubPlugin {\n  header \"\(include.appendingPathComponent("hub_plugin.h").path)\"\n  export *\n}\n"
            .write(to: work.appendingPathComponent("module.modulemap"), atomically: true, encoding: .utf8)
        let source = work.appendingPathComponent("Plugin\(version.filter(\.isNumber)).swift")
        try String(contentsOf: swiftFixture, encoding: .utf8).replacingOccurrences(
            of: "__FIXTURE_VERSION__", with: version
        )
        .write(to: source, atomically: true, encoding: .utf8)
        try runTool(
            "/usr/bin/env",
            [
                "swiftc", "-emit-library", "-parse-as-library", "-O",
                "-module-name", "BenchSwift" + version.filter(\.isNumber), "-I", work.path,
                source.path, "-o", output.path,
            ])
    }

    static func install(_ build: URL, at target: URL) throws {
        let staged = target.deletingLastPathComponent().appendingPathComponent(".install.tmp")
        try? FileManager.default.removeItem(at: staged)
        try FileManager.default.copyItem(at: build, to: staged)
        guard rename(staged.path, target.path) == 0 else { throw BenchError("rename to \(target.path) failed") }
    }

    static func runTool(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }

    /// Current resident set size (VmRSS), in bytes.
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return 0
    }

    /// Bytes malloc has handed out and not got back: unlike RSS, it does not count free memory the allocator
    /// keeps, so growth here is memory still referenced (or leaked), not fragmentation. From glibc's
    /// `malloc_info` totals (system current − free fast and other chunks + mmapped chunks); `mallinfo2` is not
    /// visible to Swift. 0 when unavailable.
    static func heapInUse() -> Int {
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let symbol = dlsym(nil, "malloc_info") else { return 0 }  // nil: RTLD_DEFAULT
        let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return 0 }
        _ = mallocInfo(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard let buffer else { return 0 }
        let xml = String(cString: buffer)
        // The totals for all arenas come last: take the last line of each kind.
        func last(_ prefix: String) -> Int {
            guard let line = xml.split(separator: "\n").last(where: { $0.contains(prefix) }),
                let range = line.range(of: "size=\"")
            else { return 0 }
            return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return last("<system type=\"current\"") - last("<total type=\"fast\"") - last("<total type=\"rest\"")
            + last("<total type=\"mmap\"")
    }

    final class ReloadBox: @unchecked Sendable {
        var last: DevLoop.Reload?
        var pushedAt = 0.0
        var drawing = ""
    }

}
