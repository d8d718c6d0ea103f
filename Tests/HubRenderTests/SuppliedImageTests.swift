import Foundation
import HubRender
import HubTestKit
import Testing

/// A remote image (`https:`) is never fetched by hubhost: a plugin's image-loader service supplies it. Every
/// drawing shows what it supplied, as the component was told it loaded (they drew the placeholder).
@Suite struct SuppliedImageTests {
    @Test func drawingsShowTheImageAPluginsLoaderSupplied() throws {
        let folder = try TemporaryFolder("hubhost-supplied")
        let plugins = folder.appending("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try FixtureCompiler.compile(
            TestPaths.packageRoot.appendingPathComponent("Tests/HubRenderTests/Fixtures/remote_art_plugin.c"),
            to: plugins.appendingPathComponent("libart.so"))
        let view = folder.appending("cover.json")
        try Data(
            #"{"body": [{"id": "a", "component": {"id": "art:cover"}, "images": {"main": {"uri": "https://art.test/a.png"}}}]}"#
                .utf8
        ).write(to: view)
        try Data(#"{"event": "snapshot", "name": "shown"}"#.utf8).write(to: folder.appending("cover.jsonl"))
        let common = ["--plugins", plugins.path, "--plugin-cache", folder.appending("cache").path]
        func run(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.hubhost(arguments + common, currentDirectory: folder.url)
        }
        // The fixture's loader gives a 2×2 PNG, every pixel #00FF00.
        let rendered = try run(["render", view.path, "--format", "svg", "-o", "render.svg"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let events = try run([
            "events", view.path, folder.appending("cover.jsonl").path, "--format", "svg", "-o", "events.svg",
        ])
        #expect(events.status == 0, "\(events.stderr)")
        for file in ["render.svg", "events.svg"] {
            let svg = try String(contentsOf: folder.appending(file), encoding: .utf8)
            #expect(svg.contains("<image ") && svg.contains("href=\"data:image/png;base64,"), "\(file): \(svg)")
        }
        let recorded = try run([
            "snapshot", "record", view.path, folder.appending("cover.jsonl").path, "--out", "golden",
        ])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let frame = try run(["render", view.path, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(frame.stdout.utf8)) as? [String: Any])
        let body = try #require(json["body"] as? [[String: Any]])
        let box = try #require(body.first?["frame"] as? [String: Double])
        let (x, y) = (Int(box["x"]! + box["width"]! / 2), Int(box["y"]! + box["height"]! / 2))
        for name in ["cover@375", "cover.shown@375"] {
            let image = try #require(PNGImage(png: try Data(contentsOf: folder.appending("golden/\(name).png"))))
            #expect(image.color(x: x, y: y)?.description == "#00ff00ff", "\(name)")
        }
    }
}
