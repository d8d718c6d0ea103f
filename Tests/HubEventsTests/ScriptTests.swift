import Foundation
import HubCore
import HubTestKit
import Testing

/// Event script lines: every format of the issue, and a clear error naming the file and line otherwise.
@Suite struct ScriptTests {
    func parse(_ line: String) throws -> ViewEvent { try EventScript.parse(line, file: "s.jsonl", number: 7) }
    func error(_ line: String) -> String {
        do {
            _ = try parse(line)
            return "(parsed)"
        } catch { return "\(error)" }
    }

    @Test func everyEventOfTheIssue() throws {
        #expect(try parse(#"{"event": "tap", "indexPath": [3, 1]}"#) == .tap(.indexPath([3, 1])))
        #expect(
            try parse(#"{"event": "highlight", "point": {"x": 10, "y": 20.5}}"#)
                == .highlight(.point(Point(x: 10, y: 20.5))))
        #expect(try parse(#"{"event": "unhighlight", "indexPath": [0]}"#) == .unhighlight(.indexPath([0])))
        #expect(
            try parse(#"{"event": "tap", "indexPath": [1], "section": "overlays"}"#)
                == .tap(.indexPath([1], section: .overlay)))
        #expect(try parse(#"{"event": "scroll", "y": 120}"#) == .scroll(y: 120))
        #expect(
            try parse(#"{"event": "resize", "width": 320, "height": 480}"#) == .resize(Size(width: 320, height: 480)))
        #expect(try parse(#"{"event": "advance", "seconds": 0.2}"#) == .advance(seconds: 0.2))
        #expect(
            try parse(#"{"event": "action", "indexPath": [2], "action": "a:b", "custom": {"k": "v"}}"#)
                == .action(
                    .indexPath([2]), identifier: ComponentIdentifier(namespace: "a", name: "b"),
                    custom: JSONObject([("k", .string("v"))])))
        #expect(try parse(#"{"event": "image", "uri": "x.png", "ok": false}"#) == .image(uri: "x.png", ok: false))
    }

    @Test func badLinesNameTheFileLineAndProblem() {
        #expect(error("{not json") == "s.jsonl:7: not JSON: {not json")
        #expect(error("[1]") == "s.jsonl:7: expected a JSON object, found an array")
        #expect(error(#"{"indexPath": [1]}"#) == #"s.jsonl:7: missing "event""#)
        #expect(error(#"{"event": "swipe"}"#).hasPrefix(#"s.jsonl:7: unknown event "swipe""#))
        #expect(error(#"{"event": "scrol"}"#).contains(#"(did you mean "scroll"? expected tap"#))
        #expect(error(#"{"event": "Tap"}"#).contains(#"did you mean "tap"?"#))
        #expect(error(#"{"event": "tap"}"#) == #"s.jsonl:7: tap: needs "indexPath" or "point""#)
        #expect(
            error(#"{"event": "tap", "indexPath": [0], "point": {"x": 1, "y": 2}}"#)
                == #"s.jsonl:7: tap: give "indexPath" or "point", not both"#)
        #expect(
            error(#"{"event": "tap", "indexPath": [1, -2]}"#)
                == #"s.jsonl:7: tap: "indexPath"[1]: expected a non-negative integer, found -2"#)
        #expect(
            error(#"{"event": "scroll", "y": "down"}"#) == #"s.jsonl:7: scroll: "y": expected a number, found "down""#)
        #expect(
            error(#"{"event": "advance", "seconds": -1}"#)
                == #"s.jsonl:7: advance: "seconds": -1 is out of range (0 <= x <= 1000000)"#)
        #expect(
            error(#"{"event": "action", "indexPath": [0], "action": "nocolon"}"#)
                == #"s.jsonl:7: action: "action": expected "namespace:name", found "nocolon""#)
        #expect(
            error(#"{"event": "image", "uri": "x", "ok": 1}"#)
                == #"s.jsonl:7: image: "ok": expected true or false, found 1"#)
        // A key given twice would mean its last value, silently.
        #expect(
            error(#"{"event": "tap", "indexPath": [0], "indexPath": [1]}"#) == #"s.jsonl:7: "indexPath" is given twice"#
        )
        // A byte order mark before the first line is not part of it.
        let marked = EventScript.lines(of: [0xEF, 0xBB, 0xBF] + Array(#"{"event": "scroll", "y": 1}"#.utf8))
        #expect(marked.first?.text == #"{"event": "scroll", "y": 1}"#)
        // A misspelt key is an error, not ignored (it would have tapped body[0] instead of the header's child).
        #expect(
            error(#"{"event": "tap", "sectoin": "header", "indexPath": [0]}"#)
                == #"s.jsonl:7: tap: unknown key "sectoin"; did you mean "section"? (tap takes event, indexPath, point, section)"#
        )
        #expect(error(#"{"event": "scroll", "y": 10, "animated": true}"#).contains(#"scroll: unknown key "animated""#))
    }

    @Test func commentsAndBlankLinesAreSkippedButLinesKeepTheirNumbers() {
        let lines = EventScript.lines(of: "# comment\n\n{\"event\": \"advance\", \"seconds\": 1}\n// another\n{}\n")
        #expect(lines.map(\.number) == [3, 5])
    }
}

/// The `hubhost events` command end to end, on the example view and script with the demo plugins.
@Suite struct EventsCommandTests {
    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let result = try ProcessRunner.hubhost(arguments, currentDirectory: EventsFixture.packageRoot)
        return (result.status, result.stdout, result.stderr)
    }

    /// The demo plugins in a folder of their own (the bin dir also holds other test artifacts).
    func demoPlugins() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hubhost-events-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
            try FileManager.default.copyItem(
                at: EventsFixture.binDir.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        return folder
    }

    /// The final drawing shows an image only once its load ended well: pending and failed loads are drawn as their
    /// placeholders (every image was drawn as loaded).
    @Test func theFinalDrawingShowsOnlyImagesWhoseLoadsEndedWell() throws {
        let plugins = try demoPlugins()
        defer { try? FileManager.default.removeItem(at: plugins) }
        let script = plugins.appendingPathComponent("images.jsonl")
        let cover = #"{"event": "image", "uri": "assets/cover.png", "ok": true}"#
        let wave = #"{"event": "image", "uri": "file:assets/wave.svg", "ok": false}"#
        func drawing(_ lines: [String], manual: Bool) throws -> String {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: script)
            let svg = plugins.appendingPathComponent("final.svg")
            let result = try run(
                [
                    "events", "examples/images.json", script.path, "--plugins", plugins.path, "--plugin-cache",
                    plugins.appendingPathComponent("cache").path, "--format", "svg", "-o", svg.path,
                ] + (manual ? ["--manual-images"] : []))
            #expect(result.status == 0, "\(result.err)")
            return try String(contentsOf: svg, encoding: .utf8)
        }
        func images(_ svg: String, _ type: String) -> Int {
            svg.components(separatedBy: "href=\"data:image/\(type)").count - 1
        }
        let loaded = try drawing([#"{"event": "scroll", "y": 0}"#], manual: false)
        let pending = try drawing([#"{"event": "scroll", "y": 0}"#], manual: true)
        let ended = try drawing([cover, wave], manual: true)
        // Both cover.png components (png-file, tile-img) and the body's wave.svg wait for their loads.
        #expect(images(loaded, "png") == images(pending, "png") + 2)
        #expect(images(loaded, "svg+xml") == images(pending, "svg+xml") + 1)
        #expect(images(ended, "png") == images(loaded, "png"), "cover.png loaded")
        #expect(images(ended, "svg+xml") == images(pending, "svg+xml"), "the failed wave.svg stays a placeholder")

        // After a scroll, a drawing is the screen at the offset (it was the whole content, blank but where live).
        try Data(#"{"event": "scroll", "y": 3000}"#.utf8).write(to: script)
        let screen = plugins.appendingPathComponent("screen.svg")
        let scrolled = try run([
            "events", "examples/large.json", script.path, "--plugins", plugins.path, "--plugin-cache",
            plugins.appendingPathComponent("cache").path, "--format", "svg", "-o", screen.path,
        ])
        #expect(scrolled.status == 0, "\(scrolled.err)")
        let svg = try String(contentsOf: screen, encoding: .utf8)
        #expect(svg.contains(#"width="375" height="667""#), "\(svg.prefix(300))")
        #expect(svg.components(separatedBy: "<text").count > 10, "the components on the screen are drawn")
    }

    @Test func replaysTheExampleScriptWithATraceOfCallsActionsAndOpenedURIs() throws {
        let plugins = try demoPlugins()
        defer { try? FileManager.default.removeItem(at: plugins) }
        let result = try run([
            "events", "examples/events/events.json", "examples/events/events.jsonl", "--plugins", plugins.path,
            "--plugin-cache", plugins.appendingPathComponent("cache").path, "--assets", "examples/assets",
        ])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("  open      hub:album/1: opened"))
        #expect(result.out.contains("action    cdemo:log (selection) for [log]: performed"))
        // The script's action event on a component without an action performer: performed, and said.
        #expect(result.out.contains("[open] has no action performer: the action is performed as if it had one"))
        #expect(result.out.contains("no action factory for namespace 'nowhere'"))
        #expect(result.out.contains("cdemo:badge#"), "calls into the C plugin are traced")
        #expect(result.out.contains("updateSelectionState (selected)"))
        #expect(result.out.contains("no loader for scheme 'https'"))

        let json = try run([
            "events", "examples/events/events.json", "examples/events/events.jsonl", "--plugins", plugins.path,
            "--plugin-cache", plugins.appendingPathComponent("cache").path, "--json", "--no-calls",
        ])
        let records = json.out.split(separator: "\n").map { try? JSONValue.parse(String($0)) }
        #expect(!records.isEmpty && records.allSatisfy { $0?.objectValue?["kind"] != nil })
        #expect(records.contains { $0?["kind"]?.stringValue == "open" && $0?["uri"]?.stringValue == "hub:album/3" })
        // With calls traced, appearance and selection records name the instance, as call records do.
        let traced = try run([
            "events", "examples/events/events.json", "examples/events/events.jsonl", "--plugins", plugins.path,
            "--plugin-cache", plugins.appendingPathComponent("cache").path, "--json",
        ])
        let appear = traced.out.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            .first { $0["kind"]?.stringValue == "appear" }
        #expect(appear?["instance"]?.stringValue?.contains("#") == true, "\(String(describing: appear))")
        // A drawing written after a JSON-lines trace would break the stream; contradictory image options are said.
        let mixed = try run([
            "events", "examples/events/events.json", "examples/events/events.jsonl", "--json", "--format", "svg",
        ])
        #expect(mixed.status == 64 && mixed.err.contains("--json with --format needs -o FILE"), "\(mixed.err)")
        let images = try run([
            "events", "examples/events/events.json", "examples/events/events.jsonl", "--manual-images",
            "--image-latency", "0.5",
        ])
        #expect(images.status == 64 && images.err.contains("no effect with --manual-images"), "\(images.err)")
        // A point below the screen's edge touches nothing, whatever is laid out there.
        let script = plugins.appendingPathComponent("below.jsonl")
        try Data(#"{"event": "tap", "point": {"x": 100, "y": 700}}"#.utf8).write(to: script)
        let below = try run([
            "events", "examples/events/events.json", script.path, "--plugins", plugins.path, "--plugin-cache",
            plugins.appendingPathComponent("cache").path,
        ])
        #expect(below.status == 1 && below.err.contains("outside the 375×667 screen"), "\(below.out)\(below.err)")
    }

    @Test func outOfRangeNumbersAndInvalidUTF8AreErrorsWithTheirLineNotCrashes() throws {
        let plugins = try demoPlugins()
        defer { try? FileManager.default.removeItem(at: plugins) }
        let script = plugins.appendingPathComponent("hostile.jsonl")
        var bytes = Array("{\"event\":\"resize\",\"width\":1e300,\"height\":736}\n".utf8)
        bytes += Array("{\"event\":\"scroll\",\"y\":\"".utf8) + [0xFF, 0xFE] + Array("\"}\n".utf8)
        bytes += Array("{\"event\":\"advance\",\"seconds\":1}\n".utf8)
        try Data(bytes).write(to: script)
        let result = try run([
            "events", "examples/events/events.json", script.path, "--plugins", plugins.path,
            "--no-calls", "--keep-going", "--plugin-cache", plugins.appendingPathComponent("cache").path,
        ])
        #expect(result.status == 1, "replayed, with bad lines skipped: \(result.err)")
        #expect(result.err.contains("hostile.jsonl:1: resize: \"width\": 1e+300 is out of range (0 < x <= 100000)"))
        #expect(result.err.contains("hostile.jsonl:2: invalid UTF-8 at byte 24 of the line"))
        #expect(result.err.contains("skipped 2 bad line(s)"))
        // A script too large to be one is refused before it is read (a sparse file: no disk is used).
        let huge = plugins.appendingPathComponent("huge.jsonl")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        #expect(truncate(huge.path, off_t(EventScript.maxBytes + 1)) == 0)
        let refused = try run(["events", "examples/events/events.json", huge.path, "--plugins", plugins.path])
        #expect(refused.status == 2 && refused.err.contains("over the limit of 64 MiB"), "\(refused.err)")
        let width = try run(["events", "examples/events/events.json", script.path, "--width", "1e300"])
        #expect(width.status == 64 && width.err.contains("--width: 1e+300 is out of range"))
        // A carousel child scrolled out of its strip cannot be touched; one in it can.
        let strip = plugins.appendingPathComponent("strip.jsonl")
        try Data("{\"event\":\"tap\",\"indexPath\":[4,5]}\n{\"event\":\"tap\",\"indexPath\":[4,0]}\n".utf8).write(
            to: strip)
        let stripped = try run([
            "events", "examples/events/events.json", strip.path, "--no-calls", "--plugins", plugins.path,
            "--plugin-cache", plugins.appendingPathComponent("cache").path,
        ])
        #expect(stripped.err.contains("strip.jsonl:1: tap at indexPath [4, 5]: child 5 of [albums] is not displayed"))
        #expect(!stripped.err.contains("strip.jsonl:2"), "\(stripped.err)")
        // What could not apply as asked is said as a bad line is: file:line.
        let missTarget = plugins.appendingPathComponent("miss.jsonl")
        try Data("{\"event\":\"advance\",\"seconds\":1}\n{\"event\":\"tap\",\"indexPath\":[999]}\n".utf8).write(
            to: missTarget)
        let missed = try run(["events", "examples/events/events.json", missTarget.path, "--no-calls"])
        #expect(missed.err.contains("miss.jsonl:2: tap at indexPath [999]"), "\(missed.err)")
        // A negative number is the option's value, not another option: its range is what is wrong.
        let negative = try run(["events", "examples/events/events.json", script.path, "--width", "-5"])
        #expect(negative.status == 64 && negative.err.contains("--width: -5 is out of range"), "\(negative.err)")
        let margin = try run(["render", "examples/home.json", "--margin", "-1", "--plugins", plugins.path])
        #expect(margin.status == 64 && !margin.err.contains("Missing value"), "\(margin.err)")
    }

    @Test func aBadLineStopsTheReplayUnlessKeepGoing() throws {
        let plugins = try demoPlugins()
        defer { try? FileManager.default.removeItem(at: plugins) }
        let script = plugins.appendingPathComponent("bad.jsonl")
        try
            "{\"event\": \"tap\", \"indexPath\": [0]}\n{\"event\": \"jump\"}\n{\"event\": \"advance\", \"seconds\": 1}\n"
            .write(to: script, atomically: true, encoding: .utf8)
        let common = [
            "events", "examples/events/events.json", script.path, "--plugins", plugins.path, "--no-calls",
            "--plugin-cache", plugins.appendingPathComponent("cache").path,
        ]
        let stopped = try run(common)
        #expect(stopped.status == 2)
        #expect(stopped.err.contains("bad.jsonl:2: unknown event \"jump\""))
        #expect(!stopped.out.contains("#3 advance"))
        #expect(stopped.out.contains("stopped at line 2:") && !stopped.out.contains("done:"), "\(stopped.out)")
        let kept = try run(common + ["--keep-going", "--format", "text"])
        #expect(kept.status == 1)
        #expect(kept.out.contains("#3 advance 1s"))
        #expect(kept.out.contains("view events \"Events\""), "the final state is rendered")
    }
}
