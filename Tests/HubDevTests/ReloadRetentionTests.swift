import Foundation
import HubCore
import Testing

@testable import HubHost

/// Hot reload must not keep anything per component per reload: after any number of swaps of a C plugin serving
/// a view, the reuse pool, the sizing cache and the registry's observers have the sizes they had after the first
/// one, and the unloaded version keeps no per-component table (its record stays in `PluginHost.plugins` until the
/// next). The private copies of its builds are kept to the newest few. Counts, not timings or RSS.
@Suite struct ReloadRetentionTests {
    @Test func reloadingACPluginKeepsTheRenderPathsTablesFlat() throws {
        let root = TestSupport.temporaryDirectory("reload-retention")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let builds = try ["0x00FF00FFu", "0x0000FFFFu"].enumerated().map { i, colour in
            try TestSupport.compilePlugin(
                "swatch.c", to: root.appendingPathComponent("build\(i).so"),
                defines: ["SWATCH_COLOR=\(colour)", "PLUGIN_VERSION=\"\(i + 1)\""])
        }
        let target = plugins.appendingPathComponent("libswatch.so")
        try install(builds[0], at: target)
        let view = root.appendingPathComponent("view.json")
        let items = (0..<300).map { i in
            "{\"id\": \"c\(i)\", \"component\": {\"id\": \"swatch:\(i % 3 == 0 ? "swatch" : "label")\"}, \"text\": {\"title\": \"Item \(i)\"}}"
        }
        try ("{\"id\": \"v\", \"body\": [" + items.joined(separator: ",") + "]}").write(
            to: view, atomically: true, encoding: .utf8)

        let (loop, options) = Self.quietLoop(plugins: plugins, view: view, cache: root.appendingPathComponent("cache"))
        var swaps: [DevLoop.Reload.Result] = []
        loop.onRender = { swaps.append($0.reload.result) }
        try options.queue.sync { try loop.start() }

        struct Counts: Equatable { var wrappers, idleEntries, idleHints, sizing, uiStates, observers, live: Int }
        func counts() -> Counts {
            let pool = loop.pipeline.pool
            return Counts(
                wrappers: pool.wrapperCount, idleEntries: pool.idleEntryCount, idleHints: pool.idleHintCount,
                sizing: loop.pipeline.sizing.count, uiStates: pool.uiStates.count,
                observers: loop.host.registry.unregisterObserverCount, live: loop.pipeline.liveWrappers.count)
        }
        func reload(_ i: Int) throws {
            try install(builds[i % 2], at: target)
            options.queue.sync { loop.handle([.settledNow(target)]) }
        }

        try reload(1)
        let first = options.queue.sync { counts() }
        #expect(first.wrappers == 300 && first.live == 300)
        for i in 2..<12 {
            try reload(i)
            options.queue.sync { loop.handle([.settledNow(view)]) }  // and an edit of the view file
            #expect(options.queue.sync { counts() } == first)
        }
        #expect(swaps.filter { $0 == .swapped }.count == 11)
        // The unloaded version: no live components, and no table kept for the 300 it had. Only the last one is
        // kept: a record per reload grew a long session's worker.
        let unloaded = options.queue.sync { loop.host.plugins.filter { !$0.isLoaded } }
        #expect(unloaded.count == 1)
        for record in unloaded {
            #expect(record.liveComponentCount == 0)
            #expect(record.liveComponentCapacity == 0)
        }
    }

    /// Each rebuild makes a private copy; a session keeps the newest `copiesKeptPerPlugin` of them (a week of
    /// rebuilds of a large plugin took gigabytes), the one serving among them.
    @Test func aSessionKeepsTheNewestCopiesOfAPlugin() throws {
        let root = TestSupport.temporaryDirectory("reload-copies")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let target = plugins.appendingPathComponent("libswatch.so")
        func build(_ i: Int) throws -> URL {
            try TestSupport.compilePlugin(
                "swatch.c", to: root.appendingPathComponent("build\(i).so"),
                defines: ["SWATCH_COLOR=0x\(String(i, radix: 16))00FFu", "PLUGIN_VERSION=\"\(i)\""])
        }
        try install(try build(0), at: target)
        let view = root.appendingPathComponent("view.json")
        try #"{"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "A"}}]}"#.write(
            to: view, atomically: true, encoding: .utf8)
        let cache = root.appendingPathComponent("cache")
        let (loop, options) = Self.quietLoop(plugins: plugins, view: view, cache: cache)
        try options.queue.sync { try loop.start() }
        for i in 1...12 {
            try install(try build(i), at: target)
            options.queue.sync { loop.handle([.settledNow(target)]) }
        }
        PluginHost.pruning.sync {}  // the pruning after the last reload is done
        let copies = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter {
            $0.hasPrefix("libswatch-") && $0.hasSuffix(".so")
        }
        #expect(copies.count == PluginHost.copiesKeptPerPlugin, "\(copies.sorted())")
        let serving = try #require(options.queue.sync { loop.host.loadedPlugins.first?.privateCopy })
        #expect(copies.contains(serving.lastPathComponent))
        #expect(options.queue.sync { loop.host.loadedPlugins.first?.version } == "12")
    }

    /// A change that settled as another build while the file was written back to the one serving (a build that
    /// deletes and writes again) is the serving build, unchanged: it was refused as "the same image is already
    /// loaded from" its own path.
    @Test func aFileWrittenBackToTheServingBuildIsUnchanged() throws {
        let root = TestSupport.temporaryDirectory("reload-back")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let target = plugins.appendingPathComponent("libswatch.so")
        try TestSupport.compilePlugin("swatch.c", to: target, defines: ["PLUGIN_VERSION=\"1\""])
        let view = root.appendingPathComponent("view.json")
        try #"{"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "A"}}]}"#.write(
            to: view, atomically: true, encoding: .utf8)
        let (loop, options) = Self.quietLoop(plugins: plugins, view: view, cache: root.appendingPathComponent("cache"))
        var results: [DevLoop.Reload] = []
        loop.onRender = { results.append(contentsOf: $0.reloads) }
        try options.queue.sync { try loop.start() }
        let now = Monotonic.now()
        let settledAsAnother = FileChange(
            url: target, kind: .changed, hash: String(repeating: "0", count: 64), stamp: FileStamp.of(target),
            lastEventAt: now, settledAt: now)
        options.queue.sync { loop.handle([settledAsAnother]) }
        let last = try #require(results.last { $0.file == "libswatch.so" })
        #expect(last.result == .unchanged, "\(last)")
        #expect(options.queue.sync { loop.host.loadedPlugins.count } == 1)
    }

    /// An in-process dev loop over `plugins` and `view`, neither probing nor watching (a test hands it the
    /// changes), with its options (its queue).
    static func quietLoop(plugins: URL, view: URL, cache: URL) -> (DevLoop, DevLoop.Options) {
        var options = DevLoop.Options(pluginFolders: [plugins], viewFile: view)
        options.imageCacheDirectory = cache
        options.probe = false
        options.watch = false
        options.queue = DispatchQueue(label: "reload-retention")
        return (DevLoop(options: options), options)
    }

    func install(_ build: URL, at target: URL) throws {
        let staged = target.deletingLastPathComponent().appendingPathComponent(".install.tmp")
        try? FileManager.default.removeItem(at: staged)
        try FileManager.default.copyItem(at: build, to: staged)
        guard rename(staged.path, target.path) == 0 else { throw TestFailure("rename to \(target.path) failed") }
    }
}
