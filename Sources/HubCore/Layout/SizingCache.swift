/// The layout's own components, one per component identifier, created through the registry (so fallback
/// applies) and used only for `layoutTraits` and `preferredViewSize` (hub-framework.md §3.4). They never get
/// `loadView` or `configure`. A sizing component with children gets a child delegate that answers with other
/// sizing components' preferred sizes; its other callbacks do nothing.
public final class SizingCache {
    /// A class: every body component looks one up, and handing one on retains one object rather than its
    /// component, source and traits one by one.
    public final class Entry {
        public let component: Component
        /// The identifier it was made for, its source and traits (the nodes of components only laid out share it).
        public let kind: ComponentKind
        public var source: ComponentSource { kind.source }
        public var traits: Set<LayoutTrait> { kind.traits }
        /// Whether the component has the children extension (so may ask for its children's sizes).
        let supportsChildren: Bool

        init(component: Component, kind: ComponentKind, supportsChildren: Bool) {
            self.component = component
            self.kind = kind
            self.supportsChildren = supportsChildren
        }
    }

    public let registry: ComponentRegistry
    private var entries: [ComponentIdentifier: Entry] = [:]
    private var recent = RecentIdentifiers<Entry>()
    /// The models being sized, innermost last, so the child delegate knows whose children are meant.
    private var sizingStack: [(model: ComponentModel, container: Size)] = []
    private lazy var childDelegate = SizingChildDelegate(cache: self)
    /// This cache's observer in the registry, removed in `deinit` (see `ComponentRegistry.addUnregisterObserver`).
    private var unregisterObserver = 0

    public init(registry: ComponentRegistry) {
        self.registry = registry
        unregisterObserver = registry.addUnregisterObserver { [unowned(unsafe) self] entry in
            self.purge(namespace: entry.namespace)
        }
    }

    public func entry(for model: ComponentModel) -> Entry {
        entry(for: model.componentIdentifier, category: model.componentCategory)
    }

    public func entry(for identifier: ComponentIdentifier, category: String) -> Entry {
        // A view mixes a few components: comparing with the last few is cheaper than hashing.
        if let entry = recent.value(for: identifier) { return entry }
        if let entry = entries[identifier] {
            recent.remember(entry, for: identifier)
            return entry
        }
        let (component, source) = registry.createComponent(identifier: identifier, category: category)
        let children = component.childrenSupport
        children?.childDelegate = childDelegate
        let entry = Entry(
            component: component,
            kind: ComponentKind(componentIdentifier: identifier, source: source, traits: component.layoutTraits),
            supportsChildren: children != nil)
        entries[identifier] = entry
        recent.remember(entry, for: identifier)
        return entry
    }

    public func traits(for model: ComponentModel) -> Set<LayoutTrait> { entry(for: model).traits }

    public func preferredSize(for model: ComponentModel, containerSize: Size) -> Size {
        preferredSize(for: model, entry: entry(for: model), containerSize: containerSize)
    }

    /// The preferred size from an entry already looked up.
    public func preferredSize(for model: ComponentModel, entry: Entry, containerSize: Size) -> Size {
        // Only a component with children asks for its children's sizes (a push and pop per model otherwise).
        let stacked = entry.supportsChildren
        if stacked { sizingStack.append((model, containerSize)) }
        defer { if stacked { sizingStack.removeLast() } }
        return entry.component.preferredViewSize(for: model, containerSize: containerSize).sanitized
    }

    fileprivate func childSize(at index: Int) -> Size {
        guard let (model, container) = sizingStack.last, let child = model.child(at: index) else { return .zero }
        return preferredSize(for: child, containerSize: container)
    }

    public var count: Int { entries.count }

    /// Drops (and destroys) the sizing components of `namespace`.
    public func purge(namespace: String) {
        purge { if case .factory(let ns, _) = $0.source { return ns == namespace } else { return false } }
    }

    /// Drops entries whose source no longer matches the registry (see `ReusePool.purgeStale`).
    public func purgeStale() {
        purge { [registry] entry in
            switch entry.source {
            case .factory(let ns, let owner): return registry.entry(forNamespace: ns)?.owner != owner
            case .fallback: return false
            }
        }
        // A fallback entry is stale once its namespace has a factory.
        recent.removeAll()
        for (identifier, entry) in entries where registry.entry(forNamespace: identifier.namespace) != nil {
            if case .fallback = entry.source {
                entries[identifier] = nil
                entry.component.destroy()
            }
        }
    }

    private func purge(_ shouldPurge: (Entry) -> Bool) {
        recent.removeAll()
        for (identifier, entry) in entries where shouldPurge(entry) {
            entries[identifier] = nil
            entry.component.destroy()
        }
    }

    public func removeAll() {
        recent.removeAll()
        for entry in entries.values { entry.component.destroy() }
        entries.removeAll()
    }

    deinit {
        registry.removeUnregisterObserver(unregisterObserver)
        for entry in entries.values { entry.component.destroy() }
    }
}

private final class SizingChildDelegate: ChildDelegate {
    unowned let cache: SizingCache
    init(cache: SizingCache) { self.cache = cache }
    func createChild(at index: Int) -> Size { cache.childSize(at: index) }
    func willDisplayChild(at index: Int) {}
    func didStopDisplayingChild(at index: Int) {}
    func childSelected(at index: Int, customData: JSONObject?) {}
}

/// The values of the last few component identifiers looked up (a view mixes a handful of components, in any
/// order): found by comparing identifiers, which for the usual short names is cheaper than hashing them.
struct RecentIdentifiers<Value> {
    private static var limit: Int { 8 }
    // Keys and values apart, compared in place: iterating (identifier, value) pairs copied each pair out,
    // retaining its strings and value, and that was most of a lookup.
    private var identifiers: [ComponentIdentifier] = []
    private var values: [Value] = []
    private var next = 0

    func value(for identifier: ComponentIdentifier) -> Value? {
        var i = 0
        while i < identifiers.count {
            if identifiers[i].name == identifier.name, identifiers[i].namespace == identifier.namespace {
                return values[i]
            }
            i += 1
        }
        return nil
    }

    mutating func remember(_ value: Value, for identifier: ComponentIdentifier) {
        if identifiers.count < Self.limit {
            identifiers.append(identifier)
            values.append(value)
        } else {
            identifiers[next] = identifier
            values[next] = value
            next = (next + 1) % Self.limit
        }
    }

    mutating func removeAll() {
        identifiers.removeAll()
        values.removeAll()
        next = 0
    }
}
