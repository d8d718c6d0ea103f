import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

@Suite(.pluginCode) struct ImageTests {
    /// A PNG header (signature + IHDR) for a 16×8 image: enough for the host to read the size.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
        0, 0, 0, 16, 0, 0, 0, 8, 8, 2, 0, 0, 0, 0, 0, 0, 0,
    ]

    @Test func preferredSizesSharedLoadsAndFailuresReported() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        try Data(Self.png).write(to: fixture.root.appendingPathComponent("img.png"))
        let dataURI = "data:image/png;base64,\(Data(Self.png).base64EncodedString())"
        let engine = try fixture.engine(
            """
            {"id": "images", "body": [
              {"id": "p0", "component": {"id": "b:probe"}, "images": {"main": {"uri": "img.png"}, "background": {"uri": "\(dataURI)"},
                                                                       "custom": {"icon": {"uri": "https://example.com/icon.png"}}}},
              {"id": "p1", "component": {"id": "b:probe"}, "images": {"main": {"uri": "img.png"}}},
              {"id": "p2", "component": {"id": "b:probe"}, "images": {"main": {"uri": "missing.png"}}},
              {"id": "p3", "component": {"id": "b:probe"}, "custom": {"noImages": 1}, "images": {"main": {"uri": "img.png"}}}]}
            """, imageDelivery: .manual)
        // Each component is asked its preferred size first, in Hub's order: main, background, custom.
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("preferredImageSize") } == [
                "preferredImageSize 0 -", "preferredImageSize 1 -", "preferredImageSize 2 icon",
            ])
        #expect(plugin.lines(for: "p3").contains("preferredImageSize 0 -"))
        // One load per URL; p3 wants no image (size zero).
        #expect(engine.images.pendingURIs == ["img.png", dataURI, "https://example.com/icon.png", "missing.png"])
        #expect(engine.images.source.loadCount["img.png"] == nil, "nothing loads before the load finishes")

        engine.apply(.image(uri: "img.png", ok: true))
        #expect(engine.images.source.loadCount["img.png"] == 1)
        #expect(plugin.lines(for: "p0").contains("imageLoaded 0 img.png 33 bytes 16x8 animated=0"))
        #expect(plugin.lines(for: "p1").contains("imageLoaded 0 img.png 33 bytes 16x8 animated=0"))
        #expect(!plugin.lines(for: "p3").contains { $0.hasPrefix("imageLoaded") })
        engine.apply(.image(uri: dataURI, ok: true))
        #expect(plugin.lines(for: "p0").contains("imageLoaded 1 \(dataURI) 33 bytes 16x8 animated=0"))

        engine.apply(.image(uri: "https://example.com/icon.png", ok: true))
        #expect(
            engine.trace!.messages(.image).last
                == "https://example.com/icon.png failed: no loader for scheme 'https' (hubhost fetches nothing itself: a "
                + "plugin's image-loader service can supply it); dropped 1 waiting")
        engine.apply(.image(uri: "missing.png", ok: true))
        let missing = try #require(engine.trace!.messages(.image).last)
        #expect(
            missing
                == "missing.png failed: image \"missing.png\" cannot be read: No such file or directory; dropped 1 waiting"
        )
        #expect(plugin.lines.filter { $0.contains("imageLoaded") }.count == 3)
        engine.apply(.image(uri: "img.png", ok: true))
        #expect(engine.trace!.messages(.note).last == "no component is waiting for img.png")
    }

    @Test func aResultForAModelTheInstanceNoLongerShowsIsDropped() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        try Data(Self.png).write(to: fixture.root.appendingPathComponent("a.png"))
        let engine = try fixture.engine(
            probeList(30) { i in
                ", \"images\": {\"main\": {\"uri\": \"\(i == 0 ? "a.png" : "b\(i).png")\"}}"
            }, viewport: Size(width: 375, height: 300), imageDelivery: .manual)
        let first = try #require(engine.pipeline.bodyWrappers[0])
        // Scroll one row at a time: the instance that showed p0 is the first one reused.
        for step in 1...10 { engine.apply(.scroll(y: Double(step) * 100)) }
        #expect(first.model?.identifier != "p0")
        #expect(engine.images.pendingURIs.contains("a.png"))
        plugin.clear()
        #expect(engine.images.complete(uri: "a.png", ok: true) == 0)
        #expect(engine.trace!.messages(.image).last == "a.png loaded (33 bytes, 16×8): delivered to 0, dropped 1 stale")
        #expect(!plugin.lines.contains { $0.contains("imageLoaded") })
    }

    @Test func aSlowLoadIsDeliveredAnimated() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        try Data(Self.png).write(to: fixture.root.appendingPathComponent("a.png"))
        let engine = try fixture.engine(
            probeList(1) { _ in ", \"images\": {\"main\": {\"uri\": \"a.png\"}}" },
            imageDelivery: .after(seconds: 0.1))
        #expect(!plugin.lines.contains { $0.contains("imageLoaded") })
        engine.apply(.advance(seconds: 0.1))
        #expect(plugin.lines(for: "p0").contains("imageLoaded 0 a.png 33 bytes 16x8 animated=1"))
    }
}
