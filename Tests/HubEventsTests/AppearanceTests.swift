import Foundation
import HubHost
import HubTestKit
import Testing

@testable import HubCore

/// View observer, content offset and children callbacks in Hub's order, through a real C plugin.
@Suite(.pluginCode) struct AppearanceTests {
    @Test func loadAppearsOnceAndResizeIsCalledOnlyWhenTheSizeChanges() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(1))
        // The render pipeline loads the view and sets the frame before configuring; then the view appears.
        #expect(
            plugin.lines == [
                "[-] loadView", "[-] resize 375x100", "[p0] configure 375x667", "[p0] appear", "[p0] offset 0",
            ])

        plugin.clear()
        engine.apply(.resize(Size(width: 375, height: 500)))
        // Hub's reload saves the UI state of visible cells first; the frame size is the same, so no resize; the
        // container changed, so the component is configured again (Hub's rotation).
        #expect(plugin.lines == ["[p0] currentUIState 0", "[p0] configure 375x500"])
        plugin.clear()
        engine.apply(.resize(Size(width: 320, height: 500)))
        #expect(plugin.lines == ["[p0] currentUIState 0", "[p0] resize 320x100", "[p0] configure 320x500"])
        plugin.clear()
        engine.apply(.resize(Size(width: 320, height: 500)))
        #expect(plugin.lines == [], "an unchanged size does nothing")

        // The controller appearing again re-runs will-appear; the offset is unchanged, so no offset call.
        engine.viewWillAppear()
        #expect(plugin.lines == ["[p0] appear"])
        #expect(engine.pipeline.bodyWrappers[0]?.appearanceCount == 2)
    }

    /// A component scrolled away while selected is told None as it leaves, so a tap when it is back sends Selected
    /// once after None, never Selected twice (the header: "The same state is never sent twice").
    @Test func aSelectedComponentThatLeavesIsToldNone() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(
            probeList(30, extra: { $0 == 0 ? #", "target": {"uri": "hub:p0"}"# : "" }),
            viewport: Size(width: 375, height: 300))
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.scroll(y: 2000))  // p0's instance goes back to the pool before the deselect delay ends
        engine.apply(.advance(seconds: 0.3))
        engine.apply(.scroll(y: 0))
        engine.apply(.advance(seconds: 0.3))
        engine.apply(.tap(.indexPath([0])))
        let states = plugin.lines.filter { $0.contains("selection") }.map { $0.split(separator: " ").last! }
        #expect(!zip(states, states.dropFirst()).contains { $0 == $1 }, "a state sent twice in a row: \(states)")
        #expect(states.last == "selected", "\(states)")
    }

    /// A resize re-renders every visible component: each keeps its own instance (Hub reconfigures a visible cell
    /// in place), none is prepared for another model and re-created.
    @Test func aResizeKeepsEachVisibleComponentsInstance() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(30), viewport: Size(width: 375, height: 400))
        engine.apply(.scroll(y: 2600))
        let before = engine.displayedBody
        #expect(!before.isEmpty)
        plugin.clear()
        engine.apply(.resize(Size(width: 375, height: 700)))
        for (index, wrapper) in before {
            #expect(engine.pipeline.bodyWrappers[index] === wrapper, "body[\(index)] got another instance")
        }
        // The taller viewport clamps the offset: every component still on screen is told, as of a scroll.
        #expect(engine.contentOffset.y < 2600)
        for index in before.keys where engine.displayedBody[index] != nil {
            #expect(plugin.lines(for: "p\(index)").contains { $0.hasPrefix("offset") }, "p\(index) was not told")
        }
    }

    @Test func contentOffsetObserversFollowHubsRules() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(20), viewport: Size(width: 375, height: 300))
        func offsets(_ id: String) -> [String] {
            plugin.lines(for: id).filter { $0.hasPrefix("offset") || $0 == "appear" }
        }
        // First appearance: every displayed observer learns the offset.
        #expect(offsets("p0") == ["appear", "offset 0"])
        #expect(offsets("p2") == ["appear", "offset 0"])
        #expect(offsets("p3") == [], "p3 is live (buffer) but not on screen")

        plugin.clear()
        engine.apply(.scroll(y: 50))
        #expect(offsets("p0") == ["offset 50"], "every scroll event reaches the displayed observers")
        #expect(offsets("p3") == ["appear", "offset 50"], "p3 scrolled into view")

        // The view appears again after a user scroll: the offset differs from the last programmatic one (0).
        plugin.clear()
        engine.viewWillAppear()
        #expect(offsets("p0") == ["appear", "offset 50"])

        // After a programmatic offset, appearing again without a change does not notify.
        engine.scroll(to: Point(x: 0, y: 40), programmatic: true)
        plugin.clear()
        engine.viewWillAppear()
        #expect(offsets("p0") == ["appear"])
        #expect(offsets("p3") == ["appear"])
    }

    @Test func childrenAppearAndDisappearWithTheirParentAndCanBeSelected() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let fillers = (1...9).map { ",{\"id\": \"f\($0)\", \"component\": {\"id\": \"b:plain\"}}" }.joined()
        let engine = try fixture.engine(
            """
            {"id": "v", "body": [
              {"id": "parent", "component": {"id": "b:probe"}, "custom": {"height": 200},
               "children": [{"id": "c0", "component": {"id": "b:probe"}, "custom": {"height": 50}},
                            {"id": "c1", "component": {"id": "b:probe"}, "custom": {"height": 50}}]}\(fillers)]}
            """, viewport: Size(width: 375, height: 300))
        let log = plugin.lines
        let parentAppears = try #require(log.firstIndex(of: "[parent] appear"))
        let c0Appears = try #require(log.firstIndex(of: "[c0] appear"))
        let c1Appears = try #require(log.firstIndex(of: "[c1] appear"))
        #expect(parentAppears < c0Appears && c0Appears < c1Appears, "children appear inside their parent's will-appear")
        #expect(log.contains("[c0] configure 375x200"), "a child's container is its parent's size")
        let shown = Set(engine.displayedWrappers.compactMap { $0.model?.identifier })
        #expect(shown.isSuperset(of: ["parent", "c0", "c1"]))

        engine.apply(.scroll(y: 700))
        let displayed = Set(engine.displayedWrappers.compactMap { $0.model?.identifier })
        #expect(displayed.isDisjoint(with: Set(["parent", "c0", "c1"])))
        #expect(
            engine.trace!.messages(.disappear).prefix(3) == [
                "[parent] did disappear", "[c0] did disappear", "[c1] did disappear",
            ])

        plugin.clear()
        engine.apply(.scroll(y: 0))
        #expect(plugin.lines(for: "c0").filter { $0 == "appear" }.count == 1)
        #expect(plugin.lines(for: "c1").filter { $0 == "appear" }.count == 1)

        plugin.clear()
        engine.apply(.tap(.indexPath([0, 1])))
        #expect(plugin.lines(for: "c1").filter { $0.hasPrefix("selection") } == ["selection selected"])
        #expect(plugin.lines(for: "parent").filter { $0.hasPrefix("selection") } == [])
        engine.apply(.tap(.indexPath([0, 5])))
        #expect(engine.problems.last?.message.contains("has no child 5") == true)
    }
}
