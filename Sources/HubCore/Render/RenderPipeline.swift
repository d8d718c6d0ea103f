/// The render pipeline for one view (Hub's view controller without UIKit): resolves each component model to a
/// component through the registry, sizes the body with sizing instances, lays it out with Hub's collection
/// layout and the layout manager, then configures live instances from the reuse pool and collects their display
/// lists into a `RenderTree`.
///
/// Rendering again with a new view model reuses instances as Hub does (equal models are not reconfigured, UI
/// state follows model ids). With `visibleRect`, only body components intersecting it get live instances (the
/// others keep their frames), which is what scrolling needs.
///
/// Not thread-safe: main thread only.
public final class RenderPipeline {
    public let registry: ComponentRegistry
    public let pool: ReusePool
    public let sizing: SizingCache
    public var layoutManager: LayoutManager
    /// Hub's `viewControllerShouldAutomaticallyManageTopContentInset` (true without a delegate).
    public var addHeaderMargin = true
    /// Given to every live wrapper (the event engine sets it).
    public weak var wrapperDelegate: ComponentWrapperDelegate?

    public struct Options {
        /// Keep every drawn body instance live after `render` (what scrolling and events need). When false, each
        /// body instance goes back to the pool as soon as it is drawn, as cells do while a list scrolls by, so
        /// a one-shot render of a huge view holds a handful of instances; every model is still configured and
        /// drawn (reused instances are prepared first).
        public var retainBodyInstances = true
        /// Keep display lists in the nodes (SVG and HTML draw them; JSON and text outputs do not need them).
        public var keepDisplayLists = true
        /// Hands the body to a writer as it is drawn (a one-shot render to a file), so no one holds every
        /// component's display list: `begin` gets the tree before its body (header, overlays, sizes) and the
        /// body's length, `node` each body node as soon as it is drawn, display lists included (with
        /// `keepDisplayLists`); the returned tree's body nodes then have none.
        public var bodyStream: BodyStream?
        /// With a `bodyStream`: whether the returned tree keeps the body nodes streamed. A one-shot render that
        /// writes them as they come does not need them (at 100k components, 15 MB of nodes made, copied and
        /// freed for nothing); its tree's body is then empty.
        public var keepsStreamedBody = true
        public init(retainBodyInstances: Bool = true, keepDisplayLists: Bool = true, keepsStreamedBody: Bool = true) {
            self.retainBodyInstances = retainBodyInstances
            self.keepDisplayLists = keepDisplayLists
            self.keepsStreamedBody = keepsStreamedBody
        }
    }
    public var options = Options()

    /// See `Options.bodyStream`.
    public struct BodyStream {
        public var begin: (_ tree: RenderTree, _ bodyCount: Int) -> Void
        public var node: (RenderNode) -> Void
        public init(
            begin: @escaping (_ tree: RenderTree, _ bodyCount: Int) -> Void, node: @escaping (RenderNode) -> Void
        ) {
            self.begin = begin
            self.node = node
        }
    }

    public private(set) var viewModel: ViewModel?
    public private(set) var viewport: Size = .zero
    public private(set) var headerWrapper: ComponentWrapper?
    /// Live body wrappers by body index (the event engine updates it while scrolling).
    public internal(set) var bodyWrappers: [Int: ComponentWrapper] = [:]
    public private(set) var overlayWrappers: [ComponentWrapper] = []
    public private(set) var layout: CollectionLayoutResult?
    public private(set) var lastTree: RenderTree?

    public init(
        registry: ComponentRegistry, layoutManager: LayoutManager = DefaultLayoutManager(),
        uiStates: UIStateManager = UIStateManager()
    ) {
        self.registry = registry
        self.layoutManager = layoutManager
        self.pool = ReusePool(registry: registry, uiStates: uiStates)
        self.sizing = SizingCache(registry: registry)
    }

    // MARK: Layout only

    /// Body frames and content size without live instances (sizing components only).
    public func computeLayout(_ viewModel: ViewModel, viewport: Size) -> CollectionLayoutResult {
        var items: [LayoutItem] = []
        items.reserveCapacity(viewModel.body.count)
        defer { ModelInProgress.location = 0 }
        for model in viewModel.body {
            ModelInProgress.location = model.locationCode
            let entry = sizing.entry(for: model)
            items.append(
                LayoutItem(
                    traits: entry.traits,
                    preferredSize: sizing.preferredSize(for: model, entry: entry, containerSize: viewport)))
        }
        let header = viewModel.header.map {
            ModelInProgress.location = $0.locationCode
            return HeaderLayoutItem(
                height: sizing.preferredSize(for: $0, containerSize: viewport).height, traits: sizing.traits(for: $0))
        }
        return CollectionLayout.compute(
            items: items, width: viewport.width, header: header,
            addHeaderMargin: addHeaderMargin, layoutManager: layoutManager)
    }

    // MARK: Rendering

    @discardableResult
    public func render(_ viewModel: ViewModel, viewport: Size, visibleRect: Rect? = nil) -> RenderTree {
        // Instances of plugins that went away or changed are dropped first, so this render falls back or uses
        // the new version.
        pool.purgeStale()
        sizing.purgeStale()
        dropDestroyedWrappers()

        // Hub saves the UI state of every visible body cell at the start of a reload.
        for index in bodyWrappers.keys.sorted() { bodyWrappers[index]!.saveUIState() }

        self.viewModel = viewModel
        self.viewport = viewport

        let header = renderHeader(viewModel.header, viewport: viewport)
        let overlays = renderOverlays(viewModel.overlays, viewport: viewport)

        let layout = computeLayout(viewModel, viewport: viewport)
        self.layout = layout

        // The same-model hint only pays off when instances stay live between renders.
        pool.prefersSameModel = options.retainBodyInstances
        // reloadData: every cell gives its wrapper back, then visible cells take one.
        for index in bodyWrappers.keys.sorted() { bodyWrappers[index]!.enqueueForReuse() }
        bodyWrappers.removeAll(keepingCapacity: true)
        let stream = options.bodyStream
        stream?.begin(
            RenderTree(
                viewID: viewModel.identifier, title: viewModel.title, viewport: viewport,
                contentSize: layout.contentSize, header: header, overlays: overlays), viewModel.body.count)
        let keepsBody = stream == nil || options.keepsStreamedBody
        var body: [RenderNode] = []
        if keepsBody { body.reserveCapacity(viewModel.body.count) }
        // Read once (a weak reference): a wrapper from the pool has none, so only a set delegate is handed on.
        let delegate = wrapperDelegate
        // Live instances: each visible model takes its own instance back, whatever the order (Hub reconfigures a
        // visible cell in place on a bounds change; it is not given to another model and re-created).
        if options.retainBodyInstances, let visibleRect {
            var reserved = Set<String>()
            for (index, model) in viewModel.body.enumerated()
            where layout.frames[index].intersects(visibleRect) && pool.hasIdleInstance(of: model) {
                reserved.insert(model.identifier)
            }
            pool.reservedModelIDs = reserved
        }
        defer { pool.reservedModelIDs = [] }
        // A one-shot render hands each instance it drew straight to the next model of its component (untraced:
        // a trace shows every trip through the pool).
        var inHand = WrappersInHand(enabled: !options.retainBodyInstances && pool.trace == nil)
        defer { inHand.giveBack(to: pool) }
        defer { ModelInProgress.location = 0 }
        for (index, model) in viewModel.body.enumerated() {
            ModelInProgress.location = model.locationCode
            let frame = layout.frames[index]
            if let visibleRect, !frame.intersects(visibleRect) {
                let laidOut = RenderNode(model: model, kind: sizing.entry(for: model).kind, frame: frame)
                stream?.node(laidOut)
                if keepsBody { body.append(laidOut) }
                continue
            }
            let wrapper = inHand.take(for: model) ?? pool.wrapper(for: model, parent: nil)
            if let delegate { wrapper.delegate = delegate }
            wrapper.loadView()
            wrapper.setFrame(frame)  // before configure: children take the parent's frame size as container
            wrapper.configure(with: model, containerSize: viewport)
            var drawn = node(for: wrapper, model: model, frame: frame)
            if let stream {
                stream.node(drawn)
                if keepsBody { drawn.dropDisplayLists() }
            }
            if keepsBody { body.append(drawn) }
            // The pool's own reference: the wrapper's is unowned, and reading it retains the pool (per component).
            if options.retainBodyInstances { bodyWrappers[index] = wrapper } else { inHand.keep(wrapper, pool: pool) }
        }

        let tree = RenderTree(
            viewID: viewModel.identifier, title: viewModel.title, viewport: viewport,
            contentSize: layout.contentSize, header: header, body: body, overlays: overlays)
        lastTree = tree
        return tree
    }

    /// Every live wrapper: header, body (by index), overlays, with their children.
    public var liveWrappers: [ComponentWrapper] {
        func withChildren(_ w: ComponentWrapper) -> [ComponentWrapper] {
            [w] + w.children.keys.sorted().flatMap { withChildren(w.children[$0]!) }
        }
        return (headerWrapper.map(withChildren) ?? [])
            + bodyWrappers.keys.sorted().flatMap { withChildren(bodyWrappers[$0]!) }
            + overlayWrappers.flatMap(withChildren)
    }

    /// Destroys every instance (the view goes away).
    public func tearDown() {
        headerWrapper = nil
        bodyWrappers.removeAll()
        overlayWrappers.removeAll()
        pool.removeAll()
        sizing.removeAll()
    }

    // MARK: Header and overlays (Hub's header/overlay configure)

    private func renderHeader(_ model: ComponentModel?, viewport: Size) -> RenderNode? {
        guard let model else {
            headerWrapper?.enqueueForReuse()
            headerWrapper = nil
            return nil
        }
        ModelInProgress.location = model.locationCode
        defer { ModelInProgress.location = 0 }
        let wrapper = reuseOrTake(headerWrapper, for: model)
        headerWrapper = wrapper
        let frame = ViewChromeLayout.headerFrame(
            preferredSize: wrapper.preferredSize(for: model, containerSize: viewport))
        wrapper.loadView()
        wrapper.setFrame(frame)
        wrapper.configure(with: model, containerSize: viewport)
        return node(for: wrapper, model: model, frame: frame)
    }

    private func renderOverlays(_ models: [ComponentModel], viewport: Size) -> [RenderNode] {
        var old = overlayWrappers
        overlayWrappers = []
        var nodes: [RenderNode] = []
        defer { ModelInProgress.location = 0 }
        for (index, model) in models.enumerated() {
            ModelInProgress.location = model.locationCode
            let wrapper = reuseOrTake(index < old.count ? old[index] : nil, for: model)
            if index < old.count { old[index] = wrapper }
            overlayWrappers.append(wrapper)
            let frame = ViewChromeLayout.overlayFrame(
                preferredSize: wrapper.preferredSize(for: model, containerSize: viewport),
                viewport: viewport)
            wrapper.loadView()
            wrapper.setFrame(frame)
            wrapper.configure(with: model, containerSize: viewport)
            nodes.append(node(for: wrapper, model: model, frame: frame))
        }
        for wrapper in old.dropFirst(models.count) where !overlayWrappers.contains(where: { $0 === wrapper }) {
            wrapper.enqueueForReuse()
        }
        return nodes
    }

    /// Keeps `old` when it shows the same kind of component (an equal model stays untouched, another model is
    /// prepared on configure); otherwise gives it back and takes one from the pool.
    private func reuseOrTake(_ old: ComponentWrapper?, for model: ComponentModel) -> ComponentWrapper {
        if let old, !old.isDestroyed, old.componentIdentifier == model.componentIdentifier { return old }
        old?.enqueueForReuse()
        let wrapper = pool.wrapper(for: model, parent: nil)
        wrapper.delegate = wrapperDelegate
        return wrapper
    }

    private func dropDestroyedWrappers() {
        if headerWrapper?.isDestroyed == true { headerWrapper = nil }
        bodyWrappers = bodyWrappers.filter { !$0.value.isDestroyed }
        overlayWrappers.removeAll { $0.isDestroyed }
    }

    // MARK: Nodes

    /// Draws `wrapper` at `frame.size` and its placed children inside it (also used by the event engine).
    func node(for wrapper: ComponentWrapper, model: ComponentModel, frame: Rect) -> RenderNode {
        // Without display lists in the output, only components with children need drawing (their drawing places
        // the children).
        let displayList = options.keepDisplayLists || wrapper.supportsChildren ? wrapper.draw() : []
        var children: [RenderNode] = []
        if !wrapper.children.isEmpty {
            var placed: [Int: Rect] = [:]
            for item in displayList {
                if case .child(let rect, let index) = item, placed[index] == nil, wrapper.children[index] != nil {
                    placed[index] = rect
                }
            }
            for index in wrapper.children.keys.sorted() {
                let child = wrapper.children[index]!
                guard let childModel = child.model else { continue }
                // A placed child takes the slot the parent drew it in; an unplaced one keeps (0,0, preferred).
                if let rect = placed[index] { child.setFrame(rect) }
                children.append(node(for: child, model: childModel, frame: child.frame))
            }
        }
        // The wrapper's kind unless the model names another identifier (a wrapper shows models of its own).
        var kind = wrapper.kind
        if kind.componentIdentifier != model.componentIdentifier {
            kind = ComponentKind(
                componentIdentifier: model.componentIdentifier, source: kind.source, traits: kind.traits)
        }
        return RenderNode(
            model: model, kind: kind, frame: frame, displayList: options.keepDisplayLists ? displayList : [],
            children: children, wrapperID: wrapper.id)
    }
}

/// The instances a one-shot render drew last, at most one per component identifier and a few in all, held
/// between two models instead of going through the pool: the next model of the same component takes its
/// instance back, as it would take it from the pool's idle list, where it would be the last one in. A 100k
/// render enqueued and dequeued every model (idle-list bookkeeping: a twentieth of the pipeline).
struct WrappersInHand {
    private static var limit: Int { 8 }
    private var wrappers: [ComponentWrapper] = []
    let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    /// The instance in hand for `model`'s component identifier, out of the hand.
    mutating func take(for model: ComponentModel) -> ComponentWrapper? {
        guard enabled else { return nil }
        let wanted = model.componentIdentifier
        var i = 0
        while i < wrappers.count {
            let identifier = wrappers[i].componentIdentifier
            if identifier.name == wanted.name, identifier.namespace == wanted.namespace, !wrappers[i].isDestroyed {
                return wrappers.remove(at: i)
            }
            i += 1
        }
        return nil
    }

    /// Keeps `wrapper` for the next model of its component; the oldest in hand goes to the pool when the hand is
    /// full. Disabled, `wrapper` goes to the pool at once.
    mutating func keep(_ wrapper: ComponentWrapper, pool: ReusePool) {
        guard enabled else { return pool.enqueue(wrapper) }
        if wrappers.count == Self.limit { pool.enqueue(wrappers.removeFirst()) }
        wrappers.append(wrapper)
    }

    /// Every instance in hand goes to the pool, oldest first (the render is over).
    mutating func giveBack(to pool: ReusePool) {
        for wrapper in wrappers { pool.enqueue(wrapper) }
        wrappers.removeAll()
    }
}
