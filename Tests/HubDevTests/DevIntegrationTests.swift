import Foundation
import Testing

/// The real `hubhost dev` process on a temp folder: rebuilds, broken builds, half-written files, deletions,
/// Swift plugins, and the server-sent event stream.
@Suite("hubhost dev", .serialized)
struct DevIntegrationTests {
    static let red = "#ff0000", green = "#00ff00", blue = "#0000ff"
    let root = TestSupport.temporaryDirectory("dev")
    var plugins: URL { root.appendingPathComponent("plugins") }
    var cache: URL { root.appendingPathComponent("cache") }
    var view: URL { root.appendingPathComponent("view.json") }
    var swatch: URL { plugins.appendingPathComponent("libswatch.so") }

    init() throws {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("plugins"), withIntermediateDirectories: true)
        try writeView(title: "First")
    }

    func writeView(title: String, extra: String = "") throws {
        try """
        {"id": "dev", "body": [
          {"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "\(title)"}},
          {"id": "b", "component": {"id": "swatch:label"}, "text": {"title": "Label"}},
          {"id": "c", "component": {"id": "swiftfixture:label", "category": "card"}, "text": {"title": "Swift"}}\(extra)
        ]}
        """.write(to: view, atomically: true, encoding: .utf8)
    }

    func build(color: String, version: String, _ more: [String] = []) throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch,
            defines: ["SWATCH_COLOR=\(color)", "PLUGIN_VERSION=\"\(version)\""] + more)
    }

    @Test func aRebuiltPluginSwapsInWithItsNewColourAndTheUIStateSurvives() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(
            dev.waitForFrame { $0.html.contains(Self.red) && $0.html.contains("First taps:0") } != nil, "\(dev.log)")

        // A tap (selection) bumps the swatch's counter, its restorable UI state.
        #expect(try dev.tap([0]).contains("[a] selected"), "the tap goes through the event pipeline")
        #expect(dev.waitForFrame { $0.html.contains("First taps:1") } != nil)

        try build(color: "0x00FF00FFu", version: "2")
        let swapped = dev.waitForFrame { $0.cause.contains("swapped") }
        #expect(swapped?.html.contains(Self.green) == true)
        #expect(swapped?.html.contains(Self.red) == false)
        #expect(swapped?.html.contains("First taps:1") == true, "the UI state must survive the swap")
        #expect(
            dev.lines.contains { $0.hasPrefix("libswatch.so 1 → 2: swapped in ") && $0.contains(" ms") }, "\(dev.log)")

        // Editing the view file re-renders with the new text, same plugin version.
        try writeView(title: "Edited")
        #expect(dev.waitForFrame { $0.html.contains("Edited taps:") && $0.cause.contains("view updated") } != nil)
        // A JSON error shows as a problem; the last good view keeps rendering.
        try "{\"body\": [".write(to: view, atomically: true, encoding: .utf8)
        let broken = dev.waitForFrame { $0.problems.contains { $0.kind == "json" } }
        #expect(broken?.html.contains("Edited") == true)
    }

    @Test func aBuildRefusedForItsPermissionsLoadsOnceTheyAreFixed() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains(Self.red) } != nil, "\(dev.log)")

        // A build its group may write: refused, the old one keeps serving.
        let staging = plugins.appendingPathComponent(".libswatch.so.staging")
        _ = try TestSupport.compilePlugin(
            "swatch.c", to: staging, defines: ["SWATCH_COLOR=0x00FF00FFu", "PLUGIN_VERSION=\"2\""])
        chmod(staging.path, 0o775)
        #expect(rename(staging.path, swatch.path) == 0)
        #expect(TestSupport.waitUntil { dev.lines.contains { $0.contains("writable by its group") } }, "\(dev.log)")
        // Doing what the message says is enough: no rebuild, no restart.
        chmod(swatch.path, 0o755)
        let swapped = dev.waitForFrame { $0.cause.contains("swapped") }
        #expect(swapped?.html.contains(Self.green) == true, "\(dev.log)")
    }

    @Test func buildsThatCrashOrHangAreQuarantinedAndThePreviousVersionKeepsServing() throws {
        try build(color: "0x00FF00FFu", version: "2")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache, extra: ["--probe-timeout", "3"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains(Self.green) } != nil, "\(dev.log)")

        try build(color: "0x0000FFFFu", version: "3", ["CRASH_IN_INIT"])
        let crashed = dev.waitForFrame { $0.problems.contains { $0.message.contains("crashed with SIGSEGV in init") } }
        #expect(crashed != nil, "\(dev.log)")
        #expect(crashed?.html.contains(Self.green) == true, "version 2 keeps serving")
        // The panel says so too: the serving build is not the quarantined one.
        let row = crashed?.plugins?.first { $0.file == "libswatch.so" }
        #expect(
            row?.state != "quarantined" && row?.reason?.contains("keeps serving") == true, "\(String(describing: row))")

        try build(color: "0x0000FFFFu", version: "4", ["HANG_IN_INIT"])
        let hung = dev.waitForFrame { $0.problems.contains { $0.message.contains("hung in init") } }
        #expect(hung != nil, "\(dev.log)")
        #expect(hung?.html.contains(Self.green) == true)
        #expect(dev.lines.contains { $0.contains("quarantined") && $0.contains("2 keeps serving") })

        // A good build clears the quarantine and swaps in.
        try build(color: "0x0000FFFFu", version: "5")
        let fixed = dev.waitForFrame { $0.html.contains(Self.blue) }
        #expect(fixed?.problems.allSatisfy { $0.kind == "warning" } == true, "only warnings")
        // As `hubhost render` says it: the view names a component whose plugin this folder does not have.
        #expect(
            fixed?.problems.contains {
                $0.message.contains(#"$.body[2].component.id: "swiftfixture:label": no loaded plugin serves"#)
            } == true, "\(fixed?.problems.map(\.message) ?? [])")
        #expect(dev.process.isRunning)
    }

    @Test func aHalfWrittenPluginIsNotLoadedUntilItIsComplete() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains(Self.red) } != nil, "\(dev.log)")

        let full = try Data(
            contentsOf: TestSupport.compilePlugin(
                "swatch.c", to: root.appendingPathComponent("blue.bin"),
                defines: ["SWATCH_COLOR=0x0000FFFFu", "PLUGIN_VERSION=\"2\""]))
        // Written in place and closed halfway, as a slow linker or copy would leave it.
        let half = plugins.appendingPathComponent("libhalf.so")
        try full.prefix(full.count / 2).write(to: half)
        usleep(600_000)
        // An edit of the view forces a render: the half file must not have been loaded, probed or quarantined.
        try writeView(title: "Marker")
        let marker = dev.waitForFrame { $0.html.contains("Marker") }
        #expect(marker?.problems.allSatisfy { $0.kind == "warning" } == true)
        #expect(!dev.log.contains("libhalf.so"), "\(dev.log)")

        let handle = try FileHandle(forWritingTo: half)
        try handle.seekToEnd()
        try handle.write(contentsOf: full.suffix(from: full.count / 2))
        try handle.close()
        // Complete now: it loads (and is rejected, since it claims the namespace libswatch.so holds).
        #expect(TestSupport.waitUntil { dev.log.contains("libhalf.so") }, "\(dev.log)")
        #expect(
            dev.lines.contains { $0.hasPrefix("libhalf.so 2: rejected") && $0.contains("namespace 'swatch'") },
            "\(dev.log)")
    }

    @Test func deletingAPluginUnloadsItAndItsComponentsFallBack() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains(Self.red) } != nil, "\(dev.log)")
        try FileManager.default.removeItem(at: swatch)
        let fallen = dev.waitForFrame { $0.cause.contains("unloaded") }
        #expect(fallen != nil, "\(dev.log)")
        #expect(fallen?.html.contains(Self.red) == false)
        #expect(fallen?.html.contains("taps:") == false, "the fallback component draws the model, not the swatch")
        #expect(fallen?.boxes.map(\.id) == ["a", "b", "c"], "every model still renders")
        #expect(fallen?.plugins?.contains { $0.file == "libswatch.so" } == false, "a deleted file leaves the panel")
        #expect(dev.lines.contains { $0.contains("libswatch.so: unloaded") && $0.contains("fall back") }, "\(dev.log)")
    }

    @Test func aSwiftPluginReloadsAsNewCodeWithoutCrashingTheHost() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let swift = plugins.appendingPathComponent("libswiftfixture.so")
        try TestSupport.installSwiftPlugin(version: "1.0", at: swift)
        // A zero budget: the first retired Swift image already passes it.
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache, extra: ["--retired-budget-mb", "0"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("swift label 1.0") } != nil, "\(dev.log)")
        #expect(!dev.log.contains("warning: retired Swift images"))

        try TestSupport.installSwiftPlugin(version: "2.0", at: swift)
        let reloaded = dev.waitForFrame(timeout: 60) { $0.html.contains("swift label 2.0") }
        #expect(reloaded != nil, "\(dev.log)")
        #expect(
            dev.lines.contains { $0.hasPrefix("libswiftfixture.so 1.0 → 2.0: swapped") && $0.contains("pinned") },
            "\(dev.log)")
        #expect(dev.lines.contains { $0.hasPrefix("warning: retired Swift images keep") }, "\(dev.log)")
        #expect(reloaded?.problems.contains { $0.kind == "memory" } == true)
        // Said when it changes, not again with every tap.
        let said = { dev.lines.filter { $0.hasPrefix("warning: retired Swift images keep") }.count }
        let before = said()
        _ = try dev.tap([0])
        _ = try dev.tap([0])
        #expect(TestSupport.waitUntil(timeout: 5) { dev.lines.filter { $0.contains(": tapped") }.count >= 2 })
        #expect(said() == before, "\(dev.log)")

        // The host still works: another reload of the C plugin goes through.
        try build(color: "0x00FF00FFu", version: "2")
        #expect(dev.waitForFrame { $0.html.contains(Self.green) && $0.html.contains("swift label 2.0") } != nil)
        #expect(dev.process.isRunning)
    }

    @Test func serverSentEventsPushEachNewRender() throws {
        try build(color: "0xFF0000FFu", version: "1")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        let events = try EventStreamReader(port: dev.port)
        defer { events.close() }
        #expect(
            TestSupport.waitUntil { events.renderEvents.contains { $0.contains(Self.red) } },
            "the current render comes first")
        try build(color: "0x00FF00FFu", version: "2")
        #expect(
            TestSupport.waitUntil {
                events.renderEvents.contains { $0.contains(Self.green) && $0.contains("swapped") }
            },
            "\(events.renderEvents.count) events")
    }
}
