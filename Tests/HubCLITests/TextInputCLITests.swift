import Foundation
import HubTestKit
import Testing

/// Text as servers send it, through the real executable: characters XML does not allow, `\u0000`, a byte order
/// mark, and a picture that cannot be drawn in a snapshot run.
@Suite("Text in view models (process)")
struct TextInputCLITests {
    final class Setup {
        let folder: TemporaryFolder
        var plugins: URL { folder.appending("plugins") }

        init() throws {
            folder = try TemporaryFolder("hubhost-text")
            try FileManager.default.createDirectory(
                at: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try ProcessRunner.copyExecutable(
                TestPaths.binDirectory.appendingPathComponent("libHubDemoC.so"),
                to: plugins.appendingPathComponent("libHubDemoC.so"))
        }

        /// A view of one banner per title, written as `name`, with `prefix` bytes before the JSON.
        func view(_ name: String, titles: [String], prefix: [UInt8] = []) throws -> URL {
            let body = titles.enumerated().map { index, title in
                #"{"id": "b\#(index)", "component": {"id": "cdemo:banner"}, "text": {"title": "\#(title)"}}"#
            }
            let url = folder.appending(name)
            try Data(prefix + Array(#"{"id": "v", "body": [\#(body.joined(separator: ", "))]}"#.utf8)).write(to: url)
            return url
        }

        func hubhost(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.hubhost(
                arguments + ["--plugins", plugins.path, "--plugin-cache", folder.appending("cache").path],
                currentDirectory: folder.url)  // what a command writes by default stays in the test's folder
        }
    }

    /// XML 1.0 has no U+FFFE or U+FFFF: one in a title made the SVG unreadable and every PNG fail (exit 2).
    @Test func charactersXMLDoesNotAllowAreDrawnAsReplacements() throws {
        let setup = try Setup()
        let view = try setup.view("view.json", titles: [#"a\uFFFEb\uFFFFc <&>"#])
        let svg = try setup.hubhost(["render", view.path, "--format", "svg", "-o", "-"])
        #expect(svg.status == 0, "\(svg.stderr)")
        #expect(svg.stdout.contains("a\u{FFFD}b\u{FFFD}c &lt;&amp;&gt;"), "\(svg.stdout)")
        #expect(!svg.stdout.unicodeScalars.contains { $0.value == 0xFFFE || $0.value == 0xFFFF })
        let png = setup.folder.appending("view.png")
        let drawn = try setup.hubhost(["render", view.path, "--format", "png", "-o", png.path])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        #expect(FileManager.default.fileExists(atPath: png.path))
    }

    /// A C plugin reads text as a C string: `\u0000` cut a title there, without a word. It is read as U+FFFD and said.
    @Test func aNULInTextIsSaidAndReadAsAReplacement() throws {
        let setup = try Setup()
        let view = try setup.view("view.json", titles: [#"before\u0000after"#, #"lone \ud800 surrogate"#])
        let result = try setup.hubhost(["render", view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("before\u{FFFD}after"), "\(result.stdout)")
        for index in 0..<2 {
            let line = result.stderr.split(separator: "\n").first { $0.contains("body[\(index)].text.title") }
            #expect(line?.contains("read as U+FFFD") == true, "\(result.stderr)")
        }
    }

    /// A relative image path is a URI reference: its escapes name the file ("my%20cover.png" is "my cover.png");
    /// a raw space or é is refused with how to write it.
    @Test func relativeImagePathsAreDecoded() throws {
        let setup = try Setup()
        let assets = setup.folder.appending("assets")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        let cover = TestPaths.examples.appendingPathComponent("assets/cover.png")
        for name in ["my cover.png", "café.png"] {
            try FileManager.default.copyItem(at: cover, to: assets.appendingPathComponent(name))
        }
        let view = setup.folder.appending("images.json")
        let models = ["assets/my%20cover.png", "assets/caf%C3%A9.png", "assets/café.png"].enumerated().map {
            #"{"id": "i\#($0)", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "\#($1)"}}}"#
        }
        try Data(#"{"id": "v", "body": [\#(models.joined(separator: ", "))]}"#.utf8).write(to: view)
        let result = try setup.hubhost(["render", view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("does not exist"), "\(result.stderr)")
        #expect(
            result.stderr.contains(
                #""assets/café.png" is not a valid URI (spaces and characters outside ASCII are written percent-encoded"#
            ), "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "data:image/png;base64").count == 3, "two images inlined")
    }

    /// A name that is not UTF-8 reached hubhost with its bytes replaced: "No such file" for a file that is there.
    @Test func aFileNameThatIsNotUTF8IsSaid() throws {
        let setup = try Setup()
        let view = try setup.view("view.json", titles: ["Hello"])
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", #"cp "$2" "$(printf 'bad\377name.json')" && exec "$1" render "$(printf 'bad\377name.json')""#,
                "sh", TestPaths.hubhost.path, view.path,
            ], currentDirectory: setup.folder.url)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("argument 2, \"bad\\xffname.json\", is not valid UTF-8"), "\(result.stderr)")
    }

    /// A plugin file whose name is not UTF-8 is listed by its bytes and why (it was "cannot read the file (No such
    /// file or directory)": the name had its bytes replaced), and the other plugins load.
    @Test func aPluginFileNameThatIsNotUTF8IsSaid() throws {
        let setup = try Setup()
        let copied = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"cp "$1/libHubDemoC.so" "$1/$(printf 'lib\377x.so')""#, "sh", setup.plugins.path])
        #expect(copied.status == 0, "\(copied.stderr)")
        let listed = try setup.hubhost(["list-namespaces"])
        #expect(listed.status == 1, "\(listed.stderr)")
        #expect(listed.stdout.contains(#"rejected  lib\xffx.so: its name is not valid UTF-8"#), "\(listed.stdout)")
        #expect(listed.stdout.contains("cdemo "), "\(listed.stdout)")
    }

    /// Ids compare as Swift compares text: two spellings of "é" are one id, and the warning shows both.
    @Test func idsInTwoNormalizationsAreShownByCodePoint() throws {
        let setup = try Setup()
        let view = setup.folder.appending("ids.json")
        try Data(
            #"{"body": [{"id": "\u00e9", "component": {"id": "cdemo:banner"}}, {"id": "e\u0301", "component": {"id": "cdemo:banner"}}]}"#
                .utf8
        ).write(to: view)
        let result = try setup.hubhost(["render", view.path, "--format", "text", "-o", "-"])
        #expect(
            result.stderr.contains("(U+E9 there, U+65 U+301 here: the same text in another Unicode normalization)"),
            "\(result.stderr)")
    }

    /// One missing image named by every row is one warning (a large view printed thousands of lines).
    @Test func aMissingImageNamedManyTimesIsSaidOnce() throws {
        let setup = try Setup()
        let view = setup.folder.appending("missing.json")
        let models = (0..<3).map {
            #"{"id": "i\#($0)", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "assets/gone.png"}}}"#
        }
        try Data(#"{"body": [\#(models.joined(separator: ", "))]}"#.utf8).write(to: view)
        let result = try setup.hubhost(["render", view.path, "--format", "text", "-o", "-"])
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("assets/gone.png") }
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("$.body[0].images.main.uri") == true, "\(result.stderr)")
        #expect(lines.first?.contains("(and 2 more place(s) naming it)") == true, "\(result.stderr)")
    }

    /// Images each under the per-image limit may still add up to gigabytes decoded: a drawing inlines at most
    /// 200 megapixels of them, draws the rest as placeholders, says so once and ends with problems.
    @Test func theImagesOfOneDrawingHaveATotalLimit() throws {
        let setup = try Setup()
        let assets = setup.folder.appending("assets")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        // A PNG's signature and header only: 7000×7000 (49 megapixels), what the limits read.
        func be32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        let header: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + Array("IHDR".utf8) + be32(7000) + be32(7000)
            + [8, 0, 0, 0, 0] + be32(0)
        for index in 0..<5 { try Data(header).write(to: assets.appendingPathComponent("big\(index).png")) }
        let models = (0..<5).map {
            #"{"id": "i\#($0)", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "assets/big\#($0).png"}}}"#
        }
        let view = setup.folder.appending("big.json")
        try Data(#"{"body": [\#(models.joined(separator: ", "))]}"#.utf8).write(to: view)
        let result = try setup.hubhost(["render", view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "data:image/png;base64").count == 5, "four inlined")
        let said = result.stderr.split(separator: "\n").filter { $0.contains("more than 200 megapixels together") }
        #expect(said.count == 1 && said[0].contains("assets/big4.png"), "\(result.stderr)")
    }

    /// Editors on Windows start files with a byte order mark; RFC 8259 lets a parser skip it.
    @Test func aByteOrderMarkIsSkipped() throws {
        let setup = try Setup()
        let view = try setup.view("view.json", titles: ["Hello"], prefix: [0xEF, 0xBB, 0xBF])
        let result = try setup.hubhost(["render", view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 0 && result.stdout.contains("cdemo:banner"), "\(result.stdout)\(result.stderr)")
    }

    /// A grapheme cluster of more than 32 scalars is drawn with its first 32: shaping is quadratic in a cluster's
    /// length, and 10,000 emoji joined by ZWJ in one title took 54 s to draw as a PNG. Shorter ones are whole.
    @Test func anAbsurdlyLongGraphemeClusterIsDrawnCut() throws {
        let setup = try Setup()
        let accents = "a" + String(repeating: "\u{301}", count: 2_000)
        let family = String(repeating: "\u{1F468}\u{200D}", count: 500)
        let short = "e" + String(repeating: "\u{301}", count: 20) + " Caf\u{E9} au lait, a title of several words"
        let view = try setup.view("view.json", titles: [accents, family, short])
        let svg = try setup.hubhost(["render", view.path, "--format", "svg", "-o", "-"])
        #expect(svg.status == 0, "\(svg.stderr)")
        let drawn = svg.stdout.split(separator: "\n").filter { $0.hasPrefix("<text") }.map {
            String($0[$0.index(after: $0.firstIndex(of: ">")!)...].dropLast("</text>".count))
        }
        #expect(drawn.contains("a" + String(repeating: "\u{301}", count: 31)), "\(drawn.map(\.unicodeScalars.count))")
        let familyScalars = Array("\u{1F468}\u{200D}".unicodeScalars)
        #expect(drawn.contains { $0.unicodeScalars.count == 32 && $0.unicodeScalars.starts(with: familyScalars) })
        let whole = Array(("e" + String(repeating: "\u{301}", count: 20) + " ").unicodeScalars)
        #expect(drawn.contains { $0.unicodeScalars.starts(with: whole) }, "\(drawn)")
        let png = try setup.hubhost(["render", view.path, "--format", "png", "-o", "view.png"])
        #expect(png.status == 0, "\(png.stderr)")
    }

    /// A view file too large to be one is refused before it is read (a sparse file: no disk is used), and so is an
    /// endless stream: `/dev/zero` grew the worker to 5.7 GB in four seconds.
    @Test func aViewOverTheLimitIsRefusedBeforeItIsRead() throws {
        let setup = try Setup()
        let huge = setup.folder.appending("huge.json")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        #expect(truncate(huge.path, off_t(256 << 20) + 1) == 0)
        for view in [huge.path, "/dev/zero"] {
            let result = try setup.hubhost(["render", view, "--format", "json", "-o", "-"])
            #expect(
                result.status == 2
                    && result.stderr.contains("\(view): cannot read: is 256 MiB or more, over the limit"),
                "\(result.stderr)")
        }
        let validated = try ProcessRunner.hubhost(
            ["validate", setup.plugins.appendingPathComponent("libHubDemoC.so").path, "--view", huge.path])
        #expect(validated.status == 2 && validated.stderr.contains("over the limit of 256 MiB"), "\(validated.stderr)")
    }

    /// A picture verify cannot draw (taller than a PNG can be) is a failing case in JUnit, not only a stderr line.
    @Test func aPictureVerifyCannotDrawIsAFailureInJUnit() throws {
        let setup = try Setup()
        let views = setup.folder.appending("views")
        try FileManager.default.createDirectory(at: views, withIntermediateDirectories: true)
        let small = try setup.view("small.json", titles: ["Hello"])
        try FileManager.default.moveItem(at: small, to: views.appendingPathComponent("small.json"))
        let tall = try setup.view("tall.json", titles: Array(repeating: "Row", count: 600))
        try FileManager.default.moveItem(at: tall, to: views.appendingPathComponent("tall.json"))
        let goldens = setup.folder.appending("goldens").path
        let recorded = try setup.hubhost(["snapshot", "record", views.path, "--out", goldens])
        #expect(recorded.status == 2, "\(recorded.stderr)")
        let junit = setup.folder.appending("junit.xml")
        let verified = try setup.hubhost([
            "snapshot", "verify", views.path, "--out", goldens, "--junit", junit.path, "--report",
            setup.folder.appending("report").path,
        ])
        #expect(verified.status == 2, "\(verified.stderr)")
        #expect(verified.stdout.contains(", 1 that could not be drawn"), "\(verified.stdout)")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("failures=\"1\"") && xml.contains("tall"), "\(xml)")
        #expect(xml.contains("cannot be drawn"), "\(xml)")
    }
}
