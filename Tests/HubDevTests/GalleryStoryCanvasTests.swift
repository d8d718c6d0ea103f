import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost dev --gallery`: a story of the sheet opens alone on a canvas of its own, live (taps, inspection, edits
/// as a view file's), follows its plugin's rebuilds, survives a worker restart, and goes back to the sheet.
@Suite("A story on its own canvas", .serialized)
struct GalleryStoryCanvasTests {
    let root = TestSupport.temporaryDirectory("story-canvas")
    var plugins: URL { root.appendingPathComponent("plugins") }
    var swatch: URL { plugins.appendingPathComponent("libswatch.so") }

    init() throws {
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
    }

    @Test func aStoryOpensLiveFollowsRebuildsAndRestartsAndGoesBack() throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0xFF0000FFu", "PLUGIN_VERSION=\"1\""])
        let dev = try DevProcess(view: nil, plugins: plugins, cache: root.appendingPathComponent("cache"))
        defer { dev.stop() }
        // The sheet says where each story is, so a click on one can open it.
        let sheet = dev.waitForFrame { !($0.stories ?? []).isEmpty }
        let place = try #require(sheet?.stories?.first { $0.component == "swatch:swatch" && $0.story == "full" })
        #expect(place.w == 375 && place.h > 0 && place.x >= 0 && place.y > 0)
        #expect(sheet?.story == nil && sheet?.boxes.isEmpty == true)

        let opened = try dev.post("/story", ["component": "swatch:swatch", "story": "full"])
        #expect(opened.contains("opened swatch:swatch"), "\(opened)")
        let key = DevProcess.Frame.StoryKey(component: "swatch:swatch", story: "full")
        let canvas = dev.waitForFrame { $0.story == key }
        #expect(canvas?.stories == nil, "the sheet is not drawn while a story is open")
        #expect(canvas?.boxes.map(\.component) == ["swatch:swatch"], "\(String(describing: canvas?.boxes))")
        #expect(canvas?.html.contains("#ff0000") == true)
        // Live: a tap goes through the event pipeline; the inspector reads the story's model.
        #expect(try dev.tap([0]).contains("selected"))
        let (status, inspected) = try HTTP.request(port: dev.port, "GET", "/inspect?section=body&path=0")
        #expect(status == 200 && String(decoding: inspected, as: UTF8.self).contains("swatch:swatch"))
        // Its export is named after it, as its golden would be.
        let export = try HTTP.raw(
            port: dev.port, "GET /export.svg HTTP/1.1\r\nHost: 127.0.0.1:\(dev.port)\r\nConnection: close\r\n\r\n"
        ).prefix { $0 != "<" }
        #expect(export.contains("filename=\"swatch-swatch.full.svg\""), "\(export)")

        // A rebuild of its plugin draws the story as the new build has it, still open.
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0x00FF00FFu", "PLUGIN_VERSION=\"2\""])
        let rebuilt = dev.waitForFrame { $0.html.contains("#00ff00") }
        #expect(rebuilt?.story == key, "\(dev.log)")

        // A worker that ends (killed here) is replaced, with the story still open.
        let worker = try #require(Self.children(of: dev.process.processIdentifier).first, "no worker")
        kill(worker, SIGKILL)
        let restarted = dev.waitForFrame { $0.cause.contains("restarted") }
        #expect(restarted?.story == key, "\(dev.log)")
        #expect(restarted?.boxes.count == 1)

        // What cannot be opened is said (not found); an empty body goes back to the sheet.
        let (missingStatus, missing) = try HTTP.request(
            port: dev.port, "POST", "/story", body: Data(#"{"component": "swatch:swatch", "story": "nope"}"#.utf8))
        #expect(missingStatus == 404 && String(decoding: missing, as: UTF8.self).contains("no story"))
        let (storyOnly, _) = try HTTP.request(port: dev.port, "POST", "/story", body: Data(#"{"story": "x"}"#.utf8))
        #expect(storyOnly == 400, "a story without its component is not the sheet")
        let (badStatus, _) = try HTTP.request(
            port: dev.port, "POST", "/story", body: Data(#"{"component": 7}"#.utf8))
        #expect(badStatus == 400)
        #expect(try dev.post("/story", [String: String]()).contains("gallery"))
        let back = dev.waitForFrame { $0.story == nil && !($0.stories ?? []).isEmpty }
        #expect(back != nil && back?.boxes.isEmpty == true, "\(dev.log)")
    }

    /// A story has no folder: an image it names by file is not read on its canvas (from the working directory
    /// `dev` runs in, where the gallery's placeholder view file would be), as it is not on the sheet.
    @Test func aStoryCanvasReadsNoFileTheStoryNames() throws {
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["STORY_IMAGE=\"probe.png\""])
        // A real PNG in the folder `dev` runs in.
        let png = Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!
        try png.write(to: root.appendingPathComponent("probe.png"))
        let dev = try DevProcess(
            view: nil, plugins: plugins, cache: root.appendingPathComponent("cache"), directory: root)
        defer { dev.stop() }
        #expect(dev.waitForFrame { !($0.stories ?? []).isEmpty } != nil, "\(dev.log)")
        #expect(try dev.post("/story", ["component": "swatch:swatch", "story": "file image"]).contains("opened"))
        let canvas = dev.waitForFrame { $0.story?.story == "file image" }
        #expect(canvas?.html.contains("Pic taps:0") == true, "\(canvas?.html.prefix(300) ?? "")")
        #expect(canvas?.html.contains("data:image/png") == false, "the story's file was read and drawn")
    }

    /// A fault in a story open on its canvas is named by component and id, as one in a view file is: the story
    /// has no file, so the supervisor reads the worker's copy of it (it named neither, and would have read a
    /// `gallery.json` in the folder `dev` runs in).
    @Test func aFaultInAnOpenStoryNamesItsComponentAndID() throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["STORY_IMAGE=\"x.png\"", "CRASH_WHEN_SELECTED"])
        try #"{"body": [{"id": "decoy", "component": {"id": "nothing:here"}}]}"#.write(
            to: root.appendingPathComponent("gallery.json"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(
            view: nil, plugins: plugins, cache: root.appendingPathComponent("cache"), directory: root)
        defer { dev.stop() }
        #expect(dev.waitForFrame { !($0.stories ?? []).isEmpty } != nil, "\(dev.log)")
        #expect(try dev.post("/story", ["component": "swatch:swatch", "story": "file image"]).contains("opened"))
        #expect(dev.waitForFrame { $0.story != nil } != nil)
        _ = try? dev.tap([0])
        #expect(TestSupport.waitUntil { dev.log.contains("crashed with SIGSEGV") }, "\(dev.log)")
        let line = dev.lines.first { $0.contains("crashed with SIGSEGV") } ?? ""
        #expect(line.contains("[swatch:swatch] for body[0] (id \"s\")"), "\(line)")
        #expect(!line.contains("decoy") && !line.contains("gallery.json"), "\(line)")
    }

    /// The processes `pid` started (its worker), from /proc: each thread lists the children it started.
    static func children(of pid: Int32) -> [Int32] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.flatMap { thread in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0) }
        }
    }
}
