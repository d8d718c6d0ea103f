import Foundation
import HubRender
import HubTestKit
import Testing

/// `hubhost snapshot` and `hubhost gallery` end to end, with the shipped plugins, real PNGs decoded back.
@Suite(.serialized) struct SnapshotTests {
    final class Sandbox {
        let folder: TemporaryFolder
        var plugins: URL { folder.appending("plugins") }
        var cache: URL { folder.appending("cache") }
        var views: URL { folder.appending("views") }

        init() throws {
            folder = try TemporaryFolder("hubhost-snapshot")
            for dir in [plugins, views] {
                try FileManager.default.createDirectory(
                    at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            }
            for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
                try FileManager.default.copyItem(
                    at: TestPaths.binDirectory.appendingPathComponent(name), to: plugins.appendingPathComponent(name))
            }
            try banner(color: "#FF2D55")
            let script = """
                {"event": "snapshot", "name": "before"}
                {"event": "tap", "indexPath": [1]}
                {"event": "snapshot", "name": "after tap"}
                """
            try Data(script.utf8).write(to: views.appendingPathComponent("tapping.jsonl"))
            try Data(
                #"{"body": [{"id": "t", "component": {"id": "demo:row"}, "text": {"title": "Row"}}, {"id": "b", "component": {"id": "cdemo:badge"}, "text": {"title": "Tap me"}}]}"#
                    .utf8
            ).write(to: views.appendingPathComponent("tapping.json"))
        }

        /// views/banner.json: one banner of `color` (the first component: frame (0, 0) to (width, 60+)).
        func banner(color: String) throws {
            let json =
                #"{"body": [{"id": "b", "component": {"id": "cdemo:banner"}, "text": {"title": "Hi"}, "custom": {"color": "\#(color)"}}]}"#
            try Data(json.utf8).write(to: views.appendingPathComponent("banner.json"))
        }

        /// Run in the sandbox: what a command writes by default (./snapshot-report) stays out of the checkout.
        func hubhost(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.hubhost(
                arguments + ["--plugins", plugins.path, "--plugin-cache", cache.path], currentDirectory: folder.url)
        }

        func snapshot(_ mode: String, out: String, _ extra: [String] = []) throws -> ProcessResult {
            try hubhost(
                [
                    "snapshot", mode, views.path, views.appendingPathComponent("tapping.jsonl").path, "--gallery",
                    "--out", folder.appending(out).path, "--widths", "320,375",
                ] + extra)
        }

        func files(in name: String) -> [String] {
            let root = folder.appending(name)
            let all = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
            return all.filter { $0.hasSuffix(".png") }.sorted()
        }
    }

    @Test func recordThenVerifyPassesAndRecordingsAreByteIdentical() throws {
        let sandbox = try Sandbox()
        let first = try sandbox.snapshot("record", out: "golden")
        #expect(first.status == 0, "\(first.stderr)")
        let names = sandbox.files(in: "golden")
        #expect(names.contains("banner@320.png") && names.contains("banner@375.png"))
        #expect(names.contains("tapping.before@375.png") && names.contains("tapping.after-tap@375.png"))
        #expect(names.contains("gallery/demo-row.default@320.png"))
        #expect(names.contains("gallery/cdemo-banner.long-title@320.png"), "a story's own width")
        #expect(!names.contains("gallery/cdemo-banner.long-title@375.png"))

        let second = try sandbox.snapshot("record", out: "again")
        #expect(second.status == 0)
        #expect(sandbox.files(in: "again") == names)
        for name in names {
            let a = try Data(contentsOf: sandbox.folder.appending("golden/" + name))
            let b = try Data(contentsOf: sandbox.folder.appending("again/" + name))
            #expect(a == b, "\(name) differs between two recordings")
        }

        let junit = sandbox.folder.appending("junit.xml")
        let verify = try sandbox.snapshot("verify", out: "golden", ["--junit", junit.path])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("\(names.count) image(s): \(names.count) match, 0 differ, 0 missing"))
        #expect(
            !FileManager.default.fileExists(atPath: sandbox.folder.appending("snapshot-report").path),
            "a passing run leaves no report folder")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("tests=\"\(names.count)\" failures=\"0\""))
    }

    @Test func aChangedFillColourFailsWithADiffAndAReport() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        try sandbox.banner(color: "#34C759")
        let report = sandbox.folder.appending("report")
        let junit = sandbox.folder.appending("junit.xml")
        let verify = try sandbox.snapshot("verify", out: "golden", ["--report", report.path, "--junit", junit.path])
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("banner@320:") && verify.stderr.contains("pixels differ"))
        for suffix in ["expected", "actual", "diff"] {
            #expect(
                FileManager.default.fileExists(atPath: report.appendingPathComponent("banner@375.\(suffix).png").path))
        }
        let html = try String(contentsOf: report.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("banner@375.expected.png") && html.contains("banner@375.diff.png"))
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("failures=\"2\""))
        // The diff is red where the banner changed.
        let diff = try #require(
            PNGImage(png: try Data(contentsOf: report.appendingPathComponent("banner@375.diff.png"))))
        #expect(diff.color(x: 20, y: 40)?.description == "#ff0000ff")  // inside the banner (below the top margin)
        #expect(diff.color(x: 2, y: 2)?.description != "#ff0000ff")  // the margin did not change
        // Within tolerance it passes; a missing golden is exit 2.
        let within = try sandbox.snapshot("verify", out: "golden", ["--tolerance", "100"])
        #expect(within.status == 0)
        // The banner at 320 and at 375.
        #expect(within.stdout.contains(" match (2 within --tolerance)"), "\(within.stdout)")
        // A missing golden (a new view or story) is exit 2; the report shows what record would write.
        try FileManager.default.createDirectory(
            at: sandbox.folder.appending("nothing"), withIntermediateDirectories: true)
        let none = try sandbox.snapshot("verify", out: "nothing", ["--report", report.path])
        #expect(none.status == 2)
        let actual = try #require(
            PNGImage(png: try Data(contentsOf: report.appendingPathComponent("banner@375.actual.png"))))
        #expect(actual.width == 375)
        let page = try String(contentsOf: report.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(page.contains("banner@375.actual.png") && page.contains("what record would write"))
    }

    /// A CI run must not go green without checking what it should: goldens whose plugin or story went away are
    /// missing, a run that draws nothing fails, two inputs that would share a golden are refused, a size change
    /// fails whatever the tolerance (and shows where), and the report is always this run's.
    /// A view that names a component no plugin serves is not recorded (exit 1): the last line says why (the
    /// reasons were warnings). A view too tall for a PNG says what does work.
    @Test func theSummarySaysWhyARunFailsAndWhatToDoWithALongView() throws {
        let sandbox = try Sandbox()
        let fallback = sandbox.folder.appending("fallback.json")
        try Data(#"{"body": [{"id": "x", "component": {"id": "nowhere:thing"}, "text": {"title": "X"}}]}"#.utf8)
            .write(to: fallback)
        for mode in ["record", "verify"] {
            let run = try sandbox.hubhost([
                "snapshot", mode, fallback.path, "--out", sandbox.folder.appending("fb").path,
            ])
            // Not recorded (a golden of a fallback would be wrong), so verify finds no golden of it.
            #expect(run.status == (mode == "record" ? 1 : 2), "\(run.stderr)")
            let last = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains("1 input with problems: fallback.json has problems:"), "\(mode): \(last)")
            #expect(run.stderr.contains("drawn as a fallback (a golden of its fallback would be wrong)"))
            #expect(!run.stderr.contains("warning:"), "\(run.stderr)")
        }
        // A report that cannot be written (a read-only checkout) still leaves the JUnit file a CI job reads.
        let blocked = sandbox.folder.appending("blocked")
        try Data("a file, not a folder".utf8).write(to: blocked)
        let junit = sandbox.folder.appending("junit.xml")
        let ro = try sandbox.hubhost([
            "snapshot", "verify", fallback.path, "--out", sandbox.folder.appending("fb").path, "--report", blocked.path,
            "--junit", junit.path,
        ])
        #expect(ro.status == 2 && ro.stderr.contains("cannot write the report in"), "\(ro.stderr)")
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("<testsuite"))
        // A folder's view whose name is not UTF-8 is said as that (it was "cannot read: No such file or directory").
        let odd = sandbox.folder.appending("odd")
        try FileManager.default.createDirectory(at: odd, withIntermediateDirectories: true)
        let rawName = Array(odd.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".json".utf8) + [0]
        let fd = rawName.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { creat($0.baseAddress!, 0o644) }
        }
        #expect(fd >= 0)
        close(fd)
        let unnamed = try sandbox.hubhost([
            "snapshot", "record", odd.path, "--out", sandbox.folder.appending("odd-g").path,
        ])
        #expect(
            unnamed.status == 2 && unnamed.stderr.contains("its name is not valid UTF-8: rename it"),
            "\(unnamed.stderr)")
        let long = sandbox.folder.appending("long.json")
        let rows = (0..<700).map { #"{"id": "r\#($0)", "component": {"id": "demo:row"}, "text": {"title": "R"}}"# }
        try Data("{\"body\": [\(rows.joined(separator: ","))]}".utf8).write(to: long)
        let tall = try sandbox.hubhost([
            "snapshot", "record", long.path, "--out", sandbox.folder.appending("long").path,
        ])
        #expect(tall.status == 2, "\(tall.stderr)")
        #expect(tall.stderr.contains("larger than a PNG hubhost draws (32768); snapshot a long view as a script"))
        #expect(tall.stdout.contains("0 image(s) in") && tall.stdout.contains("; 1 could not be drawn (above)"))
    }

    @Test func whatVerifyCannotCheckFailsTheRun() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        let report = sandbox.folder.appending("report")
        // A view grown taller than the viewport: a size change, at any tolerance, with a diff image and where.
        let banners = (0..<12).map {
            #"{"id": "b\#($0)", "component": {"id": "cdemo:banner"}, "text": {"title": "Hi"}}"#
        }
        try Data("{\"body\": [\(banners.joined(separator: ","))]}".utf8)
            .write(to: sandbox.views.appendingPathComponent("banner.json"))
        let grown = try sandbox.snapshot("verify", out: "golden", ["--tolerance", "100", "--report", report.path])
        #expect(grown.status == 1, "\(grown.stderr)")
        #expect(grown.stderr.contains("banner@375: size changed: 375×"), "\(grown.stderr)")
        #expect(grown.stderr.contains("pixels differ") && grown.stderr.contains("within x 0–"), "\(grown.stderr)")
        #expect(FileManager.default.fileExists(atPath: report.appendingPathComponent("banner@375.diff.png").path))
        // Fixed: the report is this run's, without the images of the last one, nor the temporary file of one an
        // interrupted run was renaming.
        let leftover = report.appendingPathComponent(".banner@375.diff.png.hubhost-Ab12Cd")
        try Data([1]).write(to: leftover)
        let leftoverPage = report.appendingPathComponent(".report.html.hubhost-Ef34Gh")
        let leftoverList = report.appendingPathComponent("..hubhost-report.hubhost-Ij56Kl")
        for file in [leftoverPage, leftoverList] { try Data([1]).write(to: file) }
        try sandbox.banner(color: "#FF2D55")
        let fixed = try sandbox.snapshot("verify", out: "golden", ["--report", report.path])
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: report.appendingPathComponent("banner@375.diff.png").path))
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(!FileManager.default.fileExists(atPath: leftoverPage.path))
        #expect(!FileManager.default.fileExists(atPath: leftoverList.path))
        let html = try String(contentsOf: report.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("0 of") && html.contains("image(s) differ"))
        // A plugin gone from the folder: its stories' goldens are missing, in the log and in JUnit.
        try FileManager.default.removeItem(at: sandbox.plugins.appendingPathComponent("libHubDemoC.so"))
        let junit = sandbox.folder.appending("junit.xml")
        let gone = try sandbox.snapshot("verify", out: "golden", ["--report", report.path, "--junit", junit.path])
        #expect(gone.status == 2, "\(gone.stdout)\(gone.stderr)")
        #expect(
            gone.stderr.contains(
                "gallery/cdemo-banner.default@375: a golden no story of this run draws: no plugin of this run "
                    + "registers its namespace (is its plugin missing from the plugin folders?"),
            "\(gone.stderr)")
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("cdemo-banner.default@375"))
        // A run that draws nothing is not a pass.
        let empty = sandbox.folder.appending("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let nothing = try sandbox.hubhost([
            "snapshot", "verify", empty.path, "--out", sandbox.folder.appending("golden").path,
        ])
        #expect(nothing.status == 2 && nothing.stderr.contains("drew no image"), "\(nothing.stderr)")
        // Two views whose names make one golden: neither is recorded, both are named.
        try FileManager.default.copyItem(
            at: sandbox.views.appendingPathComponent("banner.json"),
            to: sandbox.views.appendingPathComponent("Banner.json"))
        let clash = try sandbox.snapshot("record", out: "clash")
        #expect(clash.status == 2, "\(clash.stderr)")
        #expect(clash.stderr.contains("banner@375.png would be drawn from both"), "\(clash.stderr)")
        #expect(!sandbox.files(in: "clash").contains("banner@375.png"))
        // An input that cannot be used is a failing test case of its own.
        try FileManager.default.removeItem(at: sandbox.views.appendingPathComponent("Banner.json"))
        try Data("{\"body\": [".utf8).write(to: sandbox.views.appendingPathComponent("broken.json"))
        let broken = try sandbox.snapshot("verify", out: "clash", ["--junit", junit.path, "--report", report.path])
        #expect(broken.status == 2)
        // With what was said of it, not only that it failed.
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("broken.json") && xml.contains("could not be read, decoded or replayed: "), "\(xml)")
        #expect(!xml.contains("the reason is on stderr"), "\(xml)")
        // A script with a line that is not UTF-8 is named by line and byte, as `events` names it.
        try FileManager.default.removeItem(at: sandbox.views.appendingPathComponent("broken.json"))
        var script = Array(#"{"event": "snapshot", "name": "a"}"#.utf8) + [0x0A]
        script += Array(#"{"event": "tap", "indexPath": [0], "note": ""#.utf8) + [0xFF] + Array(#""}"#.utf8) + [0x0A]
        try Data(script).write(to: sandbox.views.appendingPathComponent("banner.jsonl"))
        let undecodable = try sandbox.hubhost([
            "snapshot", "record", sandbox.views.appendingPathComponent("banner.jsonl").path, "--out",
            sandbox.folder.appending("scripted").path,
        ])
        #expect(undecodable.stderr.contains("banner.jsonl:2: invalid UTF-8 at byte"), "\(undecodable.stderr)")
    }

    /// Living with goldens: a story renamed or a width dropped leaves goldens no story draws; `record --gallery`
    /// removes them (naming each), so verify passes again. A damaged golden is said to be damaged, not missing, and
    /// a view drawn with fallbacks (its plugin is not there) is a problem, as a story's would be.
    @Test func recordRemovesGalleryGoldensNoStoryHasAndVerifyTellsDamagedFromMissing() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        let before = sandbox.files(in: "golden")
        #expect(before.contains("gallery/cdemo-banner.default@320.png"), "\(before)")
        // The width 320 dropped: the stories' goldens at 320 go (those with widths of their own stay), the views'
        // stay (a run may record some views of a shared folder).
        let narrower = [
            "snapshot", "record", sandbox.views.path, "--gallery", "--out", sandbox.folder.appending("golden").path,
        ]
        let recorded = try sandbox.hubhost(narrower)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(
            recorded.stderr.contains(
                "removed gallery/cdemo-banner.default@320.png: its story is drawn at other widths now"),
            "\(recorded.stderr)")
        let after = sandbox.files(in: "golden")
        #expect(!after.contains("gallery/cdemo-banner.default@320.png") && after.contains("banner@320.png"), "\(after)")
        #expect(after.filter { !$0.hasPrefix("gallery/") } == before.filter { !$0.hasPrefix("gallery/") })
        var verify = narrower
        verify[1] = "verify"
        #expect(try sandbox.hubhost(verify).status == 0)

        // A golden cut short (a bad merge) is damaged: said so, and the run fails as for a missing one.
        let golden = sandbox.folder.appending("golden/banner@375.png")
        try Data(try Data(contentsOf: golden).prefix(200)).write(to: golden)
        let damaged = try sandbox.hubhost(verify)
        #expect(damaged.status == 2, "\(damaged.stderr)")
        #expect(damaged.stderr.contains("banner@375.png is damaged: a PNG that cannot be decoded"), "\(damaged.stderr)")

        // A view whose plugin is not in the folder: its golden would be of fallbacks.
        try Data(#"{"body": [{"id": "g", "component": {"id": "ghost:card"}}]}"#.utf8)
            .write(to: sandbox.views.appendingPathComponent("ghost.json"))
        let ghost = try sandbox.hubhost([
            "snapshot", "record", sandbox.views.appendingPathComponent("ghost.json").path, "--out",
            sandbox.folder.appending("ghosts").path,
        ])
        #expect(ghost.status == 1, "\(ghost.stderr)")
        #expect(ghost.stderr.contains("no loaded plugin serves namespace \"ghost\""), "\(ghost.stderr)")
        // ... so it is not recorded, and a good golden there is kept.
        #expect(ghost.stdout.contains("1 not recorded, as their inputs have problems"), "\(ghost.stdout)")
        #expect(!sandbox.files(in: "ghosts").contains("ghost@375.png"))
        let kept = sandbox.folder.appending("golden/banner@375.png")
        let keptBytes = try Data(contentsOf: kept)
        try Data(#"{"body": [{"id": "b", "component": {"id": "ghost:banner"}}]}"#.utf8)
            .write(to: sandbox.views.appendingPathComponent("banner.json"))
        let overGood = try sandbox.hubhost([
            "snapshot", "record", sandbox.views.appendingPathComponent("banner.json").path, "--out",
            sandbox.folder.appending("golden").path,
        ])
        #expect(overGood.status == 1, "\(overGood.stderr)")
        #expect(try Data(contentsOf: kept) == keptBytes)
    }

    /// A gallery golden says nothing about a story when its plugin is not in this run (another --plugins folder,
    /// --safe-mode): record --gallery keeps it, saying so, as it keeps every file it could not have written.
    @Test func recordKeepsGoldensOfPluginsNotInTheRunAndFilesItDidNotWrite() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        let gallery = sandbox.folder.appending("golden/gallery")
        let notOurs = ["logo.png", "Cdemo-Badge.default@375.png", "cdemo-badge.default.png"]
        for name in notOurs {
            try Data([0x89, 0x50]).write(to: gallery.appendingPathComponent(name))
        }
        let before = sandbox.files(in: "golden")
        let safe = try sandbox.hubhost([
            "snapshot", "record", sandbox.views.appendingPathComponent("banner.json").path, "--gallery",
            "--safe-mode", "--out", sandbox.folder.appending("golden").path,
        ])
        #expect(safe.stderr.contains("no plugin was loaded (--safe-mode)"), "\(safe.stderr)")
        #expect(sandbox.files(in: "golden") == before)
        try FileManager.default.removeItem(at: sandbox.plugins.appendingPathComponent("libHubDemoC.so"))
        let onlySwift = try sandbox.hubhost([
            "snapshot", "record", "--gallery", "--widths", "320,375", "--out",
            sandbox.folder.appending("golden").path,
        ])
        #expect(onlySwift.status == 0, "\(onlySwift.stderr)")
        #expect(onlySwift.stderr.contains("kept "), "\(onlySwift.stderr)")
        #expect(onlySwift.stderr.contains("no plugin of this run registers its namespace"), "\(onlySwift.stderr)")
        #expect(sandbox.files(in: "golden") == before, "\(onlySwift.stderr)")
        // verify does not take files it could not have written for goldens.
        let verify = try sandbox.hubhost([
            "snapshot", "verify", "--gallery", "--widths", "320,375", "--out", sandbox.folder.appending("golden").path,
            "--report", sandbox.folder.appending("report").path,
        ])
        for name in notOurs { #expect(!verify.stderr.contains(name), "\(verify.stderr)") }
        // A report inside the goldens would be taken for goldens by the next run.
        let inside = try sandbox.hubhost([
            "snapshot", "verify", "--gallery", "--out", sandbox.folder.appending("golden").path,
            "--report", sandbox.folder.appending("golden/report").path,
        ])
        #expect(inside.status == 64 && inside.stderr.contains("is inside --out"), "\(inside.stderr)")
    }

    @Test func pngsDecodedBackHaveTheColourAtKnownFrames() throws {
        let sandbox = try Sandbox()
        let out = sandbox.folder.appending("banner.png")
        let result = try sandbox.hubhost(
            [
                "render", sandbox.views.appendingPathComponent("banner.json").path, "--format", "png", "-o", out.path,
                "--scale", "2",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let image = try #require(PNGImage(png: try Data(contentsOf: out)))
        #expect(image.width == 750, "375 points at scale 2")
        // The banner fills its frame (0, 0, 375, ≥60) with its colour; below the content the canvas is white.
        #expect(image.color(x: 10, y: 10)?.description == "#ffffffff")  // the top margin (15 points)
        #expect(image.color(x: 10, y: 60)?.description == "#ff2d55ff")
        #expect(image.color(x: 740, y: 100)?.description == "#ff2d55ff")
        #expect(image.color(x: 10, y: image.height - 2)?.description == "#ffffffff")
    }

    /// A scripted step is drawn as the screen at that step: the viewport's size at the scroll offset, with the
    /// components there drawn. (The whole content was drawn, blank outside the live components, and a long view's
    /// was too tall to draw at all: 20,000 banners are about 1.2 million points.)
    @Test func aScriptStepIsTheScreenAtItsScrollOffset() throws {
        let sandbox = try Sandbox()
        let banners = (0..<20_000).map { index in
            let color = index < 10_000 ? "#FF2D55" : "#007AFF"
            return #"{"id": "b\#(index)", "component": {"id": "cdemo:banner"}, "custom": {"color": "\#(color)"}}"#
        }
        try Data(#"{"body": [\#(banners.joined(separator: ","))]}"#.utf8)
            .write(to: sandbox.views.appendingPathComponent("long.json"))
        let script = """
            {"event": "snapshot", "name": "top"}
            {"event": "scroll", "y": 900000}
            {"event": "snapshot", "name": "far"}
            """
        try Data(script.utf8).write(to: sandbox.views.appendingPathComponent("long.jsonl"))
        let record = try sandbox.hubhost([
            "snapshot", "record", sandbox.views.appendingPathComponent("long.jsonl").path, "--out",
            sandbox.folder.appending("golden").path, "--widths", "375", "--height", "400",
        ])
        #expect(record.status == 0, "\(record.stderr)")
        func picture(_ step: String) throws -> PNGImage {
            try #require(PNGImage(png: try Data(contentsOf: sandbox.folder.appending("golden/long.\(step)@375.png"))))
        }
        /// How many pixels of each colour the column at x = 10 has.
        func column(_ image: PNGImage) -> [String: Int] {
            var counts: [String: Int] = [:]
            for y in 0..<image.height { counts[image.color(x: 10, y: y)?.description ?? "none", default: 0] += 1 }
            return counts
        }
        let top = try picture("top")
        #expect(top.width == 375 && top.height == 400)
        #expect(top.color(x: 10, y: 5)?.description == "#ffffffff")  // the top margin
        #expect(top.color(x: 10, y: 60)?.description == "#ff2d55ff")
        let far = try picture("far")
        #expect(far.width == 375 && far.height == 400)
        let farColumn = column(far)
        #expect(farColumn["#007affff", default: 0] > 200, "\(farColumn)")
        #expect(farColumn["#ff2d55ff"] == nil, "\(farColumn)")
    }

    /// A step's picture is exactly the screen: a header taller than it is cut (the picture grew to the header),
    /// and at a scale that does not give whole pixels the last column and row are opaque (they were half
    /// transparent). A step whose events could not apply fails the run, named by its line, in JUnit too (it
    /// recorded a golden of another state than the script meant, and exited 0).
    @Test func aStepIsExactlyTheScreenAndAFailedEventFailsTheRun() throws {
        let sandbox = try Sandbox()
        try Data(
            ##"{"header": {"id": "h", "component": {"id": "cdemo:banner"}, "text": {"title": "Tall"}, "custom": {"color": "#007AFF"}}, "body": [{"id": "b", "component": {"id": "cdemo:badge"}, "text": {"title": "B"}}]}"##
                .utf8
        ).write(to: sandbox.views.appendingPathComponent("screen.json"))
        let script = """
            {"event": "snapshot", "name": "short"}
            {"event": "tap", "point": {"x": 10, "y": 90000}}
            {"event": "snapshot", "name": "after miss"}
            """
        try Data(script.utf8).write(to: sandbox.views.appendingPathComponent("screen.jsonl"))
        let golden = sandbox.folder.appending("golden").path
        let arguments = [
            "snapshot", "record", sandbox.views.appendingPathComponent("screen.jsonl").path, "--out", golden,
            "--widths", "375", "--height", "40", "--scale", "1.5",
        ]
        let record = try sandbox.hubhost(arguments)
        #expect(record.status == 1, "\(record.stderr)")
        #expect(
            record.stderr.contains("screen.jsonl:2: tap at (10, 90000): outside the 375×40 screen"), "\(record.stderr)")
        // The picture after the failed step is not taken: it would be of another state than the script meant.
        #expect(!FileManager.default.fileExists(atPath: golden + "/screen.after-miss@375.png"))
        #expect(record.stderr.contains("no pictures after line 2"), "\(record.stderr)")
        let image = try #require(
            PNGImage(png: try Data(contentsOf: URL(fileURLWithPath: golden + "/screen.short@375.png"))))
        #expect(image.width == 563 && image.height == 60, "\(image.width)×\(image.height)")
        #expect(
            image.color(x: 562, y: 30)?.description.hasSuffix("ff") == true,
            "\(String(describing: image.color(x: 562, y: 30)))")
        #expect(image.color(x: 300, y: 59)?.description.hasSuffix("ff") == true)
        var verify = arguments
        verify[1] = "verify"
        let junit = sandbox.folder.appending("junit.xml")
        let verified = try sandbox.hubhost(verify + ["--junit", junit.path])
        #expect(verified.status == 1)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("has problems: ") && xml.contains("screen.jsonl:2: tap at"), "\(xml)")
        // The step not drawn is a skipped test case (it was missing from the dashboard).
        #expect(
            xml.contains(
                "name=\"screen.after-miss@375\">\n    <skipped message=\"not drawn: line 2 before it could not apply\"/>"
            ),
            "\(xml)")
        #expect(!xml.contains("message=\"has problems: hubhost: "), "\(xml)")
    }

    /// Without the font the drawings name, PNGs come out in another font: said, as goldens would not match.
    @Test func aMissingFontIsSaid() throws {
        let sandbox = try Sandbox()
        let fonts = sandbox.folder.appending("fonts")
        try FileManager.default.createDirectory(at: fonts, withIntermediateDirectories: true)
        // Only DejaVu Sans (fonts-dejavu-core has it too): "DejaVu Sans Mono" is drawn with it.
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
            to: fonts.appendingPathComponent("DejaVuSans.ttf"))
        let config = sandbox.folder.appending("fonts.conf")
        try Data(
            """
            <?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
            <fontconfig><dir>\(fonts.path)</dir><cachedir>\(sandbox.folder.appending("fc-cache").path)</cachedir></fontconfig>
            """.utf8
        ).write(to: config)
        var environment = ProcessInfo.processInfo.environment
        environment["FONTCONFIG_FILE"] = config.path
        let banner = sandbox.views.appendingPathComponent("banner.json").path
        let arguments = [
            "render", banner, "--format", "png", "-o", sandbox.folder.appending("b.png").path, "--plugins",
            sandbox.plugins.path, "--plugin-cache", sandbox.cache.path,
        ]
        let other = try ProcessRunner.hubhost(arguments, environment: environment)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(other.stderr.contains("the font DejaVu Sans Mono is not installed"), "\(other.stderr)")
        #expect(other.stderr.contains("drawn with DejaVu Sans instead"), "\(other.stderr)")
        let usual = try ProcessRunner.hubhost(arguments)
        #expect(!usual.stderr.contains("is not installed"), "\(usual.stderr)")
        // No font at all: every text a box. Said by render; record records nothing (such goldens would be
        // committed as the truth).
        try FileManager.default.removeItem(at: fonts.appendingPathComponent("DejaVuSans.ttf"))
        try? FileManager.default.removeItem(at: sandbox.folder.appending("fc-cache"))
        let none = try ProcessRunner.hubhost(arguments, environment: environment)
        #expect(none.stderr.contains("fontconfig finds no font at all"), "\(none.stderr)")
        let record = try ProcessRunner.hubhost(
            [
                "snapshot", "record", banner, "--out", sandbox.folder.appending("golden").path, "--plugins",
                sandbox.plugins.path, "--plugin-cache", sandbox.cache.path,
            ], environment: environment)
        #expect(record.status == 2 && record.stderr.contains("nothing recorded: fontconfig finds no font"))
        #expect(sandbox.files(in: "golden").isEmpty)
    }

    /// Runs share golden folders (shards in CI containers of their own, where process ids mean nothing to one
    /// another): a stage another run holds locked is left alone, whatever its name says (one run deleted another's
    /// as the stage of a process that did not exist), and goes once its run has ended. A record stopped while it
    /// put its goldens in place (`kill -9`) has them put in place by the next run, so the folder is never half old,
    /// half new; its stage is ignored by git meanwhile.
    @Test func stagesOfOtherRunsAreLeftAloneAndAnInterruptedCommitIsFinished() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        let golden = sandbox.folder.appending("golden")
        let names = sandbox.files(in: "golden")
        try #require(names.count > 2)
        // Another run's stage, named for a process that does not exist here, its lock held by a live process.
        let other = golden.appendingPathComponent(".hubhost-record-999999-1")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        // Held locked by this process, as that run's supervisor would hold it.
        let lock = open(other.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        try #require(lock >= 0 && flock(lock, LOCK_EX) == 0)
        #expect(try sandbox.snapshot("record", out: "golden").status == 0)
        #expect(FileManager.default.fileExists(atPath: other.path), "a live run's stage was removed")
        close(lock)  // that run ends

        // A stage whose run was killed while it put goldens in place: two goldens moved, the rest still staged.
        let stopped = golden.appendingPathComponent(".hubhost-record-999998-2")
        try FileManager.default.createDirectory(at: stopped, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: stopped.appendingPathComponent(".lock").path, contents: nil)
        let marker = Data("new".utf8)
        var manifest = ""
        for (index, name) in names.enumerated() {
            manifest += "write\t\(name)\n"
            if index >= 2 {
                let staged = stopped.appendingPathComponent(name)
                try FileManager.default.createDirectory(
                    at: staged.deletingLastPathComponent(), withIntermediateDirectories: true)
                try marker.write(to: staged)
            }
        }
        try Data(manifest.utf8).write(to: stopped.appendingPathComponent("manifest"))
        FileManager.default.createFile(atPath: stopped.appendingPathComponent("committing").path, contents: nil)
        let verify = try sandbox.snapshot("verify", out: "golden")
        #expect(verify.stderr.contains("put in place the goldens of a record that was stopped"), "\(verify.stderr)")
        for name in names.dropFirst(2) {
            #expect(try Data(contentsOf: golden.appendingPathComponent(name)) == marker, "\(name) was not put in place")
        }
        #expect(!FileManager.default.fileExists(atPath: stopped.path))
        #expect(!FileManager.default.fileExists(atPath: other.path), "an ended run's stage stays")
    }

    /// A carousel paged by the user keeps its page through a rotation: configured again with the model it shows
    /// (Hub's reconfigure for a new container, which restores no UI state), it went back to its first card.
    @Test func aPagedCarouselKeepsItsPageThroughARotation() throws {
        let sandbox = try Sandbox()
        let cards = (0..<8).map {
            #"{"id": "c\#($0)", "component": {"id": "demo:card"}, "text": {"title": "Card \#($0)"}}"#
        }
        let rows = (0..<40).map {
            #"{"id": "r\#($0)", "component": {"id": "demo:row"}, "text": {"title": "Row \#($0)"}}"#
        }
        let carousel =
            #"{"id": "car", "component": {"id": "demo:carousel"}, "text": {"title": "Albums"}, "custom": {"itemHeight": 200}, "children": [\#(cards.joined(separator: ","))]}"#
        let view = sandbox.views.appendingPathComponent("carousel.json")
        try Data(#"{"body": [\#(([carousel] + rows).joined(separator: ","))]}"#.utf8).write(to: view)
        // Paged twice, rotated, then scrolled away (its state is saved as it leaves the screen) and back.
        let script = sandbox.views.appendingPathComponent("rotate.jsonl")
        try Data(
            """
            {"event": "tap", "indexPath": [0]}
            {"event": "advance", "seconds": 0.5}
            {"event": "tap", "indexPath": [0]}
            {"event": "advance", "seconds": 0.5}
            {"event": "resize", "width": 414, "height": 736}
            {"event": "scroll", "y": 2500}
            {"event": "scroll", "y": 0}
            """.utf8
        ).write(to: script)
        let run = try sandbox.hubhost(["events", view.path, script.path])
        #expect(run.status == 0, "\(run.stderr)")
        // What it saves when it leaves, after the rotation: still the page it was on.
        let leaving = run.stdout.components(separatedBy: "scroll to y 2500").last ?? ""
        #expect(leaving.contains(#"[car] currentUIState → {"offset":336.0}"#), "\(leaving)")
    }

    @Test func shardsSplitTheImagesWithoutOverlap() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.snapshot("record", out: "a", ["--shard", "1/2"]).status == 0)
        #expect(try sandbox.snapshot("record", out: "b", ["--shard", "2/2"]).status == 0)
        #expect(try sandbox.snapshot("record", out: "all").status == 0)
        let a = Set(sandbox.files(in: "a"))
        let b = Set(sandbox.files(in: "b"))
        #expect(a.isDisjoint(with: b) && !a.isEmpty && !b.isEmpty)
        #expect(a.union(b) == Set(sandbox.files(in: "all")))
    }

    @Test func galleryListsEveryComponentWithItsStories() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.hubhost(["gallery", "--format", "json", "--widths", "320,768"])
        #expect(result.status == 0, "\(result.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let components = entries.compactMap { $0["component"] as? String }
        #expect(
            Set(components)
                == [
                    "cdemo:badge", "cdemo:banner", "cdemo:divider", "cdemo:tile", "demo:card", "demo:carousel",
                    "demo:header", "demo:image", "demo:row",
                ])
        for entry in entries {
            let stories = try #require(entry["stories"] as? [[String: Any]])
            #expect(!stories.isEmpty)
            #expect(stories.allSatisfy { $0["source"] as? String == "plugin" }, "the shipped plugins declare stories")
            #expect(stories.allSatisfy { ($0["widths"] as? [Double])?.isEmpty == false })
        }
        let html = try sandbox.hubhost(["gallery", "--widths", "320"])
        #expect(html.stdout.contains("data-component=\"demo:row\" data-story=\"long title\""))
        #expect(html.stdout.components(separatedBy: "<svg ").count > 20)
        let png = sandbox.folder.appending("gallery.png")
        #expect(try sandbox.hubhost(["gallery", "--format", "png", "-o", png.path]).status == 0)
        #expect(PNGImage(png: try Data(contentsOf: png)) != nil)
    }
}
