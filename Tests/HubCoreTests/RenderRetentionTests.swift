import Testing

@testable import HubCore

/// What the render path keeps between renders must not grow with the number of renders: re-rendering the same
/// view (new but equal models, as after an edit of the view file) or swapping the plugin that serves it (a hot
/// reload) any number of times keeps one pool entry per wrapper. These count entries; they do not time anything.
@Suite struct RenderRetentionTests {
    let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
    let viewport = Size(width: 320, height: 600)
    let log = CallLog()

    init() throws {
        let log = self.log
        try registry.register(
            TestFactory(["rec": { RecordingComponent(log: log) }]), forNamespace: "t",
            owner: Owner(id: "test"))
    }

    /// A fresh view model each time (what decoding the view file again gives): equal models, new objects.
    func freshView(_ count: Int) -> ViewModel {
        view((0..<count).map { model("m\($0)", "t:rec", index: $0, title: "Item \($0)") })
    }

    struct Counts: Equatable {
        var wrappers, idleEntries, idleHints, uiStates, sizing: Int
    }

    func counts(_ pipeline: RenderPipeline) -> Counts {
        Counts(
            wrappers: pipeline.pool.wrapperCount, idleEntries: pipeline.pool.idleEntryCount,
            idleHints: pipeline.pool.idleHintCount, uiStates: pipeline.pool.uiStates.count,
            sizing: pipeline.sizing.count)
    }

    @Test func reRenderingTheSameViewKeepsThePoolsEntriesFlat() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(freshView(50), viewport: viewport)
        let first = counts(pipeline)
        #expect(first.wrappers == 50)
        for _ in 0..<20 { pipeline.render(freshView(50), viewport: viewport) }
        // Every wrapper is in use again: the idle lists and the same-model hints are empty, not 20 × 50 entries.
        #expect(counts(pipeline) == first)
        #expect(pipeline.pool.idleEntryCount == 0)
        #expect(pipeline.pool.idleHintCount == 0)
    }

    /// A one-shot render hands each drawn instance to the next model of its component, through the pool once
    /// more components are in play than it holds in hand: either way one instance per component draws every model
    /// of it, in order, and all are idle in the pool afterwards (so the next one-shot render makes none).
    @Test func aOneShotRenderDrawsWithOneInstancePerComponentAndLeavesThemIdle() throws {
        let names = (0..<12).map { "k\($0)" }
        let log = self.log
        try registry.register(
            TestFactory(Dictionary(uniqueKeysWithValues: names.map { ($0, { RecordingComponent(log: log) }) })),
            forNamespace: "many", owner: Owner(id: "test.many"))
        // Three components taking turns (each finds its instance in hand), then all twelve (more than the hand).
        let kinds = (0..<30).map { names[$0 % 3] } + (0..<48).map { names[$0 % 12] }
        let body = kinds.enumerated().map { model("m\($0.offset)", "many:\($0.element)", index: $0.offset) }
        let pipeline = RenderPipeline(registry: registry)
        pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: false)
        for round in 0..<2 {
            _ = log.take()
            pipeline.render(view(body), viewport: viewport)
            let configured = log.take().filter { $0.hasPrefix("configure#") }.map {
                (instance: $0.dropFirst(10).prefix { $0 != ":" }, model: $0.split(separator: ":").last!)
            }
            #expect(configured.map { String($0.model) } == body.map(\.identifier), "round \(round)")
            var instanceByKind: [String: Substring] = [:]
            for (entry, kind) in zip(configured, kinds) {
                #expect(instanceByKind[kind, default: entry.instance] == entry.instance, "\(kind) in round \(round)")
                instanceByKind[kind] = entry.instance
            }
            #expect(Set(instanceByKind.values).count == 12)
            #expect(pipeline.pool.wrapperCount == 12)
            #expect(pipeline.pool.idleCount == 12)
            #expect(pipeline.pool.idleEntryCount == 12)
        }
    }

    @Test func idleListsHoldExactlyTheIdleWrappers() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(freshView(30), viewport: viewport)
        // Alternate a long and a short view: the short one leaves 20 wrappers idle, the long one takes them back.
        for round in 0..<20 {
            pipeline.render(freshView(round % 2 == 0 ? 10 : 30), viewport: viewport)
            #expect(pipeline.pool.idleEntryCount == pipeline.pool.idleCount)
            #expect(pipeline.pool.idleHintCount <= pipeline.pool.idleCount)
            #expect(pipeline.pool.wrapperCount == 30)
        }
    }

    @Test func anEngineAndARenderPerReloadKeepEveryTableFlat() throws {
        // What `hubhost dev` does on a reload: the namespace goes to a new owner, a new event engine renders the
        // view on the same pipeline with every component live.
        let pipeline = RenderPipeline(registry: registry)
        let clock = ManualClock()
        var owner = Owner(id: "test")
        func renderThroughAnEngine() {
            let engine = EventEngine(
                pipeline: pipeline, viewModel: freshView(40), viewport: viewport, clock: clock,
                actions: ActionRegistry())
            engine.bufferFraction = 10_000
            engine.load()
        }
        renderThroughAnEngine()
        let observers = registry.unregisterObserverCount
        let first = counts(pipeline)
        let log = self.log
        for version in 1...15 {
            registry.unregister(namespace: "t")
            owner = Owner(id: "test#\(version)")
            try registry.register(
                TestFactory(["rec": { RecordingComponent(log: log) }]), forNamespace: "t", owner: owner)
            renderThroughAnEngine()
            renderThroughAnEngine()  // and an edit of the view file
            #expect(counts(pipeline) == first)
            #expect(pipeline.liveWrappers.allSatisfy { $0.source == .factory(namespace: "t", owner: owner) })
        }
        // Neither engines nor renders add observers to the registry.
        #expect(registry.unregisterObserverCount == observers)
        #expect(pipeline.pool.didPurge.isEmpty)
    }
}
