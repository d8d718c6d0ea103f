/// Hub's HUBComponentReusePool: idle wrappers per component identifier, one UI-state manager for the view.
/// It owns every wrapper it created until it destroys it, so a plugin's instances can be dropped when its
/// namespace goes away (`ComponentRegistry.addUnregisterObserver`) and the next render falls back or uses the new version.
///
/// Dequeuing prefers an idle wrapper that last showed the same model id (so a re-render does not reconfigure
/// equal models), else the last one in the idle list (Hub takes an arbitrary one).
///
/// The idle lists hold exactly the idle wrappers: a wrapper taken out of the middle (through its model id) leaves
/// its list at once, so re-rendering a view any number of times keeps the pool's storage at one entry per wrapper.
///
/// Not thread-safe: main thread only.
public final class ReusePool {
    public enum Event: String, Sendable {
        case create, loadView, configure, prepareForReuse, restoreUIState, enqueue, dequeue, destroy
    }

    public let registry: ComponentRegistry
    public let uiStates: UIStateManager
    /// Sees every lifecycle step, for `--trace`-style output and tests.
    public var trace: ((Event, ComponentWrapper) -> Void)?
    /// Prefer an idle wrapper that last showed the same model id (so re-rendering does not reconfigure equal
    /// models). Off, any idle wrapper of the component is taken (cheaper for one-shot renders).
    public var prefersSameModel = true
    /// Told when wrappers are destroyed because their namespace went away or their source is stale.
    public var didPurge: [([ComponentWrapper]) -> Void] = []

    /// Reused for every draw call: display lists are copied out.
    let drawingBuilder = ViewBuilder()

    /// The idle wrappers of one component identifier. A class, so a wrapper keeps its own list and enqueuing
    /// it hashes nothing (a 100k one-shot render enqueues and dequeues every model).
    final class IdleList {
        var wrappers: [ComponentWrapper] = []
    }

    /// Idle wrappers by component identifier; each one's `idleSlot` is its index in its list.
    private var idle: [ComponentIdentifier: IdleList] = [:]
    /// The lists found last: a view mixes a few components, and comparing is cheaper than hashing.
    private var recentIdle = RecentIdentifiers<IdleList>()
    /// An idle wrapper by the id of the model it last showed (a hint: checked for the component identifier).
    private var idleByModel: [String: ComponentWrapper] = [:]
    private var wrappers: [Int: ComponentWrapper] = [:]
    /// Traits are the same for every instance of a component (Hub's contract), so each identifier's are read once
    /// (for a plugin component that is a call across the C boundary and a parse).
    private var traitsByIdentifier: [ComponentIdentifier: Set<LayoutTrait>] = [:]
    private var nextID = 0
    /// This pool's observer in the registry, removed in `deinit` (so it needs no weak reference to the pool).
    private var unregisterObserver = 0

    public init(registry: ComponentRegistry, uiStates: UIStateManager = UIStateManager()) {
        self.registry = registry
        self.uiStates = uiStates
        unregisterObserver = registry.addUnregisterObserver { [unowned(unsafe) self] entry in
            self.purge(namespace: entry.namespace)
        }
    }

    /// Every wrapper not destroyed (idle or in use).
    public var wrapperCount: Int { wrappers.count }
    public var idleCount: Int { wrappers.values.filter(\.isInPool).count }
    /// Entries in the idle lists and in the same-model hints: never more than the wrappers (tests check that
    /// repeated renders do not grow them).
    public var idleEntryCount: Int { idle.values.reduce(0) { $0 + $1.wrappers.count } }
    public var idleHintCount: Int { idleByModel.count }
    public var allWrappers: [ComponentWrapper] { wrappers.keys.sorted().map { wrappers[$0]! } }

    /// An idle wrapper for `model`'s component identifier, or a new one made through the registry (fallback
    /// included). Not configured here: call `configure`.
    public func wrapper(for model: ComponentModel, parent: ComponentWrapper?) -> ComponentWrapper {
        let wrapper = dequeue(model) ?? create(for: model)
        if parent != nil || wrapper.mayHaveParent { wrapper.parent = parent }
        return wrapper
    }

    private func dequeue(_ model: ComponentModel) -> ComponentWrapper? {
        if prefersSameModel, let preferred = idleByModel[model.identifier], preferred.isInPool,
            preferred.componentIdentifier == model.componentIdentifier
        {
            return take(preferred)
        }
        let candidates = idleList(for: model.componentIdentifier).wrappers
        guard let candidate = candidates.last else { return nil }
        // An idle instance its own model takes back later in this render (a resize re-renders every visible
        // component) is not handed to another model: that would reconfigure a component on screen for another.
        if !reservedModelIDs.isEmpty, reservedModelIDs.contains(candidate.model?.identifier ?? "") {
            guard let free = candidates.last(where: { !reservedModelIDs.contains($0.model?.identifier ?? "") })
            else { return nil }
            return take(free)
        }
        return take(candidate)
    }

    /// Models that take their own idle instance back in the render under way (`RenderPipeline` sets them when
    /// instances stay live): another model does not get those.
    public var reservedModelIDs: Set<String> = []

    /// Whether `model`'s own instance (the one that showed it last) is idle in the pool.
    public func hasIdleInstance(of model: ComponentModel) -> Bool {
        guard prefersSameModel, let preferred = idleByModel[model.identifier] else { return false }
        return preferred.isInPool && preferred.componentIdentifier == model.componentIdentifier
    }

    private func idleList(for identifier: ComponentIdentifier) -> IdleList {
        if let list = recentIdle.value(for: identifier) { return list }
        let list: IdleList
        if let existing = idle[identifier] {
            list = existing
        } else {
            list = IdleList()
            idle[identifier] = list
        }
        recentIdle.remember(list, for: identifier)
        return list
    }

    private func take(_ wrapper: ComponentWrapper) -> ComponentWrapper {
        leaveIdle(wrapper)
        trace?(.dequeue, wrapper)
        return wrapper
    }

    /// Takes an idle wrapper out of its idle list (the last entry moves into its slot) and out of the hints.
    private func leaveIdle(_ wrapper: ComponentWrapper) {
        guard wrapper.isInPool else { return }
        wrapper.isInPool = false
        let slot = wrapper.idleSlot
        wrapper.idleSlot = -1
        // Asked only when there are hints (a one-shot render keeps none): the lookup hashes the model id.
        if !idleByModel.isEmpty, let id = wrapper.model?.identifier, idleByModel[id] === wrapper {
            idleByModel[id] = nil
        }
        guard let list = wrapper.idleList, let last = list.wrappers.popLast() else { return }
        if last !== wrapper {
            list.wrappers[slot] = last
            last.idleSlot = slot
        }
    }

    private func create(for model: ComponentModel) -> ComponentWrapper {
        let (component, source) = registry.createComponent(for: model)
        let traits = traitsByIdentifier[model.componentIdentifier] ?? component.layoutTraits
        traitsByIdentifier[model.componentIdentifier] = traits
        let wrapper = ComponentWrapper(
            id: nextID, component: component, componentIdentifier: model.componentIdentifier,
            source: source, layoutTraits: traits, pool: self)
        nextID += 1
        wrappers[wrapper.id] = wrapper
        trace?(.create, wrapper)
        return wrapper
    }

    /// Makes `wrapper` idle (Hub's wrapper prepareViewForReuse + pool add). Its component is prepared only when it
    /// shows a different model.
    public func enqueue(_ wrapper: ComponentWrapper) {
        // A wrapper of this pool that is not destroyed is in `wrappers` (removing one destroys it): no lookup.
        guard !wrapper.isInPool, !wrapper.isDestroyed, wrapper.poolIdentity == ObjectIdentifier(self) else { return }
        wrapper.detachFromParent()
        if wrapper.mayHaveDelegate { wrapper.delegate = nil }
        // A component that leaves while selected or highlighted is told it is not any more: cleared silently, it
        // stayed Selected, and was sent Selected a second time when tapped again (Hub never sends a state twice).
        if wrapper.selectionState != .none {
            wrapper.selectionState = .none
            wrapper.component.selectionStateHandling?.updateViewForSelectionState(.none)
        }
        wrapper.isInPool = true
        let list = wrapper.idleList ?? idleList(for: wrapper.componentIdentifier)
        wrapper.idleList = list
        wrapper.idleSlot = list.wrappers.count
        list.wrappers.append(wrapper)
        if prefersSameModel, let id = wrapper.model?.identifier { idleByModel[id] = wrapper }
        trace?(.enqueue, wrapper)
    }

    /// Destroys every wrapper whose component came from `namespace` (a plugin unloaded), after saving the UI
    /// state of those in use. Their parents forget them and configure again on the next render.
    public func purge(namespace: String) {
        purge { wrapper in
            if case .factory(let ns, _) = wrapper.source { return ns == namespace }
            return false
        }
    }

    /// Destroys wrappers whose source no longer matches the registry: a plugin's namespace now has another
    /// owner, or a fallback's namespace now has a factory.
    public func purgeStale() {
        purge { [registry] wrapper in
            switch wrapper.source {
            case .factory(let ns, let owner): return registry.entry(forNamespace: ns)?.owner != owner
            case .fallback: return registry.entry(forNamespace: wrapper.componentIdentifier.namespace) != nil
            }
        }
    }

    private func purge(where shouldPurge: (ComponentWrapper) -> Bool) {
        let doomed = allWrappers.filter(shouldPurge)
        guard !doomed.isEmpty else { return }
        traitsByIdentifier.removeAll()
        for wrapper in doomed where !wrapper.isInPool { wrapper.saveUIState() }
        for wrapper in doomed { remove(wrapper) }
        for observer in didPurge { observer(doomed) }
    }

    private func remove(_ wrapper: ComponentWrapper) {
        if let parent = wrapper.parent { parent.forgetChild(wrapper) }
        wrapper.parent = nil
        // Children of a destroyed parent go back to the pool (or are destroyed themselves by the same purge).
        wrapper.releaseChildren()
        wrappers[wrapper.id] = nil
        if let id = wrapper.model?.identifier, idleByModel[id] === wrapper { idleByModel[id] = nil }
        leaveIdle(wrapper)
        trace?(.destroy, wrapper)
        wrapper.destroy()
    }

    /// Destroys every wrapper (the view goes away).
    public func removeAll() {
        for wrapper in allWrappers { remove(wrapper) }
        traitsByIdentifier.removeAll()
        idle.removeAll()
        recentIdle.removeAll()
        idleByModel.removeAll()
    }

    deinit {
        registry.removeUnregisterObserver(unregisterObserver)
        for wrapper in wrappers.values { wrapper.destroy() }
    }
}
