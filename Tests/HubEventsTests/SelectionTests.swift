import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// Selection states through the selection-state extension of a real C plugin, with Hub's rules and delays.
@Suite(.pluginCode) struct SelectionTests {
    @Test func highlightShowsAfterTheDelayThenTapSelectsOpensAndDeselects() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(
            """
            {"id": "v", "body": [{"id": "p0", "component": {"id": "b:probe"}, "target": {"uri": "hub:album/1"}}]}
            """)
        plugin.clear()
        func selection() -> [String] { plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } }

        engine.apply(.highlight(.indexPath([0])))
        engine.apply(.advance(seconds: 0.1))
        #expect(selection() == [], "not before 0.2 s")
        engine.apply(.advance(seconds: 0.15))
        #expect(selection() == ["selection highlighted"])
        engine.apply(.tap(.indexPath([0])))
        #expect(selection() == ["selection highlighted", "selection selected"])
        #expect(fixture.host.services.openedURIs == ["hub:album/1"])
        #expect(engine.trace!.messages(.open) == ["hub:album/1: opened"])
        engine.apply(.advance(seconds: 0.19))
        #expect(selection().count == 2)
        engine.apply(.advance(seconds: 0.02))
        #expect(selection() == ["selection highlighted", "selection selected", "selection none"])
    }

    @Test func aQuickTapSendsSelectedOnlyAndTheSameStateNeverTwice() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(2))
        plugin.clear()
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.advance(seconds: 1))
        // A touch that ends before the delay never shows the highlight.
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } == ["selection selected", "selection none"])

        // A touch cancelled before the delay changes nothing, so the component hears nothing.
        plugin.clear()
        engine.apply(.highlight(.indexPath([1])))
        engine.apply(.unhighlight(.indexPath([1])))
        engine.apply(.advance(seconds: 1))
        #expect(plugin.lines(for: "p1").filter { $0.hasPrefix("selection") } == [])

        // Cancelled after it showed: back to none, once.
        engine.apply(.highlight(.indexPath([1])))
        engine.apply(.advance(seconds: 0.3))
        engine.apply(.unhighlight(.indexPath([1])))
        engine.apply(.unhighlight(.indexPath([1])))
        engine.apply(.advance(seconds: 1))
        #expect(
            plugin.lines(for: "p1").filter { $0.hasPrefix("selection") } == ["selection highlighted", "selection none"])
    }

    @Test func oneGestureAtATime() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(2))
        plugin.clear()
        engine.apply(.highlight(.indexPath([0])))
        engine.apply(.highlight(.indexPath([1])))
        engine.apply(.tap(.indexPath([1])))
        engine.apply(.advance(seconds: 0.3))
        #expect(plugin.lines(for: "p1").filter { $0.hasPrefix("selection") } == [])
        #expect(plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } == ["selection highlighted"])
        engine.apply(.tap(.indexPath([0])))
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } == [
                "selection highlighted", "selection selected",
            ])
        // Once the gesture ended another may begin.
        engine.apply(.tap(.indexPath([1])))
        #expect(plugin.lines(for: "p1").filter { $0.hasPrefix("selection") } == ["selection selected"])
    }

    @Test func scrollingResetsAHighlight() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(20))
        plugin.clear()
        engine.apply(.highlight(.indexPath([0])))
        engine.apply(.advance(seconds: 0.3))
        engine.apply(.scroll(y: 10))
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } == ["selection highlighted", "selection none"])
        // A highlight still pending is dropped: the component hears nothing, the trace says so.
        engine.apply(.highlight(.indexPath([1])))
        engine.apply(.scroll(y: 20))
        engine.apply(.advance(seconds: 1))
        #expect(plugin.lines(for: "p1").filter { $0.hasPrefix("selection") } == [])
        #expect(
            engine.trace!.messages(.state).contains("[p1] highlight cancelled (a scroll or resize ended the touch)"))
    }

    /// The deselect of a tapped component (0.2 s after the tap) is that component's: a touch held on another
    /// meanwhile still shows its highlight (it was cancelled as if that touch had ended).
    @Test func anotherComponentsDeselectLeavesAHeldTouchAlone() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(20))
        plugin.clear()
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.highlight(.indexPath([4])))
        engine.apply(.advance(seconds: 0.3))
        #expect(plugin.lines(for: "p4").filter { $0.hasPrefix("selection") } == ["selection highlighted"])
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("selection") } == ["selection selected", "selection none"])
    }

    @Test func hitTestingFindsOverlaysAboveTheBodyAndChildrenInsideParents() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        _ = try fixture.load(namespace: "b")
        let engine = try fixture.engine(
            """
            {"id": "v",
             "body": [
               {"id": "parent", "component": {"id": "b:probe"}, "custom": {"height": 200},
                "children": [{"id": "c0", "component": {"id": "b:plain"}, "custom": {"height": 50}},
                             {"id": "c1", "component": {"id": "b:plain"}, "custom": {"height": 50}}]},
               {"id": "below", "component": {"id": "b:probe"}},
               {"id": "filler1", "component": {"id": "b:plain"}},
               {"id": "filler2", "component": {"id": "b:plain"}}],
             "overlays": [{"id": "overlay", "component": {"id": "b:plain"}, "custom": {"height": 40}}]}
            """, viewport: Size(width: 375, height: 400))
        // The probe draws child i at x = 100·i, y 0, at its preferred size (375 wide: the parent's width), so
        // child 1 lies over child 0 from x 100 on. The overlay is centred: (0, 180, 375, 40).
        #expect(engine.hitTest(Point(x: 50, y: 20))?.model?.identifier == "c0")
        #expect(engine.hitTest(Point(x: 150, y: 20))?.model?.identifier == "c1", "child 1 is drawn on top of child 0")
        #expect(engine.hitTest(Point(x: 50, y: 120))?.model?.identifier == "parent")
        #expect(engine.hitTest(Point(x: 50, y: 250))?.model?.identifier == "below")
        #expect(engine.hitTest(Point(x: 10, y: 200))?.model?.identifier == "overlay", "overlays are above the body")
        #expect(engine.hitTest(Point(x: 10, y: 399))?.model?.identifier == "filler1")
        engine.apply(.scroll(y: 100))
        #expect(engine.hitTest(Point(x: 50, y: 120))?.model?.identifier == "below", "the body moves with the offset")
    }
}
