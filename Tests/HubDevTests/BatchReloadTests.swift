import Foundation
import HubCore
import Testing

@testable import HubHost

/// Plugins rebuilt together (one build of several plugins) are probed together and the view is drawn once for
/// all of them, with a line for each: 200 plugins rebuilt at once were 200 renders of the view. Builds that settle
/// while others are being probed join them.
@Suite struct BatchReloadTests {
    @Test func pluginsRebuiltTogetherAreDrawnInOneRenderWithALineEach() throws {
        let root = TestSupport.temporaryDirectory("batch-reload")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let names = (0..<4).map { "s\($0)" }
        func build(_ name: String, version: String, _ more: [String] = []) throws {
            try TestSupport.installPlugin(
                "swatch.c", at: plugins.appendingPathComponent("lib\(name).so"),
                defines: ["NAMESPACE=\"\(name)\"", "PLUGIN_ID=\"test.batch.\(name)\"", "PLUGIN_VERSION=\"\(version)\""]
                    + more)
        }
        for name in names { try build(name, version: "1") }
        let view = root.appendingPathComponent("view.json")
        let items = names.map { "{\"id\": \"\($0)\", \"component\": {\"id\": \"\($0):swatch\"}}" }
        try ("{\"id\": \"v\", \"body\": [" + items.joined(separator: ",") + "]}").write(
            to: view, atomically: true, encoding: .utf8)

        var options = DevLoop.Options(pluginFolders: [plugins], viewFile: view)
        options.imageCacheDirectory = root.appendingPathComponent("cache")
        options.watch = false
        options.queue = DispatchQueue(label: "batch-reload")
        let loop = DevLoop(options: options)
        let outputs = Outputs()
        loop.onRender = { outputs.append($0) }
        try options.queue.sync { try loop.start() }
        #expect(outputs.count == 1)

        // Three good rebuilds and one that crashes in init, settling as a parallel build's do: two together, and
        // two more while those are being probed.
        for name in names.dropLast() { try build(name, version: "2") }
        try build(names[3], version: "2", ["CRASH_IN_INIT"])
        let changes = names.map { FileChange.settledNow(plugins.appendingPathComponent("lib\($0).so")) }
        options.queue.sync { loop.handle(Array(changes.prefix(2))) }
        options.queue.sync { loop.handle(Array(changes.suffix(2))) }

        #expect(TestSupport.waitUntil(timeout: 30) { outputs.count >= 2 })
        Thread.sleep(forTimeInterval: 0.5)  // a render per plugin would come right after the first
        let renders = outputs.all.dropFirst()
        #expect(renders.count == 1, "\(renders.map { $0.reloads.map(\.description) })")
        let reloads = renders.first?.reloads ?? []
        #expect(reloads.map(\.file).sorted() == names.map { "lib\($0).so" }, "a line for each plugin of the batch")
        #expect(reloads.filter { $0.result == .swapped }.map(\.file).sorted() == ["libs0.so", "libs1.so", "libs2.so"])
        #expect(reloads.first { $0.file == "libs3.so" }?.result == .quarantined, "\(reloads.map(\.description))")
        // The render drew the new builds: every plugin row of a swapped one serves version 2.
        let rows = renders.first?.plugins ?? []
        #expect(rows.filter { $0.version == "2" && $0.state == "active" }.count == 3, "\(rows)")
        #expect(rows.first { $0.file == "libs3.so" }?.version == "1", "the build that crashed keeps its old version")
    }
}

/// Renders as the loop reports them (on its queue), read from the test's thread.
private final class Outputs: @unchecked Sendable {
    private let lock = NSLock()
    private var outputs: [DevLoop.Output] = []
    func append(_ output: DevLoop.Output) { lock.withLock { outputs.append(output) } }
    var all: [DevLoop.Output] { lock.withLock { outputs } }
    var count: Int { all.count }
}
