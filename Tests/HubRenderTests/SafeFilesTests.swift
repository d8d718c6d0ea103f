import Foundation
import HubCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What an untrusted view can and cannot make `hubhost render` do to the user's files, on the real executable:
/// `-o` never replaces a device, FIFO or symlink; image URIs never read outside the view's folder and --assets.
@Suite("Safe files and images (process)", .serialized)
struct SafeFilesTests {
    let cli = RenderCommandTests()

    func render(_ arguments: [String], _ sandbox: RenderCommandTests.Sandbox) throws -> RenderCommandTests.Result {
        try cli.run(arguments, sandbox: sandbox)
    }

    var home: String { RenderCommandTests.examples.appendingPathComponent("home.json").path }

    static func fileType(_ path: String) -> mode_t {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
    }

    @Test func devNullStaysADevice() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let result = try render([home, "-o", "/dev/null"], sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.fileType("/dev/null") == S_IFCHR)
    }

    @Test func aSymlinkIsWrittenThroughAndStaysALink() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let target = sandbox.root.appendingPathComponent("real.txt")
        let link = sandbox.root.appendingPathComponent("link.txt")
        try "old contents that are longer than the new ones will be, to check truncation............"
            .write(to: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let result = try render([home, "--format", "text", "-o", link.path], sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.fileType(link.path) == S_IFLNK)
        let text = try String(contentsOf: target, encoding: .utf8)
        #expect(text.hasPrefix("view home \"Home\"") && !text.contains("old contents"))
    }

    @Test func aFIFOIsWrittenThrough() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let fifo = sandbox.root.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let received = Received()
        let reader = Thread {
            let handle = FileHandle(forReadingAtPath: fifo)
            received.data = handle?.readDataToEndOfFile() ?? Data()
        }
        reader.start()
        let result = try render([home, "--format", "text", "-o", fifo], sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(TestWait.until { received.data != nil })
        #expect(String(decoding: received.data ?? Data(), as: UTF8.self).hasPrefix("view home"))
        #expect(Self.fileType(fifo) == S_IFIFO)
    }

    @Test func aRegularFileIsReplacedKeepingItsModeAndDashIsStdout() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let file = sandbox.root.appendingPathComponent("out.json")
        try "stale".write(to: file, atomically: true, encoding: .utf8)
        chmod(file.path, 0o640)
        #expect(try render([home, "-o", file.path], sandbox).status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect(json?["body"] != nil)
        var status = stat()
        stat(file.path, &status)
        #expect(status.st_mode & 0o777 == 0o640)
        // No temporary file is left next to it.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.contains("hubhost-") }
                .isEmpty)
        let stdout = try render([home, "--format", "text", "-o", "-"], sandbox)
        #expect(stdout.stdout.hasPrefix("view home"))
        let missingFolder = try render([home, "-o", sandbox.root.appendingPathComponent("no/such/file").path], sandbox)
        #expect(missingFolder.status == 2)
        #expect(
            missingFolder.stderr.contains("cannot write \(sandbox.root.path)/no/such/file: No such file or directory"))
    }

    /// Until it is committed, the replacement has no name (O_TMPFILE): a writer killed mid-write (a plugin
    /// crash while an SVG streams out) leaves nothing in the user's folder.
    @Test func anUncommittedOutputLeavesNothingInTheFolder() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let folder = sandbox.root.appendingPathComponent("outputs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("out.svg").path
        let output = try OutputFile(path: path)
        output.write(String(repeating: "<g/>", count: 100_000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        try output.commit()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.svg"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 400_000)
    }

    @Test func imagesNeverReadOutsideTheAllowedFolders() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let views = sandbox.root.appendingPathComponent("views")
        let assets = sandbox.root.appendingPathComponent("assets")
        try FileManager.default.createDirectory(at: views, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        let secret = "TOPSECRET-\(UUID().uuidString)"
        try secret.write(to: sandbox.root.appendingPathComponent("secret.svg"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            at: views.appendingPathComponent("escape.svg"),
            withDestinationURL: sandbox.root.appendingPathComponent("secret.svg"))
        #expect(mkfifo(views.appendingPathComponent("fifo.png").path, 0o600) == 0)
        try Data(repeating: 7, count: 64).write(to: views.appendingPathComponent("big.png"))
        let ok = "<svg xmlns='http://www.w3.org/2000/svg'><rect width='4' height='4'/></svg>"
        try ok.write(to: assets.appendingPathComponent("ok.svg"), atomically: true, encoding: .utf8)
        let uris = [
            "file:///etc/passwd", "../../../../../../etc/passwd", "escape.svg", "/proc/self/environ",
            "fifo.png", "big.png", "../assets/ok.svg", "https://example.com/a.png",
            // 200 KB of "x/": refused at once (resolving it ancestor by ancestor took seconds per URI).
            "assets/" + String(repeating: "x/", count: 100_000) + "a.png",
        ]
        let body = uris.enumerated().map { index, uri in
            #"{"id": "i\#(index)", "component": {"id": "demo:image"}, "images": {"main": {"uri": "\#(uri)"}}}"#
        }.joined(separator: ",")
        let view = views.appendingPathComponent("view.json")
        try "{\"body\": [\(body)]}".write(to: view, atomically: true, encoding: .utf8)

        let result = try render([view.path, "--format", "svg", "--max-image-bytes", "32"], sandbox)
        #expect(result.status == 1, "problems are reported")
        #expect(!result.stdout.contains("root:") && !result.stdout.contains(secret.prefix(9)))
        let problems = [
            (0, "image \"file:///etc/passwd\" is outside the allowed folders"),
            (1, "image \"../../../../../../etc/passwd\" is outside the allowed folders"),
            (2, "image \"escape.svg\" is outside the allowed folders"),
            (3, "image \"/proc/self/environ\" is a system file (/proc)"),
            (4, "image \"fifo.png\" is not a regular file"),
            (5, "image \"big.png\" is 64 bytes, over the limit of 32 (--max-image-bytes)"),
            (6, "image \"../assets/ok.svg\" is outside the allowed folders"),
        ]
        #expect(result.stderr.contains("$.body[8].images.main.uri: image"), "\(result.stderr.suffix(500))")
        #expect(result.stderr.contains("longer than any file's can be"))
        for (index, message) in problems {
            #expect(
                result.stderr.contains("\(view.path): $.body[\(index)].images.main.uri: \(message)"), "\(result.stderr)"
            )
        }
        #expect(!result.stderr.contains("$.body[7]"), "a remote URI is drawn as a placeholder, not a problem")

        // --assets allows one more folder; the rest stay refused.
        let allowed = try render([view.path, "--format", "svg", "--assets", assets.path], sandbox)
        #expect(!allowed.stderr.contains("$.body[6]"))
        #expect(allowed.stdout.contains("data:image/svg+xml;base64,\(Data(ok.utf8).base64EncodedString())"))
        #expect(allowed.stderr.contains("$.body[0].images.main.uri"))
    }

    @Test func theBundledImageExampleStillDrawsItsImages() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let view = RenderCommandTests.examples.appendingPathComponent("images.json").path
        let result = try render([view, "--format", "svg"], sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "data:image/").count >= 4)  // png, svg, file:svg, data URI
    }

    @Test func untrustedTextCannotForgeMessages() throws {
        let sandbox = try RenderCommandTests.Sandbox()
        let view = sandbox.root.appendingPathComponent("forged.json")
        let forged = #"x.png\nforged.json: $.body[9]: \u001b[31mfake problem"#
        try #"{"body": [{"id": "a", "component": {"id": "demo:image"}, "images": {"main": {"uri": "\#(forged)"}}}]}"#
            .write(to: view, atomically: true, encoding: .utf8)
        let result = try render([view.path, "--format", "text"], sandbox)
        #expect(!result.stderr.contains("\u{1B}"))
        let lines = result.stderr.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("forged.json: $.body[9]") }, "\(result.stderr)")
        #expect(result.stderr.contains(#"\n"#) && result.stderr.contains(#"\u{1b}"#))
    }
}

final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Data?
    var data: Data? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

enum TestWait {
    static func until(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}
