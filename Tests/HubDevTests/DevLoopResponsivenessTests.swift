import Foundation
import Testing

/// The dev loop keeps serving while a new build is probed, and putting back the build that serves is not an error.
@Suite("hubhost dev stays responsive", .serialized)
struct DevLoopResponsivenessTests {
    let root = TestSupport.temporaryDirectory("responsive")
    var plugins: URL { root.appendingPathComponent("plugins") }
    var view: URL { root.appendingPathComponent("view.json") }
    var swatch: URL { plugins.appendingPathComponent("libswatch.so") }

    init() throws {
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try #"{"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "One"}}]}"#
            .write(to: view, atomically: true, encoding: .utf8)
    }

    @Test func tapsAreServedWhileAProbeRunsAndTheServingBuildPutBackIsNoError() throws {
        let good = root.appendingPathComponent("good.so")
        _ = try TestSupport.compilePlugin("swatch.c", to: good, defines: ["PLUGIN_VERSION=\"1\""])
        try FileManager.default.copyItem(at: good, to: swatch)
        let dev = try DevProcess(
            view: view, plugins: plugins, cache: root.appendingPathComponent("cache"),
            extra: ["--probe-timeout", "4"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")

        // A build that hangs in init: its probe takes the whole timeout (4 s) before it is quarantined.
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["HANG_IN_INIT", "PLUGIN_VERSION=\"2\""])
        _ = TestSupport.waitUntil(timeout: 2) { dev.log.contains("probing") || dev.lines.count > 2 }
        usleep(300_000)  // the probe is running now
        let started = Date()
        let answer = try dev.tap([0])
        let waited = Date().timeIntervalSince(started)
        #expect(answer.contains("[a] selected"), "\(answer)")
        #expect(waited < 2, "the tap waited \(waited) s behind the probe")
        #expect(dev.waitForFrame(timeout: 20) { $0.problems.contains { $0.message.contains("hung in init") } } != nil)

        // Put back the build that is serving: reported as unchanged, not as an error.
        let staged = plugins.appendingPathComponent(".staged")
        try FileManager.default.copyItem(at: good, to: staged)
        #expect(rename(staged.path, swatch.path) == 0)
        #expect(
            dev.waitForFrame { $0.cause.contains("libswatch.so") && $0.cause.contains("unchanged") } != nil,
            "\(dev.log)")
        #expect(!dev.log.contains("already loaded"))
    }

    /// Builds of other plugins whose probes hang (each the whole probe timeout) do not hold a good build: it is
    /// swapped in long before they are quarantined (it waited for them all, and its probe waited for Dispatch's
    /// pool to grow a thread per second behind theirs: 20 s behind 100 such builds).
    @Test func aGoodBuildIsNotHeldByOtherBuildsThatHang() throws {
        let hanging = ["h1", "h2", "h3", "h4", "h5"]
        for name in hanging {
            try TestSupport.installPlugin(
                "swatch.c", at: plugins.appendingPathComponent("lib\(name).so"),
                defines: ["PLUGIN_VERSION=\"1\"", "NAMESPACE=\"\(name)\"", "PLUGIN_ID=\"test.\(name)\""])
        }
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"1\""])
        let dev = try DevProcess(
            view: view, plugins: plugins, cache: root.appendingPathComponent("cache"),
            extra: ["--probe-timeout", "15"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        for name in hanging {
            try TestSupport.installPlugin(
                "swatch.c", at: plugins.appendingPathComponent("lib\(name).so"),
                defines: [
                    "PLUGIN_VERSION=\"2\"", "NAMESPACE=\"\(name)\"", "PLUGIN_ID=\"test.\(name)\"", "HANG_IN_INIT",
                ])
        }
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"2\""])
        #expect(TestSupport.waitUntil(timeout: 40) { dev.log.contains("hung in init") }, "\(dev.log)")
        // Its own probe takes a fraction of a second, then at most a second for builds of the same moment; not
        // the 15 s the others' probes take.
        let log = dev.log
        let line = try #require(log.split(separator: "\n").first { $0.contains("libswatch.so 1 → 2: swapped in") })
        let ms = try #require(Double(line.split(separator: " in ")[1].split(separator: " ")[0]), "\(line)")
        #expect(ms < 8_000, "the good build waited for the hanging probes: \(log)")
    }

    @Test func galleryModeShowsEveryStoryAndFollowsRebuilds() throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0xFF0000FFu", "PLUGIN_VERSION=\"1\""])
        let dev = try DevProcess(
            view: nil, plugins: plugins, cache: root.appendingPathComponent("cache"), extra: ["--widths", "320,375"])
        defer { dev.stop() }
        // swatch.c declares no stories: the host's samples stand in, at both widths, on one sheet.
        let first = dev.waitForFrame { $0.html.contains("swatch:swatch — full (host sample) @ 320") }
        #expect(first != nil, "\(dev.log)")
        #expect(first?.html.contains("swatch:label — empty (host sample) @ 375") == true)
        #expect(first?.html.contains("#ff0000") == true)
        #expect(first?.boxes.isEmpty == true)
        // The page's width menu shows the first width, not the sheet's.
        #expect(first?.viewWidth == 320 && (first?.width ?? 0) > 320, "\(String(describing: first?.width))")
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0x00FF00FFu", "PLUGIN_VERSION=\"2\""])
        let rebuilt = dev.waitForFrame { $0.html.contains("#00ff00") }
        #expect(rebuilt != nil, "\(dev.log)")
        #expect(rebuilt?.html.contains("#ff0000") == false)
    }
}
