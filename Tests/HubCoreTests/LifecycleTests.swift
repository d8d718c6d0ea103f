import Testing

@testable import HubCore

@Suite struct LifecycleTests {
    let log = CallLog()
    let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
    let viewport = Size(width: 320, height: 600)

    init() throws {
        let log = self.log
        try registry.register(
            TestFactory(["rec": { RecordingComponent(log: log) }]), forNamespace: "t",
            owner: Owner(id: "test"))
    }

    /// The calls live instances got (sizing instances only ever answer traits and sizes).
    @Test func loadViewOnceConfigurePerModelPrepareBeforeAnotherModel() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([model("a", "t:rec", title: "A")]), viewport: viewport)
        // Instance #0 is the sizing instance; #1 the displayed one.
        #expect(log.take() == ["load#1", "configure#1:a"])

        // The same model again: not reconfigured.
        pipeline.render(view([model("a", "t:rec", title: "A")]), viewport: viewport)
        #expect(log.take() == [])

        // Another model: prepare first, then configure; no second loadView.
        pipeline.render(view([model("b", "t:rec", title: "B")]), viewport: viewport)
        #expect(log.take() == ["prepare#1", "configure#1:b"])

        // An equal model with a changed title is a different model.
        pipeline.render(view([model("b", "t:rec", title: "B2")]), viewport: viewport)
        #expect(log.take() == ["prepare#1", "configure#1:b"])
    }

    @Test func sizingInstancesNeverLoadAViewAndAreCachedPerIdentifier() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view((0..<3).map { model("m\($0)", "t:rec", index: $0) }), viewport: viewport)
        #expect(!log.entries.contains("load#0"))
        #expect(log.created == 4)  // one sizing instance + three displayed
        #expect(pipeline.sizing.count == 1)
        #expect(log.entries.filter { $0.hasPrefix("load#") } == ["load#1", "load#2", "load#3"])
    }

    @Test func uiStateIsSavedWhenLeavingAModelAndRestoredWhenItComesBack() throws {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        let component = try #require(pipeline.bodyWrappers[0]?.component as? RecordingComponent)
        // No state is saved at the first configure.
        #expect(pipeline.pool.uiStates.count == 0)
        component.uiState = "Groovy"
        _ = log.take()

        pipeline.render(view([model("b", "t:rec")]), viewport: viewport)
        #expect(pipeline.pool.uiStates.restoreState(forModelIdentifier: "a") == "Groovy")
        #expect(log.take() == ["prepare#1", "configure#1:b"])
        #expect(component.uiState == nil)

        component.uiState = "Other"
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        #expect(log.take() == ["prepare#1", "configure#1:a", "restore#1:Groovy"])
        #expect(component.uiState == "Groovy")
        #expect(pipeline.pool.uiStates.restoreState(forModelIdentifier: "b") == "Other")
    }

    @Test func aNilStateRemovesTheSavedOne() throws {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        let component = try #require(pipeline.bodyWrappers[0]?.component as? RecordingComponent)
        component.uiState = "x"
        pipeline.render(view([model("b", "t:rec")]), viewport: viewport)
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        component.uiState = nil
        pipeline.render(view([model("b", "t:rec")]), viewport: viewport)
        #expect(pipeline.pool.uiStates.restoreState(forModelIdentifier: "a") == nil)
    }

    @Test func poolReusesIdleWrappersAndCreatesMoreForConcurrentModels() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([model("a", "t:rec", index: 0), model("b", "t:rec", index: 1)]), viewport: viewport)
        #expect(pipeline.pool.wrapperCount == 2)
        // Three at once: one more wrapper; the two existing keep their models (no reconfigure).
        _ = log.take()
        pipeline.render(
            view([model("a", "t:rec", index: 0), model("b", "t:rec", index: 1), model("c", "t:rec", index: 2)]),
            viewport: viewport)
        #expect(pipeline.pool.wrapperCount == 3)
        #expect(log.take() == ["load#3", "configure#3:c"])
        // Back to one: two go idle.
        pipeline.render(view([model("c", "t:rec")]), viewport: viewport)
        #expect(pipeline.pool.idleCount == 2)
        #expect(log.take() == [])
    }

    /// A pool takes back only its own live wrappers: another pool's, or one it destroyed, is left alone (the
    /// check is by the wrapper's pool identity and state, without looking it up).
    @Test func poolsTakeBackOnlyTheirOwnLiveWrappers() {
        let first = RenderPipeline(registry: registry)
        let second = RenderPipeline(registry: registry)
        first.render(view([model("a", "t:rec")]), viewport: viewport)
        let wrapper = first.bodyWrappers[0]!
        second.pool.enqueue(wrapper)
        #expect(!wrapper.isInPool && second.pool.idleCount == 0 && second.pool.idleEntryCount == 0)

        first.pool.enqueue(wrapper)
        #expect(wrapper.isInPool && first.pool.idleCount == 1)
        first.pool.enqueue(wrapper)  // already idle: no second entry
        #expect(first.pool.idleEntryCount == 1)

        first.tearDown()
        #expect(wrapper.isDestroyed)
        first.pool.enqueue(wrapper)
        #expect(!wrapper.isInPool && first.pool.idleEntryCount == 0 && first.pool.wrapperCount == 0)
    }

    /// A wrapper the pool takes back forgets its delegate and its parent, and one handed out again as a root has
    /// neither (the pool skips clearing them while they were never set).
    @Test func reusedWrappersKeepNoParentOrDelegate() {
        let pipeline = RenderPipeline(registry: registry)
        let delegate = SilentWrapperDelegate()
        pipeline.wrapperDelegate = delegate
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        let parent = pipeline.bodyWrappers[0]!
        #expect(parent.delegate === delegate)

        let child = pipeline.pool.wrapper(for: model("c", "t:rec"), parent: parent)
        child.delegate = delegate
        #expect(child.parent === parent)
        pipeline.pool.enqueue(child)
        #expect(child.parent == nil && child.delegate == nil)
        let again = pipeline.pool.wrapper(for: model("d", "t:rec"), parent: nil)
        #expect(again === child && again.parent == nil && again.delegate == nil)

        // Handed out under a parent again, then back: the parent is set and cleared once more.
        pipeline.pool.enqueue(again)
        let underParent = pipeline.pool.wrapper(for: model("e", "t:rec"), parent: parent)
        #expect(underParent === child && underParent.parent === parent)
        pipeline.pool.enqueue(underParent)
        #expect(underParent.parent == nil)

        pipeline.pool.enqueue(parent)
        #expect(parent.delegate == nil)
    }

    @Test func onlyVisibleComponentsAreLive() {
        let pipeline = RenderPipeline(registry: registry)
        let models = (0..<10).map { model("m\($0)", "t:rec", index: $0) }
        // Rows are 50 high, stacked with 15 between them: 15, 80, 145, …
        let tree = pipeline.render(
            view(models), viewport: viewport, visibleRect: Rect(x: 0, y: 0, width: 320, height: 100))
        #expect(tree.body.count == 10)
        #expect(tree.body.filter { $0.wrapperID != nil }.map(\.modelID) == ["m0", "m1"])
        #expect(tree.body[5].frame == Rect(x: 0, y: 340, width: 320, height: 50))
        #expect(tree.body[5].displayList.isEmpty)
        #expect(pipeline.bodyWrappers.count == 2)
    }

    @Test func headerIsNotReconfiguredForAnEqualModelAndOverlaysAreCentred() {
        let pipeline = RenderPipeline(registry: registry)
        let v = view(
            [model("a", "t:rec")], header: model("h", "t:rec", type: .header),
            overlays: [model("o", "t:rec", type: .overlay)])
        let tree = pipeline.render(v, viewport: viewport)
        #expect(tree.header?.frame == Rect(x: 0, y: 0, width: 320, height: 50))
        // Body below the header: 50 (sizing header height) + 15.
        #expect(tree.body[0].frame == Rect(x: 0, y: 65, width: 320, height: 50))
        #expect(tree.overlays[0].frame == Rect(x: 0, y: 275, width: 320, height: 50))
        _ = log.take()
        pipeline.render(v, viewport: viewport)
        #expect(log.take() == [])
    }

    @Test func viewObserverIsToldOnlyWhenTheSizeChanges() throws {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        let component = try #require(pipeline.bodyWrappers[0]?.component as? RecordingComponent)
        pipeline.render(view([model("a", "t:rec")]), viewport: viewport)
        #expect(component.resizes == [Size(width: 320, height: 50)])
        pipeline.render(view([model("a", "t:rec")]), viewport: Size(width: 200, height: 600))
        #expect(component.resizes == [Size(width: 320, height: 50), Size(width: 200, height: 50)])
    }
}

@Suite struct FallbackTests {
    let log = CallLog()
    let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
    let owner = Owner(id: "test")

    @Test func unknownNamespaceUnknownNameAndNilFromAFactoryFallBackByCategory() throws {
        let log = self.log
        try registry.register(
            TestFactory(["rec": { RecordingComponent(log: log) }, "broken": { nil }]),
            forNamespace: "t", owner: owner)
        let pipeline = RenderPipeline(registry: registry)
        let tree = pipeline.render(
            view([
                model("known", "t:rec", index: 0),
                model("ns", "nowhere:rec", index: 1, category: "card"),
                model("name", "t:missing", index: 2),
                model("nil", "t:broken", index: 3, category: "card"),
            ]), viewport: Size(width: 320, height: 600))
        #expect(tree.body[0].source == .factory(namespace: "t", owner: owner))
        #expect(tree.body[1].source == .fallback(category: "card"))
        #expect(tree.body[2].source == .fallback(category: "row"))
        #expect(tree.body[3].source == .fallback(category: "card"))
        #expect(pipeline.bodyWrappers[1]?.component is FallbackCardComponent)
        #expect(pipeline.bodyWrappers[2]?.component is FallbackRowComponent)
        // Fallback cards are compact 120×150; the row is full width.
        #expect(tree.body[1].frame.size == Size(width: 120, height: 150))
        #expect(tree.body[2].frame.width == 320)
    }

    @Test func unregisteringANamespaceDropsItsInstancesAndTheNextRenderFallsBack() throws {
        let log = self.log
        try registry.register(TestFactory(["rec": { RecordingComponent(log: log) }]), forNamespace: "t", owner: owner)
        let pipeline = RenderPipeline(registry: registry)
        let v = view([model("a", "t:rec")])
        pipeline.render(v, viewport: Size(width: 320, height: 600))
        _ = log.take()
        pipeline.render(v, viewport: Size(width: 320, height: 600))
        registry.unregister(namespace: "t")
        // Both the sizing and the live instance are destroyed.
        #expect(Set(log.take()) == ["destroy#0", "destroy#1"])
        #expect(pipeline.pool.wrapperCount == 0)
        let tree = pipeline.render(v, viewport: Size(width: 320, height: 600))
        #expect(tree.body[0].source == .fallback(category: "row"))

        // A new registration (a reloaded plugin) replaces the fallback on the next render.
        let newOwner = Owner(id: "test#2")
        try registry.register(
            TestFactory(["rec": { RecordingComponent(log: log) }]), forNamespace: "t", owner: newOwner)
        let again = pipeline.render(v, viewport: Size(width: 320, height: 600))
        #expect(again.body[0].source == .factory(namespace: "t", owner: newOwner))
    }
}

@Suite struct ChildrenTests {
    let log = CallLog()
    let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())

    init() throws {
        let log = self.log
        try registry.register(
            TestFactory(["carousel": { TestCarousel(log: log) }, "tile": { TestTile(log: log) }]),
            forNamespace: "t", owner: Owner(id: "test"))
    }

    func carousel(_ id: String, tiles: [String]) -> ComponentModel {
        model(
            id, "t:carousel", children: tiles.enumerated().map { model($1, "t:tile", index: $0, indexPath: [0, $0]) })
    }

    @Test func childrenGetTheParentSizeAsContainerAndAreDrawnInside() throws {
        let pipeline = RenderPipeline(registry: registry)
        let tree = pipeline.render(
            view([carousel("c", tiles: ["t0", "t1", "t2"])]), viewport: Size(width: 320, height: 600))
        let node = tree.body[0]
        // Sizing: tiles are container/4 = 80 wide, 60 high → carousel 80 high; fullWidth at y 15.
        #expect(node.frame == Rect(x: 0, y: 15, width: 320, height: 80))
        #expect(node.children.map(\.modelID) == ["t0", "t1", "t2"])
        #expect(node.children.map(\.indexPath) == [[0, 0], [0, 1], [0, 2]])
        // Child container = the parent's frame (320×80), so a tile is 80×60, placed by the carousel.
        #expect(
            node.children.map(\.frame) == [
                Rect(x: 10, y: 10, width: 80, height: 60),
                Rect(x: 100, y: 10, width: 80, height: 60),
                Rect(x: 190, y: 10, width: 80, height: 60),
            ])
        let tile = try #require(pipeline.bodyWrappers[0]?.children[1]?.component as? TestTile)
        #expect(tile.container == Size(width: 320, height: 80))
        #expect(
            node.children[0].displayList == [.rect(Rect(x: 0, y: 0, width: 80, height: 60), RectStyle(fill: .black))])
    }

    @Test func childWrappersAreReusedAfterPrepare() {
        let pipeline = RenderPipeline(registry: registry)
        pipeline.render(view([carousel("c", tiles: ["t0", "t1"])]), viewport: Size(width: 320, height: 600))
        let created = log.created
        _ = log.take()
        pipeline.render(view([carousel("c2", tiles: ["u0", "u1"])]), viewport: Size(width: 320, height: 600))
        // No new tile instances: the old ones were released to the pool and prepared before the new models.
        #expect(log.created == created)
        let entries = log.take()
        #expect(entries.filter { $0.hasPrefix("tile-prepare") }.count == 2)
        #expect(entries.filter { $0.hasPrefix("tile-load") }.isEmpty)
        #expect(
            Set(entries.filter { $0.hasPrefix("tile-configure") }.map { $0.split(separator: ":").last! }) == [
                "u0", "u1",
            ])
    }
}

private final class SilentWrapperDelegate: ComponentWrapperDelegate {}
