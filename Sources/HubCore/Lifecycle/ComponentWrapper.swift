/// What a wrapper tells its owner (the render pipeline now, the event engine later). Every method has a default.
public protocol ComponentWrapperDelegate: AnyObject {
    /// The component asked to perform an action (it has the action-performer extension).
    func componentWrapper(
        _ wrapper: ComponentWrapper, performAction identifier: ComponentIdentifier,
        customData: JSONObject?
    ) -> Bool
    /// The component says child `index` became visible / stopped being visible inside it.
    func componentWrapper(_ wrapper: ComponentWrapper, willDisplayChildAt index: Int)
    func componentWrapper(_ wrapper: ComponentWrapper, didStopDisplayingChildAt index: Int)
    /// A child the component draws itself (not a child component) was selected.
    func componentWrapper(_ wrapper: ComponentWrapper, childSelectedAt index: Int, customData: JSONObject?)
}

extension ComponentWrapperDelegate {
    public func componentWrapper(
        _ wrapper: ComponentWrapper, performAction identifier: ComponentIdentifier,
        customData: JSONObject?
    ) -> Bool { false }
    public func componentWrapper(_ wrapper: ComponentWrapper, willDisplayChildAt index: Int) {}
    public func componentWrapper(_ wrapper: ComponentWrapper, didStopDisplayingChildAt index: Int) {}
    public func componentWrapper(_ wrapper: ComponentWrapper, childSelectedAt index: Int, customData: JSONObject?) {}
}

/// Hub's HUBComponentWrapper, view-less: the host's proxy around one displayed component instance. It drives
/// the lifecycle (`loadView` once, configure per model, an equal model is not configured again,
/// `prepareViewForReuse` before a different model, UI state saved when leaving a model and restored when it
/// comes back), owns the instance's frame (the host owns frames), and is the component's child delegate and
/// action performer.
///
/// Created only by a `ReusePool`. Not thread-safe: main thread only.
public final class ComponentWrapper {
    /// Unique within its pool, in creation order (deterministic, unlike Hub's UUID).
    public let id: Int
    public let component: Component
    /// Its identifier, source and traits, shared by every node it draws.
    public let kind: ComponentKind
    /// The identifier the instance was created for (its pool key).
    public var componentIdentifier: ComponentIdentifier { kind.componentIdentifier }
    /// Where the instance came from (a plugin's factory or the fallback).
    public var source: ComponentSource { kind.source }
    /// Read once per instance (Hub: the same for every instance of a class).
    public var layoutTraits: Set<LayoutTrait> { kind.traits }

    public private(set) var model: ComponentModel?
    /// The size `configure` was given as container.
    public private(set) var containerSize: Size = .zero
    /// In the coordinates of the parent (the content for root components, the parent's view for children).
    public private(set) var frame: Rect = .zero
    public private(set) var isViewLoaded = false
    public private(set) var hasBeenConfigured = false
    /// Set by `invalidate()`: the next configure runs even for an equal model (its children went away).
    public private(set) var needsConfigure = false
    /// The UI state was saved since the instance last showed its model (when it left for the pool): a reuse for
    /// another model does not read it again.
    var stateSavedSinceShown = false

    /// The wrapper this one is a child of, if any.
    public internal(set) weak var parent: ComponentWrapper? { willSet { mayHaveParent = newValue != nil } }
    /// Child wrappers created through the child delegate, by child model index.
    public private(set) var children: [Int: ComponentWrapper] = [:]
    /// Indexes the component reported as visible (`willDisplayChild`).
    public private(set) var visibleChildIndexes: Set<Int> = []
    public weak var delegate: ComponentWrapperDelegate? { willSet { mayHaveDelegate = newValue != nil } }
    /// Whether `parent` / `delegate` was last set to an object (false: never set, or last set to nil), so the pool
    /// clears them on every reuse without a weak load or store while they were never set (each goes through the
    /// runtime, and a one-shot render reuses a wrapper per component). True does not mean set: a weak reference
    /// also clears itself.
    private(set) var mayHaveParent = false
    private(set) var mayHaveDelegate = false

    // State for the event pipeline (issue 4); the render pipeline only resets it.
    public var selectionState: SelectionState = .none
    public var appearanceCount = 0
    public var viewHasAppearedSinceLastModelChange = false

    /// Whether the component has the children extension (asked once: for a plugin it is a call across the ABI).
    public let supportsChildren: Bool

    /// True while the instance is idle in its pool.
    public internal(set) var isInPool = false
    /// Its position in the pool's idle list while idle (so taking it out of the middle costs O(1)).
    var idleSlot = -1
    /// The pool's idle list for this wrapper's component identifier, once it has been idle.
    var idleList: ReusePool.IdleList?
    public private(set) var isDestroyed = false

    unowned let pool: ReusePool
    /// The pool's identity, for its checks of ownership without reading the unowned reference (which retains).
    let poolIdentity: ObjectIdentifier
    private lazy var childDelegateProxy = WrapperChildDelegate(wrapper: self)
    private lazy var actionPerformerProxy = WrapperActionPerformer(wrapper: self)

    init(
        id: Int, component: Component, componentIdentifier: ComponentIdentifier, source: ComponentSource,
        layoutTraits: Set<LayoutTrait>, pool: ReusePool
    ) {
        self.id = id
        self.component = component
        self.kind = ComponentKind(componentIdentifier: componentIdentifier, source: source, traits: layoutTraits)
        self.pool = pool
        poolIdentity = ObjectIdentifier(pool)
        // Hub sets itself as child delegate and action performer at init.
        let childrenSupport = component.childrenSupport
        supportsChildren = childrenSupport != nil
        childrenSupport?.childDelegate = childDelegateProxy
        component.actionPerformerSupport?.actionPerformer = actionPerformerProxy
    }

    /// Calls the component's `loadView` the first time only.
    public func loadView() {
        guard !isViewLoaded else { return }
        isViewLoaded = true
        pool.trace?(.loadView, self)
        component.loadView()
    }

    /// Shows `model` (Hub's configureViewWithModel): an equal model is left alone; another model first saves the
    /// outgoing model's UI state, prepares the instance for reuse and releases its children to the pool.
    /// Loads the view first if needed.
    public func configure(with model: ComponentModel, containerSize: Size) {
        // Read once: each read of an unowned reference retains the object (a 100k render configures 100k times;
        // the pool has no weak references, which would put every such read on the runtime's slow path).
        let pool = self.pool
        loadView()
        if hasBeenConfigured, let current = self.model {
            if current == model && !needsConfigure {
                stateSavedSinceShown = false  // shown again: its state may change from here on
                return
            }
            // Saved already when it left the screen for the pool, where nothing changes it: not read twice.
            if !stateSavedSinceShown { saveUIState() }
            pool.trace?(.prepareForReuse, self)
            component.prepareViewForReuse()
            releaseChildren()
        }
        needsConfigure = false
        stateSavedSinceShown = false
        self.model = model
        self.containerSize = containerSize
        pool.trace?(.configure, self)
        component.configureView(with: model, containerSize: containerSize)
        if let state = pool.uiStates.restoreState(forModelIdentifier: model.identifier),
            let restorable = component.restorableUIState
        {
            pool.trace?(.restoreUIState, self)
            restorable.restoreUIState(state)
        }
        viewHasAppearedSinceLastModelChange = false
        hasBeenConfigured = true
    }

    /// Configures the same model for a new container size (Hub's reconfigure on rotation): no prepare.
    public func reconfigure(containerSize: Size) {
        guard let model else { return }
        self.containerSize = containerSize
        pool.trace?(.configure, self)
        component.configureView(with: model, containerSize: containerSize)
    }

    /// Sets the frame; tells a view observer when the size changed.
    public func setFrame(_ newFrame: Rect) {
        let oldSize = frame.size
        frame = newFrame
        if newFrame.size != oldSize, isViewLoaded, let observer = component.viewObserver {
            observer.viewDidResize(newFrame.size)
        }
    }

    /// The preferred size of the displayed instance (used for the header, overlays and children).
    public func preferredSize(for model: ComponentModel, containerSize: Size) -> Size {
        component.preferredViewSize(for: model, containerSize: containerSize).sanitized
    }

    /// Saves the component's UI state for the current model (restorable components only); nil removes it.
    public func saveUIState() {
        guard let model, let restorable = component.restorableUIState else { return }
        if let state = restorable.currentUIState {
            pool.uiStates.save(state, forModelIdentifier: model.identifier)
        } else {
            pool.uiStates.removeState(forModelIdentifier: model.identifier)
        }
        stateSavedSinceShown = true
    }

    /// The component's display list at the current frame size.
    public func draw() -> [DrawItem] {
        let builder = pool.drawingBuilder
        builder.removeAll()
        component.drawView(into: builder, size: frame.size)
        return builder.items
    }

    /// Forces the next configure to run (used when children were dropped by a plugin unload).
    public func invalidate() { needsConfigure = true }

    /// Sends the wrapper back to the pool (Hub's wrapper prepareViewForReuse): the component itself is prepared
    /// only when it is configured with a different model.
    public func enqueueForReuse() { pool.enqueue(self) }

    // MARK: Children

    /// Creates or reuses the child wrapper for child `index` of the current model (Hub's child creation):
    /// container = this wrapper's frame size; the child's frame = (0,0, its preferred size).
    @discardableResult
    public func createChild(at index: Int) -> ComponentWrapper? {
        guard let model, let childModel = model.child(at: index) else { return nil }
        let container = frame.size
        let child: ComponentWrapper
        if let existing = children[index], existing.componentIdentifier == childModel.componentIdentifier,
            !existing.isDestroyed
        {
            child = existing
        } else {
            children[index]?.enqueueForReuse()
            child = pool.wrapper(for: childModel, parent: self)
            children[index] = child
        }
        child.delegate = delegate
        child.configure(with: childModel, containerSize: container)
        child.setFrame(Rect(origin: .zero, size: child.preferredSize(for: childModel, containerSize: container)))
        return child
    }

    func releaseChildren() {
        // Most components have no children: no copy, no sort (this runs on every reuse of a 100k render).
        guard !children.isEmpty || !visibleChildIndexes.isEmpty else { return }
        let released = children
        children.removeAll()
        visibleChildIndexes.removeAll()
        for index in released.keys.sorted() { released[index]!.enqueueForReuse() }
    }

    /// Drops one child without giving it back to the pool (its namespace went away).
    func forgetChild(_ child: ComponentWrapper) {
        for (index, wrapper) in children where wrapper === child {
            children[index] = nil
            visibleChildIndexes.remove(index)
        }
        invalidate()
    }

    func detachFromParent() {
        guard mayHaveParent else { return }
        if let parent {
            for (index, wrapper) in parent.children where wrapper === self {
                parent.children[index] = nil
                parent.visibleChildIndexes.remove(index)
            }
        }
        parent = nil
    }

    /// Destroys the instance once (the pool traces it; this must not touch the pool, which may be deinitialising).
    func destroy() {
        guard !isDestroyed else { return }
        isDestroyed = true
        component.destroy()
    }

    fileprivate func childDisplayed(_ index: Int, visible: Bool) {
        if visible { visibleChildIndexes.insert(index) } else { visibleChildIndexes.remove(index) }
        if visible {
            delegate?.componentWrapper(self, willDisplayChildAt: index)
        } else {
            delegate?.componentWrapper(self, didStopDisplayingChildAt: index)
        }
    }

    fileprivate func childSelected(_ index: Int, customData: JSONObject?) {
        // Ignored when a managed child component exists at the index (Hub).
        guard children[index] == nil else { return }
        delegate?.componentWrapper(self, childSelectedAt: index, customData: customData)
    }

    fileprivate func performAction(_ identifier: ComponentIdentifier, customData: JSONObject?) -> Bool {
        delegate?.componentWrapper(self, performAction: identifier, customData: customData) ?? false
    }
}

/// The child delegate handed to the component. A separate object so the component holds no strong reference
/// cycle back to the wrapper.
private final class WrapperChildDelegate: ChildDelegate {
    unowned let wrapper: ComponentWrapper
    init(wrapper: ComponentWrapper) { self.wrapper = wrapper }
    func createChild(at index: Int) -> Size { wrapper.createChild(at: index)?.frame.size ?? .zero }
    func willDisplayChild(at index: Int) { wrapper.childDisplayed(index, visible: true) }
    func didStopDisplayingChild(at index: Int) { wrapper.childDisplayed(index, visible: false) }
    func childSelected(at index: Int, customData: JSONObject?) { wrapper.childSelected(index, customData: customData) }
}

private final class WrapperActionPerformer: ActionPerformer {
    unowned let wrapper: ComponentWrapper
    init(wrapper: ComponentWrapper) { self.wrapper = wrapper }
    func performAction(_ identifier: ComponentIdentifier, customData: JSONObject?) -> Bool {
        wrapper.performAction(identifier, customData: customData)
    }
}

extension Size {
    /// Finite and non-negative (what a plugin returns is not trusted).
    public var sanitized: Size {
        Size(width: width.isFinite ? max(0, width) : 0, height: height.isFinite ? max(0, height) : 0)
    }
}
