import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// In-process components that count what the host did to them (HubCore only: no plugin, so 100k is quick).
final class RowStats {
    var created = 0, loadView = 0, configure = 0, prepare = 0, destroyed = 0
}

final class CountingRow: Component {
    let stats: RowStats
    init(stats: RowStats) {
        self.stats = stats
        stats.created += 1
    }
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    func loadView() { stats.loadView += 1 }
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        Size(width: containerSize.width, height: 50)
    }
    func prepareViewForReuse() { stats.prepare += 1 }
    func configureView(with model: ComponentModel, containerSize: Size) { stats.configure += 1 }
    func drawView(into view: ViewBuilder, size: Size) {}
    func destroy() { stats.destroyed += 1 }
}

final class RowFactory: ComponentFactory {
    let stats: RowStats
    init(stats: RowStats) { self.stats = stats }
    func createComponent(forName name: String) -> Component? { name == "row" ? CountingRow(stats: stats) : nil }
    var componentNames: [String] { ["row"] }
}

@Suite(.pluginCode) struct ScrollTests {
    @Test func scrollingA100kViewKeepsLiveInstancesBoundedAndReusesThem() throws {
        let stats = RowStats()
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try registry.register(RowFactory(stats: stats), forNamespace: "t", owner: .host)
        let count = 100_000
        let body = (0..<count).map {
            ComponentModel(
                identifier: "r\($0)", index: $0, componentIdentifier: ComponentIdentifier(namespace: "t", name: "row"))
        }
        let viewport = Size(width: 375, height: 667)
        let engine = EventEngine(
            pipeline: RenderPipeline(registry: registry, layoutManager: DefaultLayoutManager(margin: 0)),
            viewModel: ViewModel(identifier: "long", body: body), viewport: viewport,
            clock: ManualClock(), actions: ActionRegistry())
        engine.load()
        let contentHeight = try #require(engine.pipeline.layout?.contentSize.height)
        #expect(contentHeight == Double(count) * 50)
        // The viewport plus half a viewport above and below, in 50-point rows.
        let liveBound = Int(((viewport.height * 2) / 50).rounded(.up)) + 2
        var maxInstances = 0
        var y = 0.0
        while y < contentHeight {
            y += viewport.height / 2
            engine.scroll(to: Point(x: 0, y: y))
            #expect(engine.pipeline.bodyWrappers.count <= liveBound)
            maxInstances = max(maxInstances, engine.pipeline.pool.wrapperCount)
        }
        #expect(engine.contentOffset.y == contentHeight - viewport.height, "scrolled to the very end")
        #expect(engine.displayedWrappers.contains { $0.model?.identifier == "r\(count - 1)" })
        #expect(engine.peakLiveBodyCount <= liveBound)
        #expect(maxInstances <= liveBound + 2, "instances are bounded by the viewport, not by the view's length")
        // Every model was configured once on the way down, by a handful of reused instances.
        let displayStats = (created: stats.created - engine.pipeline.sizing.count, configure: stats.configure)
        #expect(displayStats.created == engine.pipeline.pool.wrapperCount)
        #expect(displayStats.configure >= count)
        #expect(stats.prepare >= count - maxInstances, "every reuse prepared the instance first")
        #expect(stats.loadView == engine.pipeline.pool.wrapperCount, "loadView once per instance")
    }

    @Test func uiStateSurvivesScrollingAwayAndBack() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let plugin = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(40), viewport: Size(width: 375, height: 300))
        // The probe's UI state counts its selections.
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.advance(seconds: 1))
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.advance(seconds: 1))
        plugin.clear()
        for step in 1...37 { engine.apply(.scroll(y: Double(step) * 100)) }
        #expect(plugin.lines(for: "p0").contains("currentUIState 2"), "saved when it scrolled out")
        // Once: reusing the instance for another model does not read, from the pool, what it read on the way there.
        #expect(
            plugin.lines(for: "p0").filter { $0.hasPrefix("currentUIState") }.count == 1, "\(plugin.lines(for: "p0"))")
        #expect(engine.pipeline.pool.uiStates.restoreState(forModelIdentifier: "p0") == "2")
        #expect(engine.pipeline.pool.wrapperCount < 20)
        for step in (0...36).reversed() { engine.apply(.scroll(y: Double(step) * 100)) }
        #expect(plugin.lines(for: "p0").contains("restoreUIState 2"), "restored into whichever instance shows p0 again")
        // The instance really has the state: one more selection makes 3.
        plugin.clear()
        engine.apply(.tap(.indexPath([0])))
        engine.apply(.advance(seconds: 1))
        engine.apply(.scroll(y: 1000))
        #expect(plugin.lines(for: "p0").contains("currentUIState 3"))
    }
}
