import Foundation
import HubTestKit
import Testing

/// The example views rendered with the shipped plugins, in JSON, SVG and text, byte for byte against the files in
/// Golden/ (made by this same command). Writers get faster; their output does not change. After a deliberate
/// change of the output, record again with HUBHOST_RECORD_GOLDEN=1 and review the diff.
@Suite("golden output", .serialized)
struct GoldenOutputTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let views = ["home", "carousel", "traits", "fallback", "custom-data", "images", "large"]
    static let formats = ["json", "svg", "text"]

    @Test func exampleViewsRenderByteIdenticalToTheGoldenFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-golden-\(UUID().uuidString)")
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
            try FileManager.default.copyItem(
                at: TestPaths.binDirectory.appendingPathComponent(name), to: plugins.appendingPathComponent(name))
        }
        let recording = ProcessInfo.processInfo.environment["HUBHOST_RECORD_GOLDEN"] == "1"
        for view in Self.views {
            for format in Self.formats {
                let output = root.appendingPathComponent("\(view).\(format)")
                let run = try ProcessRunner.hubhost(
                    [
                        "render", "examples/\(view).json", "--format", format, "-o", output.path, "--plugins",
                        plugins.path, "--plugin-cache", root.appendingPathComponent("cache").path,
                    ], currentDirectory: TestPaths.packageRoot)
                // The fallback example names components no plugin provides on purpose: each gets a warning.
                #expect(run.status == 0, "\(view).\(format): \(run.stderr)")
                if view == "fallback" {
                    #expect(
                        run.stderr.contains(#"$.body[2].component.id: warning: "demo:nope": namespace "demo""#),
                        "\(run.stderr)")
                    #expect(
                        !run.stderr.contains("$.body[4]") && !run.stderr.contains("$.body[5]"),
                        "defaults: \(run.stderr)")
                }
                let actual = try Data(contentsOf: output)
                let expectedFile = Self.golden.appendingPathComponent("\(view).\(format)")
                if recording {
                    try actual.write(to: expectedFile)
                    continue
                }
                let expected = try Data(contentsOf: expectedFile)
                #expect(
                    actual == expected,
                    "\(view).\(format) differs from Golden/\(view).\(format) (\(actual.count) bytes against \(expected.count)); first difference at byte \(Self.firstDifference(actual, expected))"
                )
            }
        }
    }

    /// The shipped carousel takes numbers from a server's custom data: out of their ranges they are its defaults
    /// (an itemHeight of 1e308 made every PNG of the view impossible), and thousands of children cost it time in
    /// proportion (5,000 summed 12.5 million widths per update: over 2 s, a hang to --call-timeout, exit 5).
    @Test func theCarouselTakesAnyNumberAndThousandsOfChildren() throws {
        let folder = try TemporaryFolder("hubhost-carousel")
        let plugins = folder.appending("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestPaths.binDirectory.appendingPathComponent("libHubDemoSwift.so"),
            to: plugins.appendingPathComponent("libHubDemoSwift.so"))
        let children = (0..<5_000).map {
            #"{"id": "k\#($0)", "component": {"id": "demo:card"}, "text": {"title": "\#($0)"}}"#
        }
        func render(custom: String, format: String) throws -> ProcessResult {
            let view = folder.appending("view.json")
            try Data(
                #"{"body": [{"id": "c", "component": {"id": "demo:carousel"}, "custom": {\#(custom)}, "children": [\#(children.joined(separator: ","))]}]}"#
                    .utf8
            ).write(to: view)
            return try ProcessRunner.hubhost(
                [
                    "render", view.path, "--format", format, "-o", folder.appending("out.\(format)").path, "--plugins",
                    plugins.path, "--plugin-cache", folder.appending("cache").path,
                ], currentDirectory: folder.url)
        }
        func carouselHeight() throws -> Double? {
            let tree = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appending("out.json")))
            let body = (tree as? [String: Any])?["body"] as? [[String: Any]]
            return (body?.first?["frame"] as? [String: Any])?["height"] as? Double
        }
        let odd = try render(custom: #""itemHeight": 1e308, "parallax": -1e300, "scrollOffset": -5"#, format: "json")
        #expect(odd.status == 0, "\(odd.stderr)")
        let oddHeight = try carouselHeight()
        #expect(try render(custom: "", format: "json").status == 0)
        let defaultHeight = try carouselHeight()
        #expect(oddHeight != nil && oddHeight == defaultHeight, "the default height")
        let png = try render(custom: #""itemHeight": 1e308"#, format: "png")
        #expect(png.status == 0, "\(png.stderr)")
    }

    static func firstDifference(_ a: Data, _ b: Data) -> Int {
        let (x, y) = (Array(a), Array(b))
        return zip(x, y).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(x.count, y.count)
    }
}

/// A view read from a pipe (`/dev/stdin`) larger than one read renders as the same view read from its file.
@Suite("view from a pipe")
struct ViewFromPipeTests {
    @Test func aViewPipedThroughStdinRendersAsTheFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-pipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let items = (0..<3000).map {
            #"{"id": "i\#($0)", "component": {"id": "nowhere:row"}, "text": {"title": "Item \#($0)"}}"#
        }
        let view = root.appendingPathComponent("view.json")
        try Data(("[" + items.joined(separator: ",") + "]").utf8).write(to: view)
        #expect(try FileManager.default.attributesOfItem(atPath: view.path)[.size] as? Int ?? 0 > 3 * 65536)
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let common = [
            "--plugins", plugins.path, "--plugin-cache", root.appendingPathComponent("cache").path, "--format", "text",
        ]
        let fromFile = try ProcessRunner.hubhost(["render", view.path] + common)
        let command =
            "cat '\(view.path)' | '\(TestPaths.hubhost.path)' render /dev/stdin " + common.joined(separator: " ")
        let fromPipe = try ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromPipe.status == 0, "\(fromPipe.stderr)")
        #expect(fromPipe.stdout == fromFile.stdout)
        #expect(fromFile.stdout.contains("i2999"))
    }
}
