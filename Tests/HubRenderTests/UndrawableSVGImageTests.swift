import Foundation
import HubTestKit
import Testing

/// An SVG image librsvg aborts on (a text of font size 1e9, drawn larger than its own size) cost the whole PNG:
/// "hubhost's worker crashed with SIGABRT outside plugin code", exit 2, nothing drawn. Each SVG image is drawn
/// alone in a child first; one that fails there is drawn as its placeholder and named.
@Suite struct UndrawableSVGImageTests {
    @Test func anSVGImageLibrsvgCrashesOnIsAPlaceholderNotACrash() throws {
        let folder = try TemporaryFolder("hubhost-undrawable-svg")
        let plugins = folder.appending("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestPaths.binDirectory.appendingPathComponent("libHubDemoSwift.so"),
            to: plugins.appendingPathComponent("libHubDemoSwift.so"))
        try Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text font-size="1e9">W</text></svg>"#.utf8
        )
        .write(to: folder.appending("big-font.svg"))
        try Data(
            #"{"body": [{"id": "i", "component": {"id": "demo:image"}, "images": {"main": {"uri": "big-font.svg"}}}]}"#
                .utf8
        )
        .write(to: folder.appending("view.json"))
        let common = ["--plugins", plugins.path, "--plugin-cache", folder.appending("cache").path]
        let render = try ProcessRunner.hubhost(
            ["render", folder.appending("view.json").path, "--format", "png", "-o", "out.png"] + common,
            currentDirectory: folder.url)
        // (Where librsvg draws it, it is simply drawn: the point is that the PNG is made either way.)
        #expect(render.status <= 1 && !render.stderr.contains("hubhost bug"), "\(render.stderr)")
        #expect(try Data(contentsOf: folder.appending("out.png")).starts(with: [0x89, 0x50, 0x4E, 0x47]))
        guard render.stderr.contains("image \"big-font.svg\": librsvg crashes drawing this SVG image") else { return }
        #expect(render.status == 1)
        // Not recorded as a golden: its placeholder is not the view.
        let record = try ProcessRunner.hubhost(
            ["snapshot", "record", folder.appending("view.json").path, "--out", "golden"] + common,
            currentDirectory: folder.url)
        #expect(record.status == 2 && record.stderr.contains("holds an image librsvg cannot draw"))
        #expect(!FileManager.default.fileExists(atPath: folder.appending("golden/view@375.png").path))
    }
}
