/// Creates components for names in one namespace (Hub's HUBComponentFactory).
public protocol ComponentFactory: AnyObject {
    /// A new component for `name`, or nil when the factory has none (the registry then falls back).
    func createComponent(forName name: String) -> Component?
    /// The names the factory offers, for listings and validation.
    var componentNames: [String] { get }
}

/// Makes a component for a category when no factory can (Hub's HUBComponentFallbackHandler). Must always succeed.
public protocol ComponentFallbackHandler: AnyObject {
    func createFallbackComponent(forCategory category: String) -> Component
}

/// Where a resolved component came from.
public enum ComponentSource: Hashable, Sendable {
    case factory(namespace: String, owner: Owner)
    case fallback(category: String)
}

public enum RegistryError: Error, Equatable, CustomStringConvertible {
    case namespaceTaken(namespace: String, owner: Owner, claimant: Owner)
    /// Why the namespace can never be named: `RegisteredName.problem`, or its ':'.
    case invalidNamespace(String, claimant: Owner, reason: String)

    public var description: String {
        switch self {
        case .namespaceTaken(let namespace, let owner, let claimant):
            return "namespace '\(namespace)' is already registered by \(owner); \(claimant) cannot claim it"
        case .invalidNamespace(let namespace, let claimant, let reason):
            return "\(claimant) tried to register the invalid namespace \(TerminalText.quoted(namespace, limit: 60)): "
                + reason
        }
    }
}

/// The component registry (Hub's HUBComponentRegistry): a namespace → factory table with an owner on every entry,
/// and a fallback handler, so `createComponent(for:)` always returns a component.
///
/// # Thread safety
/// Not thread-safe: the host uses it from its main thread only, as Hub does.
public final class ComponentRegistry {
    public struct Entry {
        public let namespace: String
        public let factory: ComponentFactory
        public let owner: Owner
    }

    private var entries: [String: Entry] = [:]
    public var fallbackHandler: ComponentFallbackHandler
    /// Told after a namespace is unregistered, so holders of its live components can let them go (see
    /// `addUnregisterObserver`).
    private var unregisterObservers: [(token: Int, observe: (Entry) -> Void)] = []
    private var nextObserverToken = 0
    /// Wraps every component created (factory or fallback), e.g. to trace each call into it (`hubhost events`).
    public var componentDecorator: ((Component, ComponentSource, ComponentIdentifier) -> Component)?

    public init(fallbackHandler: ComponentFallbackHandler) { self.fallbackHandler = fallbackHandler }

    /// Registers `factory` for `namespace`. A taken namespace is refused and the first registration keeps it.
    /// - Throws: `RegistryError` naming both owners.
    public func register(_ factory: ComponentFactory, forNamespace namespace: String, owner: Owner) throws {
        if let reason = RegisteredName.problem(namespace)
            ?? (namespace.utf8.contains(UInt8(ascii: ":")) ? "it holds ':' (a component id is namespace:name)" : nil)
        {
            throw RegistryError.invalidNamespace(namespace, claimant: owner, reason: reason)
        }
        if let existing = entries[namespace] {
            throw RegistryError.namespaceTaken(namespace: namespace, owner: existing.owner, claimant: owner)
        }
        entries[namespace] = Entry(namespace: namespace, factory: factory, owner: owner)
    }

    /// Frees `namespace`; an unknown namespace is a no-op. With `owner`, only that owner's entry is removed.
    @discardableResult
    public func unregister(namespace: String, owner: Owner? = nil) -> Entry? {
        guard let entry = entries[namespace], owner == nil || entry.owner == owner else { return nil }
        entries[namespace] = nil
        // By token, so an observer removed by an earlier one's call is not called.
        for token in unregisterObservers.map(\.token) {
            unregisterObservers.first { $0.token == token }?.observe(entry)
        }
        return entry
    }

    /// Tells `observer` of every unregistration, in the order observers were added, until
    /// `removeUnregisterObserver` is called with the token returned. An object that keeps this registry and
    /// lives shorter than it (a reuse pool, a sizing cache) captures itself `unowned(unsafe)` and removes its
    /// observer in `deinit`. The registry then holds no reference to it, not even a weak one: an object with weak
    /// references takes the runtime's slow path on every `unowned` read of it, and a reuse pool's wrappers read
    /// theirs on every configure (3% of a 100k-component render).
    @discardableResult
    public func addUnregisterObserver(_ observer: @escaping (Entry) -> Void) -> Int {
        nextObserverToken += 1
        unregisterObservers.append((nextObserverToken, observer))
        return nextObserverToken
    }

    public func removeUnregisterObserver(_ token: Int) { unregisterObservers.removeAll { $0.token == token } }

    /// Observers added with `addUnregisterObserver` and not yet removed.
    public var unregisterObserverCount: Int { unregisterObservers.count }

    /// Revokes every namespace `owner` registered; returns them.
    @discardableResult
    public func unregisterAll(ownedBy owner: Owner) -> [Entry] {
        let owned = entries.values.filter { $0.owner == owner }.sorted { $0.namespace < $1.namespace }
        for entry in owned { unregister(namespace: entry.namespace, owner: owner) }
        return owned
    }

    public func entry(forNamespace namespace: String) -> Entry? { entries[namespace] }

    /// Every registration, sorted by namespace.
    public var allEntries: [Entry] { entries.values.sorted { $0.namespace < $1.namespace } }

    /// The component for `model`: its namespace's factory, else the fallback for its category. Never fails.
    public func createComponent(for model: ComponentModel) -> (component: Component, source: ComponentSource) {
        createComponent(identifier: model.componentIdentifier, category: model.componentCategory)
    }

    public func createComponent(identifier: ComponentIdentifier, category: String)
        -> (component: Component, source: ComponentSource)
    {
        let made: (component: Component, source: ComponentSource)
        if let entry = entries[identifier.namespace],
            let component = entry.factory.createComponent(forName: identifier.name)
        {
            made = (component, .factory(namespace: entry.namespace, owner: entry.owner))
        } else {
            made = (fallbackHandler.createFallbackComponent(forCategory: category), .fallback(category: category))
        }
        guard let componentDecorator else { return made }
        return (componentDecorator(made.component, made.source, identifier), made.source)
    }
}
