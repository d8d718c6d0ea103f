import Foundation
import HubTestKit
import Testing

/// `hubhost render` end to end: the executable next to the test binary, the demo plugins in a temporary folder.
@Suite(.serialized) struct RenderCommandTests {
    static let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent()
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples")

    typealias Result = ProcessResult

    /// A folder with the two demo plugins and a private cache, removed afterwards.
    final class Sandbox {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-render-\(UUID().uuidString)")
        var plugins: URL { root.appendingPathComponent("plugins") }
        var cache: URL { root.appendingPathComponent("cache") }
        init() throws {
            try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
            for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
                try FileManager.default.copyItem(
                    at: RenderCommandTests.binDirectory.appendingPathComponent(name),
                    to: plugins.appendingPathComponent(name))
            }
        }
        deinit { try? FileManager.default.removeItem(at: root) }
    }

    func run(_ arguments: [String], sandbox: Sandbox) throws -> Result {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = sandbox.cache.path
        return try ProcessRunner.hubhost(
            ["render"] + arguments + ["--plugins", sandbox.plugins.path, "--plugin-cache", sandbox.cache.path],
            environment: environment)
    }

    @Test func rendersJSONWithPluginsAndExitsZero() throws {
        let sandbox = try Sandbox()
        let result = try run([Self.examples.appendingPathComponent("home.json").path], sandbox: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let body = try #require(json["body"] as? [[String: Any]])
        try #require(body.count == 9)
        #expect((body[0]["source"] as? [String: String])?["plugin"] == "com.hubhost.cdemo")
        #expect((json["viewport"] as? [String: Double]) == ["width": 375, "height": 667])
    }

    @Test func problemsAreReportedWithFileAndPathAndRenderingGoesOn() throws {
        let sandbox = try Sandbox()
        let view = Self.examples.appendingPathComponent("problems.json").path
        let result = try run([view, "--format", "text", "--width", "320"], sandbox: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(view): $.body[1].component.id: expected a string, found 42"))
        #expect(result.stderr.contains("\(view): $.overlays: expected an array, found an object"))
        #expect(result.stdout.hasPrefix("view problems  viewport 320×667"))
        #expect(result.stdout.contains("[2] bad-text  demo:row"))

        let strict = try run([view, "--strict"], sandbox: sandbox)
        #expect(strict.status == 2)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr.contains("not rendered (--strict)"))
    }

    @Test func brokenInputUnknownLayoutManagerAndOutputFile() throws {
        let sandbox = try Sandbox()
        let broken = sandbox.root.appendingPathComponent("broken.json")
        try Data("{\"body\": [}".utf8).write(to: broken)
        let result = try run([broken.path], sandbox: sandbox)
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(broken.path): not valid JSON: line 1, column 11"))

        let view = Self.examples.appendingPathComponent("carousel.json").path
        let unknown = try run([view, "--layout-manager", "nope"], sandbox: sandbox)
        #expect(unknown.status == 3)
        #expect(unknown.stderr.contains("no layout manager 'nope'"))

        let output = sandbox.root.appendingPathComponent("out.svg")
        let svg = try run([view, "--format", "svg", "-o", output.path], sandbox: sandbox)
        #expect(svg.status == 0, "\(svg.stderr)")
        #expect(svg.stdout.isEmpty)
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(text.hasPrefix("<svg xmlns="))
        // The PNG next to the view is inlined.
        #expect(text.contains("href=\"data:image/png;base64,"))
    }
}
