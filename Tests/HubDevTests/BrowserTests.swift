import Foundation
import Testing

/// The preview page in a real headless browser (Debian's Chromium): it shows the components, a click taps one,
/// and a plugin reload updates the page through server-sent events without reloading it.
@Suite("Preview in headless Chromium", .serialized)
struct BrowserTests {
    @Test(HeadlessChromium.enabled)
    func thePageShowsTheComponentsAndUpdatesAfterAReloadWithoutARefresh() throws {
        let root = TestSupport.temporaryDirectory("browser")
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let view = root.appendingPathComponent("view.json")
        try """
        {"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "First"}},
                  {"id": "b", "component": {"id": "swatch:label"}, "text": {"title": "Label"}},
                  {"id": "c", "component": {"id": "missing:thing", "category": "card"}, "text": {"title": "Fallback"}}]}
        """.write(to: view, atomically: true, encoding: .utf8)
        let swatch = plugins.appendingPathComponent("libswatch.so")
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0xFF0000FFu", "PLUGIN_VERSION=\"1\""])
        let dev = try DevProcess(view: view, plugins: plugins, cache: root.appendingPathComponent("cache"))
        defer { dev.stop() }

        let browser = try HeadlessChromium(
            executable: try #require(HeadlessChromium.executable, "chromium is required on CI"))
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(dev.port)/")
        let viewHTML = "document.getElementById('view').innerHTML"

        // The components are on the page, one clickable box each.
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("document.querySelectorAll('#boxes .box').length")) == "3" })
        #expect(
            try browser.evaluate("[...document.querySelectorAll('#boxes .box')].map(b => b.dataset.componentId).join()")
                == "a,b,c")
        #expect(
            try browser.evaluate("\(viewHTML).includes('#ff0000') && \(viewHTML).includes('First taps:0')") == "true")

        // A marker on the window: if the page were reloaded it would be gone.
        _ = try browser.evaluate("window.notReloaded = 'yes'")

        // A click on the first component taps it; the next render shows its counter and highlight.
        _ = try browser.evaluate("document.querySelector('#boxes .box[data-index-path=\"0\"]').click()")
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("\(viewHTML).includes('First taps:1')")) == "true" },
            "\(dev.log)")
        #expect(try browser.evaluate("document.querySelector('#boxes .box.tapped')?.dataset.indexPath ?? ''") == "0")

        // Rebuild the plugin: the page updates by itself.
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["SWATCH_COLOR=0x00FF00FFu", "PLUGIN_VERSION=\"2\""])
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("\(viewHTML).includes('#00ff00')")) == "true" }, "\(dev.log)"
        )
        #expect(try browser.evaluate("\(viewHTML).includes('First taps:1')") == "true", "UI state survived the swap")
        #expect(try browser.evaluate("window.notReloaded") == "yes", "updated without a refresh")

        // A crashing build shows as an overlay; the page keeps the last good render.
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["CRASH_IN_INIT", "PLUGIN_VERSION=\"3\""])
        #expect(
            TestSupport.waitUntil {
                (try? browser.evaluate("document.getElementById('overlay').textContent"))?.contains(
                    "crashed with SIGSEGV in init") == true
            })
        #expect(try browser.evaluate("document.getElementById('overlay').className") == "shown")
        #expect(try browser.evaluate("\(viewHTML).includes('#00ff00')") == "true")
        #expect(try browser.evaluate("window.notReloaded") == "yes")
    }
}
