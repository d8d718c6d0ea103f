import Foundation
import Testing

/// The preview as a workbench, in headless Chromium, on the bundled example view and plugins: first paint without
/// the event stream, the plugin panel, images, header and overlay taps, export.
@Suite("Preview workbench in headless Chromium", .serialized)
struct WorkbenchBrowserTests {
    static let examples = TestSupport.packageRoot.appendingPathComponent("examples")

    /// `root/plugins`, holding copies of the shipped plugins.
    static func shippedPlugins(in root: URL) throws -> URL {
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
            try FileManager.default.copyItem(
                at: TestSupport.binDirectory.appendingPathComponent(name), to: plugins.appendingPathComponent(name))
        }
        return plugins
    }

    /// `hubhost dev examples/home.json` on a copy of the shipped plugins, and a browser (on no page yet); `end`
    /// quits the browser, stops `dev` and removes its folder.
    static func start(_ extra: [String] = []) throws -> (dev: DevProcess, browser: HeadlessChromium, end: () -> Void) {
        let root = TestSupport.temporaryDirectory("workbench")
        let plugins = try Self.shippedPlugins(in: root)
        let dev = try DevProcess(
            view: examples.appendingPathComponent("home.json"), plugins: plugins,
            cache: root.appendingPathComponent("cache"), extra: extra)
        let browser: HeadlessChromium
        do {
            browser = try HeadlessChromium(executable: try #require(HeadlessChromium.executable))
        } catch {
            dev.stop()
            try? FileManager.default.removeItem(at: root)
            throw error
        }
        return (
            dev, browser,
            {
                browser.quit()
                dev.stop()
                try? FileManager.default.removeItem(at: root)
            }
        )
    }

    /// The gallery's sheet in a browser: a click on a story opens it alone, live, named in the toolbar and in the
    /// page's address (a link opens it again); a tap on it goes through the event pipeline; "← gallery" goes back.
    @Test(HeadlessChromium.enabled)
    func aStoryClickedOnTheSheetOpensOnItsOwnCanvas() throws {
        let root = TestSupport.temporaryDirectory("workbench-story")
        defer { try? FileManager.default.removeItem(at: root) }
        let dev = try DevProcess(
            view: nil, plugins: try Self.shippedPlugins(in: root), cache: root.appendingPathComponent("cache"))
        defer { dev.stop() }
        let browser = try HeadlessChromium(
            executable: try #require(HeadlessChromium.executable, "chromium is required on CI"))
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        let storyBox = "#boxes .box.story[data-component=\"cdemo:banner\"]"
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelectorAll('\(storyBox)').length")) ?? "0" != "0"
            },
            "\(dev.log)")
        #expect(try browser.evaluate("document.getElementById('story-bar').hidden") == "true")
        let story = try browser.evaluate("document.querySelector('\(storyBox)').dataset.story")
        _ = try browser.evaluate("document.querySelector('\(storyBox)').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('story-name').textContent"))
                    == "cdemo:banner — \(story)"
            }, "\(dev.log)")
        #expect(try browser.evaluate("document.getElementById('story-bar').hidden") == "false")
        #expect(try browser.evaluate("document.querySelectorAll('#boxes .box.story').length") == "0")
        #expect(try browser.evaluate("decodeURIComponent(location.hash)").contains("story=cdemo:banner/\(story)"))
        // The story is live: a click taps it.
        _ = try browser.evaluate("document.querySelector('#boxes .box[data-index-path=\"0\"]').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelectorAll('#boxes .box.tapped').length")) == "1"
            })
        // Opening it was a step in the page's history: Back shows the sheet again, forward the story.
        func storyShown() -> String? { try? browser.evaluate("document.getElementById('story-name').textContent") }
        _ = try browser.evaluate("history.back()")
        #expect(TestSupport.waitUntil { storyShown() == "" }, "\(dev.log)")
        #expect(try dev.frame().story == nil)
        _ = try browser.evaluate("history.forward()")
        #expect(TestSupport.waitUntil { storyShown() == "cdemo:banner — \(story)" }, "\(dev.log)")
        // A new page on that address opens the same story; back to the sheet from there.
        let address = try browser.evaluate("location.href")
        try browser.open("about:blank")
        try browser.open(address)
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('story-name').textContent"))
                    == "cdemo:banner — \(story)"
            })
        _ = try browser.evaluate("document.getElementById('back-to-gallery').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('story-bar').hidden")) == "true"
                    && (try? browser.evaluate("document.querySelectorAll('\(storyBox)').length")) ?? "0" != "0"
            }, "\(dev.log)")
        #expect(try !browser.evaluate("location.hash").contains("story="))
        // A link to a story no plugin has says so, and the address goes back to what is shown.
        try browser.open(address.replacing("story=", with: "story=nope%3Anothing%2F"))
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('problems').textContent"))?.contains("no story") == true
            })
        #expect(TestSupport.waitUntil { (try? browser.evaluate("location.hash"))?.contains("story=") == false })
    }

    /// `hubhost dev --gallery` stopped and started again: the page reconnects and opens the story its address names
    /// again (the new server's sheet replaced it, and the address lost it). The toolbar keeps one line whatever
    /// the last result says (a long tap result wrapped it to three and moved the drawing).
    @Test(HeadlessChromium.enabled)
    func aStoryOpenInThePageSurvivesARestartOfDev() throws {
        let root = TestSupport.temporaryDirectory("workbench-restart")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = try Self.shippedPlugins(in: root)
        let cache = root.appendingPathComponent("cache")
        var dev = try DevProcess(view: nil, plugins: plugins, cache: cache, fixedPort: true)
        defer { dev.stop() }
        let browser = try HeadlessChromium(
            executable: try #require(HeadlessChromium.executable, "chromium is required on CI"))
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(dev.port)/#story=cdemo%3Abadge%2Fred")
        func storyShown() -> String? { try? browser.evaluate("document.getElementById('story-name').textContent") }
        #expect(TestSupport.waitUntil { storyShown() == "cdemo:badge — red" }, "\(dev.log)")
        #expect(try browser.evaluate("document.title") == "cdemo:badge — red · hubhost dev")
        let toolbar = try browser.evaluate("document.getElementById('header-bar').offsetHeight")
        _ = try browser.evaluate("setCause('a long result '.repeat(40))")
        #expect(try browser.evaluate("document.getElementById('header-bar').offsetHeight") == toolbar)

        // A server that stops answering (stopped, or busy) is not shown as live for long.
        kill(dev.process.processIdentifier, SIGSTOP)
        func state() -> String? { try? browser.evaluate("document.getElementById('state').textContent") }
        #expect(TestSupport.waitUntil(timeout: 20) { state() == "not responding" }, "\(String(describing: state()))")
        kill(dev.process.processIdentifier, SIGCONT)
        #expect(TestSupport.waitUntil(timeout: 10) { state() == "live" }, "\(String(describing: state()))")

        let port = dev.port
        dev.stop()
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('state').textContent")) == "reconnecting…"
            })
        dev = try DevProcess(view: nil, plugins: plugins, cache: cache, port: port)
        #expect(
            TestSupport.waitUntil(timeout: 30) {
                (try? browser.evaluate("document.getElementById('state').textContent")) == "live"
                    && storyShown() == "cdemo:badge — red"
            }, "\(dev.log)")
        #expect(try dev.frame().story?.story == "red")
        #expect(try browser.evaluate("decodeURIComponent(location.hash)").contains("story=cdemo:badge/red"))
    }

    /// A view's text cannot break the page: an id holding "<!--" and "<script" once stopped the page's script from
    /// running (no boxes, no live updates). And every drawing at another width is clipped by its own clip paths,
    /// not the main view's (a carousel drawn at 768 was cut at 375).
    @Test(HeadlessChromium.enabled)
    func viewTextCannotBreakThePageAndEachWidthHasItsOwnClips() throws {
        let root = TestSupport.temporaryDirectory("workbench-hostile")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = try Self.shippedPlugins(in: root)
        var view = try String(contentsOf: Self.examples.appendingPathComponent("carousel.json"), encoding: .utf8)
        view = view.replacing(
            #""id": "intro""#, with: #""id": "a <!-- <script> b", "custom": {"note": "</script><!--"}"#)
        let viewFile = root.appendingPathComponent("carousel.json")
        try view.write(to: viewFile, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            at: Self.examples.appendingPathComponent("assets"), to: root.appendingPathComponent("assets"))
        let dev = try DevProcess(
            view: viewFile, plugins: plugins, cache: root.appendingPathComponent("cache"),
            extra: ["--widths", "375,768"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.extras?.map(\.width) == [768] } != nil, "\(dev.log)")
        let browser = try HeadlessChromium(
            executable: try #require(HeadlessChromium.executable, "chromium is required on CI"))
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        // The page's script ran: it made the boxes, the first one for the hostile id.
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelector('#boxes .box')?.dataset.componentId ?? ''"))
                    == "a <!-- <script> b"
            })
        // Every clip path id on the page is used once.
        let ids = try browser.evaluate("[...document.querySelectorAll('clipPath')].map(c => c.id).join(' ')")
        let list = ids.split(separator: " ")
        #expect(!list.isEmpty && Set(list).count == list.count, "\(ids)")
    }

    /// A view of 20,000 components: the page holds the part near where it is scrolled (it used to hold every
    /// component: 87 MB at 100k), is as tall as the whole view, and scrolling it to the end draws the end. Exports
    /// say what to run instead of giving a part.
    @Test(HeadlessChromium.enabled)
    func aLargeViewIsDrawnNearWhereThePageIsScrolled() throws {
        let root = TestSupport.temporaryDirectory("workbench-large")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = try Self.shippedPlugins(in: root)
        let count = 20_000
        let body = (0..<count).map { index in
            let component = ["demo:row", "cdemo:tile", "cdemo:badge", "demo:card"][index % 4]
            return
                #"{"id": "item-\#(index)", "component": {"id": "\#(component)"}, "text": {"title": "Item \#(index)"}}"#
        }
        let viewFile = root.appendingPathComponent("large.json")
        try Data(#"{"id": "large", "body": [\#(body.joined(separator: ",\n"))]}"#.utf8).write(to: viewFile)
        let dev = try DevProcess(view: viewFile, plugins: plugins, cache: root.appendingPathComponent("cache"))
        defer { dev.stop() }
        let first = try #require(dev.waitForFrame { $0.window != nil }, "\(dev.log)")
        #expect(first.window?.components == count)
        #expect(first.boxes.count < 200, "\(first.boxes.count) boxes")
        let (page, _) = try HTTP.request(port: dev.port, "GET", "/")
        #expect(page == 200)

        let browser = try HeadlessChromium(executable: try #require(HeadlessChromium.executable))
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("document.getElementById('state').textContent")) == "live" })
        // The page is as tall as the whole view, and holds only the boxes near its top.
        let height =
            Double(try browser.evaluate("document.getElementById('stage').getBoundingClientRect().height")) ?? 0
        #expect(height >= first.height, "\(height) < \(first.height)")
        #expect(Int(try browser.evaluate("document.querySelectorAll('#boxes .box').length")) ?? 0 < 200)
        // Scrolled to the end, the page asks for the end, and the last component is drawn and can be tapped.
        _ = try browser.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        let lastBox = "#boxes .box[data-index-path=\"\(count - 1)\"]"
        #expect(
            TestSupport.waitUntil(timeout: 20) {
                (try? browser.evaluate("document.querySelector('\(lastBox)') ? 'yes' : 'no'")) == "yes"
            }, "\(dev.log)")
        #expect(
            try browser.evaluate("document.getElementById('view').innerHTML.includes('Item \(count - 1)')") == "true")
        #expect(try browser.evaluate("document.getElementById('view').innerHTML.includes('>Item 0<')") == "false")
        _ = try browser.evaluate("document.querySelector('\(lastBox)').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelector('#boxes .box.tapped')?.dataset.indexPath"))
                    == "\(count - 1)"
            }, "\(dev.log)")
        // Idle, the page asks for nothing more (some window heights asked for ever), and problems show over the
        // window wherever it is scrolled (they showed at the top of the view).
        _ = try browser.send(
            "Emulation.setDeviceMetricsOverride",
            ["width": 1200, "height": 2400, "deviceScaleFactor": 1, "mobile": false], inPage: true)
        _ = try browser.evaluate("window.scrollBy(0, -5000)")
        Thread.sleep(forTimeInterval: 1)
        let settled = try browser.evaluate("document.body.dataset.sequence")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try browser.evaluate("document.body.dataset.sequence") == settled)
        #expect(try browser.evaluate("getComputedStyle(document.getElementById('overlay')).position") == "fixed")
        #expect(try browser.evaluate("document.getElementById('overlay').closest('#canvas') === null") == "true")
        // At 50% the page is half as tall (the second half of its scrollbar was empty), and the same point of the
        // view stays at the window's top.
        let before = Double(try browser.evaluate("viewed().y")) ?? -1
        try browser.choose("zoom", "0.5")
        let halfHeight = Double(try browser.evaluate("document.documentElement.scrollHeight")) ?? 0
        #expect(halfHeight < first.height * 0.6 && halfHeight > first.height * 0.4, "\(halfHeight) of \(first.height)")
        let after = Double(try browser.evaluate("viewed().y")) ?? -1
        #expect(before > 0 && abs(after - before) < 200, "\(before) → \(after)")
        // A second page opened at the top draws the top, though the view was last drawn at the end for the first.
        let second = try HeadlessChromium(executable: try #require(HeadlessChromium.executable))
        defer { second.quit() }
        try second.open("http://127.0.0.1:\(dev.port)/")
        #expect(
            TestSupport.waitUntil {
                (try? second.evaluate("document.querySelector('#boxes .box[data-index-path=\"0\"]') ? 'yes' : 'no'"))
                    == "yes"
            }, "\(dev.log)")
        // A link to a component far from where the view is drawn inspects it and takes the page there.
        let third = try HeadlessChromium(executable: try #require(HeadlessChromium.executable))
        defer { third.quit() }
        try third.open("http://127.0.0.1:\(dev.port)/#inspect=body%3A15000")
        #expect(
            TestSupport.waitUntil {
                (try? third.evaluate("document.getElementById('inspected').textContent.includes('item-15000')"))
                    == "true"
            }, "\((try? third.evaluate("document.getElementById('inspected').textContent")) ?? "")")
        #expect(try third.evaluate("location.hash") == "#inspect=body%3A15000")
        #expect(
            TestSupport.waitUntil {
                (try? third.evaluate("document.querySelector('#boxes .box[data-index-path=\"15000\"]') ? 'yes' : 'no'"))
                    == "yes"
            }, "\(dev.log)")
        // Scrolling never printed a line in the terminal, and exporting a part is refused with what to run.
        #expect(!dev.log.contains("scrolled"), "\(dev.log)")
        #expect(try browser.evaluate("document.getElementById('export-svg').hidden") == "true")
        let (status, said) = try HTTP.request(port: dev.port, "GET", "/export.svg")
        #expect(status == 409 && String(decoding: said, as: UTF8.self).contains("--format svg"))
        // 1,500 components are drawn whole, too tall for one PNG: the PNG export says so (413), the SVG one draws.
        try Data(#"{"id": "large", "body": [\#(body.prefix(1_500).joined(separator: ",\n"))]}"#.utf8)
            .write(to: viewFile)
        let whole = try #require(dev.waitForFrame { $0.window == nil && $0.boxes.count >= 1_500 }, "\(dev.log)")
        #expect(whole.height > 32_768)
        let (pngStatus, pngSaid) = try HTTP.request(port: dev.port, "GET", "/export.png")
        #expect(pngStatus == 413 && String(decoding: pngSaid, as: UTF8.self).contains("larger than a PNG"))
        #expect(try HTTP.request(port: dev.port, "GET", "/export.svg").0 == 200)
    }

    @Test(HeadlessChromium.enabled)
    func firstPaintPluginsImagesTapsAndExport() throws {
        let (dev, browser, end) = try Self.start()
        defer { end() }
        // The page itself carries the drawing: no event is needed for a first paint.
        let (status, page) = try HTTP.request(port: dev.port, "GET", "/")
        let html = String(decoding: page, as: UTF8.self)
        #expect(status == 200)
        #expect(html.contains("<div id=\"view\" aria-hidden=\"true\"><svg") && html.contains("Good evening"))
        #expect(html.contains("data:image/png;base64"), "images are inlined as render --format html does")

        try browser.open("http://127.0.0.1:\(dev.port)/", blocking: ["*/events"])
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelectorAll('#boxes .box').length")).flatMap(Int.init) ?? 0 > 5
            })
        #expect(try browser.evaluate("document.getElementById('view').innerHTML.includes('Good evening')") == "true")
        #expect(try browser.evaluate("document.getElementById('state').textContent") != "live", "no event stream")

        // With events: the plugin panel lists both plugins with their build and state.
        try browser.open("http://127.0.0.1:\(dev.port)/")
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("document.getElementById('state').textContent")) == "live" })
        let rows = try browser.evaluate(
            "[...document.querySelectorAll('#plugins tbody tr')].map(r => [...r.cells].map(c => c.textContent).slice(0, 5).join('|')).join('\\n')"
        )
        let lines = rows.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(rows)")
        #expect(lines.contains { $0.hasPrefix("libHubDemoC.so|com.hubhost.cdemo|1.0.0|") && $0.hasSuffix("|active") })
        #expect(
            lines.contains { $0.hasPrefix("libHubDemoSwift.so|com.hubhost.demo|1.0.0|") && $0.hasSuffix("|pinned") })
        #expect(lines.allSatisfy { $0.split(separator: "|")[3].count == 12 }, "a 12-digit build digest")

        // Images are drawn in the page.
        #expect(Int(try browser.evaluate("document.querySelectorAll('#view image').length")) ?? 0 > 0)

        // The header taps (it used to answer "has no child 0") and only it is highlighted.
        _ = try browser.evaluate("document.querySelector('#boxes .box[data-section=\"header\"]').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelectorAll('#boxes .box.tapped').length")) == "1"
                    && (try? browser.evaluate("document.querySelector('#boxes .box.tapped').dataset.section"))
                        == "header"
            }, "\(dev.log)")
        // The highlight comes with the rendered frame on the event stream, the log line with /tap's reply: either
        // may arrive first.
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('log').textContent.includes('header [0]: [')"))
                    == "true"
            }, "\(dev.log)")
        #expect(!(try browser.evaluate("document.getElementById('log').textContent")).contains("has no child"))

        // An overlay taps too.
        _ = try browser.evaluate("document.querySelector('#boxes .box[data-section=\"overlay\"]').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelector('#boxes .box.tapped')?.dataset.section")) == "overlay"
            }, "\(dev.log)")

        // Export: the PNG and the SVG of the current view.
        let (pngStatus, png) = try HTTP.request(port: dev.port, "GET", "/export.png")
        #expect(pngStatus == 200 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let (svgStatus, svg) = try HTTP.request(port: dev.port, "GET", "/export.svg")
        #expect(svgStatus == 200 && String(decoding: svg, as: UTF8.self).hasPrefix("<svg"))
        #expect(try browser.evaluate("document.getElementById('export-png').getAttribute('href')") == "/export.png")
    }

    /// The page as a designer uses it all day, from a session in Chromium: the panels stay beside the drawings at
    /// any zoom and with wide extra widths, in reach however far the view is scrolled; components are reachable
    /// from the keyboard and keep the focus through a tap's frame; the first frame is applied once; exports scale.
    @Test(HeadlessChromium.enabled)
    func panelsStayInReachAndComponentsTakeTheKeyboard() throws {
        let (dev, browser, end) = try Self.start(["--widths", "375,768"])
        defer { end() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        _ = try browser.send(
            "Emulation.setDeviceMetricsOverride",
            ["width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false], inPage: true)
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("document.getElementById('state').textContent")) == "live" })
        // Applied once: the stream's first frame is the one the page came with.
        let initialLines =
            "[...document.querySelectorAll('#log div')].filter(d => d.textContent.includes('#1 ')).length"
        #expect(try browser.evaluate(initialLines) == "1")

        // The panel is beside the drawings, inside the window, at 150% and with a 768-pt drawing beside the view.
        try browser.choose("zoom", "1.5")
        let aside = "document.querySelector('aside').getBoundingClientRect()"
        #expect(try browser.evaluate("\(aside).right <= window.innerWidth") == "true")
        let hit =
            "(() => { const r = \(aside); const e = document.elementFromPoint(r.left + 20, r.top + 10); return e && e.closest('aside') !== null; })()"
        #expect(try browser.evaluate(hit) == "true", "nothing drawn over the panel")

        // Scrolled far down, the toolbar and the panel are still on screen.
        _ = try browser.evaluate("window.scrollTo(0, 100000)")
        #expect(try browser.evaluate("document.getElementById('zoom').getBoundingClientRect().top >= 0") == "true")
        #expect(try browser.evaluate("\(aside).top >= 0 && \(aside).top < window.innerHeight") == "true")
        _ = try browser.evaluate("window.scrollTo(0, 0)")

        // Keyboard: a component takes focus and Enter taps it.
        try browser.choose("zoom", "1")
        _ = try browser.evaluate("document.querySelector('#boxes .box[data-section=\"body\"]').focus()")
        #expect(try browser.evaluate("document.activeElement.getAttribute('role')") == "button")
        _ = try browser.send(
            "Input.dispatchKeyEvent", ["type": "keyDown", "key": "Enter", "code": "Enter"], inPage: true)
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.querySelectorAll('#boxes .box.tapped').length")) == "1"
            }, "\(dev.log)")
        // The tap's frame redrew every box: the focus stays on the one tapped, so Enter taps it again.
        #expect(try browser.evaluate("document.activeElement.classList.contains('tapped')") == "true")

        // Exports are named after the view, and scale.
        let (status, png) = try HTTP.request(port: dev.port, "GET", "/export.png?scale=2")
        let (_, plain) = try HTTP.request(port: dev.port, "GET", "/export.png")
        #expect(status == 200 && png.count > plain.count)
        let width = { (data: Data) -> Int in
            data.count > 20 ? Int(data[16]) << 24 | Int(data[17]) << 16 | Int(data[18]) << 8 | Int(data[19]) : 0
        }
        #expect(width(png) == 2 * width(plain) && width(plain) > 0)
        #expect(try HTTP.request(port: dev.port, "GET", "/export.png?scale=0").0 == 400)
    }

    @Test(HeadlessChromium.enabled)
    func severalWidthsAndInspectorEdits() throws {
        let (dev, browser, end) = try Self.start(["--widths", "375,320"])
        defer { end() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        let extraWidths = "[...document.querySelectorAll('#extras figure')].map(f => f.dataset.width).join()"
        #expect(TestSupport.waitUntil { (try? browser.evaluate(extraWidths)) == "320" }, "\(dev.log)")
        #expect(try browser.evaluate("document.querySelector('#extras figure svg') !== null") == "true")

        // The page's control changes the widths.
        try browser.choose("widths", "768,414")
        #expect(TestSupport.waitUntil { (try? browser.evaluate(extraWidths)) == "768,414" }, "\(dev.log)")
        // And the interactive view's width: it is laid out again at 414 points, the extra widths stay.
        #expect(try browser.evaluate("document.getElementById('width').value") == "375")
        try browser.choose("width", "414")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('stage').style.width")) == "414px"
            },
            "\(dev.log)")
        #expect(try dev.frame().width == 414)
        #expect(try browser.evaluate(extraWidths) == "768,414")

        // Inspect the banner (body[0]), then edit its title in the page: the view re-renders with it.
        _ = try browser.evaluate("document.getElementById('inspect-mode').click()")
        _ = try browser.evaluate(
            "document.querySelector('#boxes .box[data-section=\"body\"][data-index-path=\"0\"]').click()")
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('inspected').textContent.includes('cdemo:banner')"))
                    == "true"
            })
        #expect(
            try browser.evaluate("document.getElementById('inspected').textContent.includes('com.hubhost.cdemo')")
                == "true")
        #expect(try browser.evaluate("document.getElementById('edit-title').value") == "Your weekly mix is ready")
        _ = try browser.evaluate(
            "(() => { document.getElementById('edit-title').value = 'Edited in the page'; document.getElementById('edit-custom').value = '{\"color\": \"#FF0000\"}'; document.getElementById('apply-edit').click(); })()"
        )
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('view').innerHTML.includes('Edited in the page')"))
                    == "true"
            }, "\(dev.log)")
        #expect(try browser.evaluate("document.getElementById('view').innerHTML.includes('#ff0000')") == "true")
        #expect(
            try browser.evaluate("document.querySelector('#extras figure').innerHTML.includes('Edited in the page')")
                == "true")
        // The file is untouched.
        let file = try String(contentsOf: Self.examples.appendingPathComponent("home.json"), encoding: .utf8)
        #expect(!file.contains("Edited in the page"))
    }

    /// The zoom and the component inspected are in the page's address: a link (or a reload) shows them again.
    @Test(HeadlessChromium.enabled)
    func theZoomAndTheInspectedComponentAreInTheLink() throws {
        let (dev, browser, end) = try Self.start()
        defer { end() }
        let inspectedText = "document.getElementById('inspected').textContent"
        try browser.open("http://127.0.0.1:\(dev.port)/#zoom=1.5&inspect=body:0")
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("\(inspectedText).includes('cdemo:banner')")) == "true" },
            "\((try? browser.evaluate(inspectedText)) ?? "")")
        #expect(try browser.evaluate("document.getElementById('zoom').value") == "1.5")
        #expect(try browser.evaluate("document.getElementById('inspect-mode').checked") == "true")
        #expect(try browser.evaluate("document.getElementById('canvas').style.transform") == "scale(1.5)")

        // Inspecting another component and zooming out are written into the address as they happen.
        _ = try browser.evaluate(
            "document.querySelector('#boxes .box[data-section=\"body\"][data-index-path=\"1\"]').click()")
        #expect(TestSupport.waitUntil { (try? browser.evaluate("\(inspectedText).includes('demo:row')")) == "true" })
        try browser.choose("zoom", "0.75")
        let address = try browser.evaluate("location.hash")
        #expect(address == "#zoom=0.75&inspect=body%3A1", "\(address)")

        // The same address in a new page shows the same.
        try browser.open("http://127.0.0.1:\(dev.port)/\(address)")
        #expect(TestSupport.waitUntil { (try? browser.evaluate("\(inspectedText).includes('demo:row')")) == "true" })
        #expect(try browser.evaluate("document.getElementById('zoom').value") == "0.75")
        // Leaving inspection and the zoom clears the address.
        _ = try browser.evaluate("document.getElementById('inspect-mode').click()")
        try browser.choose("zoom", "1")
        #expect(try browser.evaluate("location.hash") == "")
    }
}
