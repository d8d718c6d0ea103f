import HubCore
import Synchronization

/// An injector with Objection's semantics (and motion-objection's conveniences), plus owners.
///
/// - Lookup: the bindings of the injector's modules (a later module's binding of a key shadows an earlier
///   one, and the earlier one comes back when the later one's owner is revoked), then `Injectable` classes built
///   on demand in their declared scope (Objection's automatic registration).
/// - Class entries are built with their custom initializer (defaults replaced position by position by the
///   caller's arguments) or `init()`, cached first when they are singletons, then their declared dependencies
///   are set and their `awoken` hooks run in order. Providers, blocks and bound instances are neither injected
///   nor awoken.
/// - Singletons are per injector. Caching a singleton before its dependencies are set is what lets singletons
///   that need each other resolve; any other cycle is `InjectionError.cycle` naming it.
/// - `revokeAll(ownedBy:)` removes an owner's modules and bindings and the singletons built from them (and the
///   singletons built with those, which would otherwise keep serving a revoked provider), in one locked step.
///
/// # Threads
/// One recursive lock per injector; providers, initializers and hooks run under it (as under Objection's
/// `@synchronized(injector)`), so a singleton is built once, and a provider may get other keys on its thread.
public final class Injector: OwnedContainer, @unchecked Sendable {
    private struct Frame {
        let key: ServiceKey
        var cachedSingleton = false
        var dependencies: Set<ServiceKey> = []
    }

    @usableFromInline final class Box<T> {
        @usableFromInline let value: T
        init(_ value: T) { self.value = value }
    }

    @usableFromInline let lock = RecursiveLock()
    private var moduleList: [Module] = []
    /// The modules in the order they were installed (a revoked owner's are gone).
    public var modules: [Module] { lock.withLock { moduleList } }
    /// Per key, the bindings of the modules in order; the last one serves.
    private var bindings: [ServiceKey: [Binding]] = [:]
    /// `Injectable` classes built on demand (Objection's automatic registration), owned by the host.
    private var automatic: [ServiceKey: Binding] = [:]
    private var singletons: [ServiceKey: Any] = [:]
    /// Typed copies of cached singletons and bound instances, for gets without a name or arguments.
    @usableFromInline var fast: [ObjectIdentifier: AnyObject] = [:]
    /// For each key, the singletons that were built while resolving it (they hold it, directly or not).
    private var dependents: [ServiceKey: Set<ServiceKey>] = [:]
    private var stack: [Frame] = []
    private let observers = ChangeObservers()
    private let ledger = SurvivorLedger()
    /// Moves on whenever a cached value may have changed (a module installed, an owner revoked): a caller that keeps
    /// what `resolveForReuse` called reusable may go on using it while this has not moved.
    public let generation = Generation()

    /// A counter any thread may read without the injector's lock.
    public final class Generation: Sendable {
        private let counter = Atomic<Int>(0)
        public var value: Int { counter.load(ordering: .acquiring) }
        func advance() { counter.wrappingAdd(1, ordering: .releasing) }
    }

    /// Builds an injector from `modules` (configured in order) and instantiates their eager singletons.
    /// - Throws: the first binding error of a module, or an eager singleton that is not a singleton.
    public init(modules: [Module] = []) throws {
        try install(modules)
    }

    public convenience init(_ modules: Module...) throws { try self.init(modules: modules) }

    // MARK: Modules

    /// Adds `modules` to this injector (a plugin's module when it loads), then instantiates their eager singletons.
    public func install(_ modules: [Module]) throws {
        var added: [RegistrationChange] = []
        try lock.withLock {
            var binders: [Binder] = []
            for module in modules {
                let binder = Binder(owner: module.owner)
                module.configure(binder)
                if let error = binder.errors.first { throw error }
                binders.append(binder)
            }
            for (module, binder) in zip(modules, binders) {
                moduleList.append(module)
                for key in binder.order { revokedKeys[key] = nil }
                for key in binder.order {
                    bindings[key, default: []].append(binder.bindings[key]!)
                    invalidate([key])
                    added.append(.registered(key, owner: binder.owner))
                }
            }
            if bindings[Self.objectFactoryKey] == nil {
                bindings[Self.objectFactoryKey] = [
                    Binding(
                        key: Self.objectFactoryKey, owner: .host,
                        kind: .provider(.singleton) { injector, _ in ObjectFactory(injector: injector) })
                ]
            }
            do {
                for key in binders.flatMap(\.eagerSingletons) {
                    guard scope(of: key) == .singleton else { throw InjectionError.eagerSingletonNotSingleton(key) }
                    _ = try resolve(key, arguments: [], buildable: nil)
                }
            } catch {
                // All or nothing: a module whose eager singleton fails leaves no binding behind.
                let installed = Set(modules.map { ObjectIdentifier($0) })
                moduleList.removeAll { installed.contains(ObjectIdentifier($0)) }
                for change in added {
                    guard case .registered(let key, _) = change else { continue }
                    bindings[key]?.removeLast()
                    if bindings[key]?.isEmpty == true { bindings[key] = nil }
                }
                invalidate(added.compactMap { if case .registered(let key, _) = $0 { return key } else { return nil } })
                throw error
            }
        }
        observers.notify(added)
    }

    public func install(_ modules: Module...) throws { try install(modules) }

    /// Made once: a key names its type with `String(reflecting:)`, which demangles (a tenth of a millisecond).
    private static let objectFactoryKey = ServiceKey(ObjectFactory.self)

    /// A new injector with this one's modules plus `modules` (Objection's `withModules:`). Nothing cached is
    /// shared with this injector; every module is configured again.
    public func withModules(_ modules: [Module]) throws -> Injector {
        adopt(try Injector(modules: self.modules + modules))
    }

    /// Injectors derived from this one (`withModules`, `withoutModules`), held weakly: a revocation reaches them
    /// too, so none keeps serving a binding whose plugin unloaded.
    private var derived: [DerivedInjector] = []
    /// Keys whose last binding an unload revoked, with that owner (for the error a later `get` gets).
    private var revokedKeys: [ServiceKey: Owner] = [:]
    private final class DerivedInjector {
        weak var injector: Injector?
        init(_ injector: Injector) { self.injector = injector }
    }

    private func adopt(_ injector: Injector) -> Injector {
        lock.withLock {
            derived.removeAll { $0.injector == nil }
            derived.append(DerivedInjector(injector))
        }
        return injector
    }

    public func withModules(_ modules: Module...) throws -> Injector { try withModules(modules) }

    /// A new injector without the modules of the given classes (Objection's `withoutModuleOfTypes:`).
    public func withoutModules(ofTypes types: [Module.Type]) throws -> Injector {
        let removed = Set(types.map { ObjectIdentifier($0) })
        return adopt(try Injector(modules: modules.filter { !removed.contains(ObjectIdentifier(type(of: $0))) }))
    }

    public func withoutModules(ofType type: Module.Type) throws -> Injector { try withoutModules(ofTypes: [type]) }

    /// Whether a module binds `T` (and `name`).
    public func hasBinding<T>(for type: T.Type, named name: String? = nil) -> Bool {
        hasBinding(forKey: ServiceKey(T.self, name: name))
    }

    public func hasBinding(forKey key: ServiceKey) -> Bool { lock.withLock { bindings[key]?.isEmpty == false } }

    // MARK: Getting

    /// The object for `T` (and `name`), built with `arguments` when it is built now.
    @inlinable
    public func get<T>(_ type: T.Type = T.self, named name: String? = nil, arguments: [Any] = []) throws -> T {
        // Fast path, inlined into the caller so `Box<T>` is a known type: a cached singleton or bound instance.
        if name == nil, arguments.isEmpty {
            lock.lock()
            if let box = fast[ObjectIdentifier(T.self)] {
                lock.unlock()
                return unsafeDowncast(box, to: Box<T>.self).value
            }
            lock.unlock()
        }
        return try getUncached(type, named: name, arguments: arguments)
    }

    @usableFromInline
    func getUncached<T>(_ type: T.Type, named name: String?, arguments: [Any]) throws -> T {
        try lock.withLock {
            let key = ServiceKey(T.self, name: name)
            let value = try resolve(
                key, arguments: arguments, buildable: name == nil ? T.self as? Injectable.Type : nil)
            guard let value else { throw InjectionError.providerFailed(key, message: "the provider returned nil") }
            guard let typed = value as? T else {
                throw InjectionError.wrongType(
                    key: key, expected: String(reflecting: T.self),
                    got: String(reflecting: Swift.type(of: value)))
            }
            if name == nil, arguments.isEmpty, isCached(key) { fast[ObjectIdentifier(T.self)] = Box(typed) }
            return typed
        }
    }

    /// `get` with variadic arguments (`getObjectWithArgs:`).
    public func get<T>(_ type: T.Type, named name: String? = nil, with first: Any, _ rest: Any...) throws -> T {
        try get(type, named: name, arguments: [first] + rest)
    }

    /// The object bound under a string key; nil only when a provider returned nil.
    public func get(key: ServiceKey, arguments: [Any] = []) throws -> Any? {
        try lock.withLock { try resolve(key, arguments: arguments, buildable: nil) }
    }

    /// `get(key:)`, and whether the value is a cached singleton or a bound instance, which a caller may keep and
    /// hand out again until `generation` moves.
    public func resolveForReuse(key: ServiceKey, arguments: [Any] = []) throws -> (value: Any?, reusable: Bool) {
        try lock.withLock {
            let value = try resolve(key, arguments: arguments, buildable: nil)
            return (value, arguments.isEmpty && isCached(key))
        }
    }

    /// Builds `T` with an ad-hoc initializer (`getObject:initializer:argumentList:`), ignoring its declared one.
    public func get<T: Injectable>(
        _ type: T.Type, initializer name: String, arguments: [Any] = [],
        _ make: @escaping (Arguments) throws -> T
    ) throws -> T {
        try lock.withLock {
            let key = ServiceKey(T.self)
            let adHoc = Composition.Initializer(name: name, defaults: []) { try make($0) }
            let object = try build(
                key: key, type: T.self, owner: .host, scopeOverride: .normal, check: nil,
                arguments: arguments, initializer: adHoc)
            return object as! T
        }
    }

    /// `injector[T.self]`: the object, or nil when it cannot be built.
    public subscript<T>(type: T.Type) -> T? { try? get(type) }

    /// Sets the declared dependencies of an object made elsewhere and runs its `awoken` hooks
    /// (`injectDependencies:`). Objects that are not `Injectable` have nothing declared.
    public func injectDependencies(_ object: AnyObject) throws {
        guard let type = Swift.type(of: object) as? Injectable.Type else { return }
        try lock.withLock { try inject(object, composition: type.composition) }
    }

    // MARK: The default injector

    private static let defaultLock = RecursiveLock()
    nonisolated(unsafe) private static var defaultStorage: Injector?

    /// The process-wide default injector (`JSObjection.defaultInjector`); nil until set.
    public static var defaultInjector: Injector? {
        get { defaultLock.withLock { defaultStorage } }
        set { defaultLock.withLock { defaultStorage = newValue } }
    }

    // MARK: Ownership

    @discardableResult
    public func revokeAll(ownedBy owner: Owner) -> Revocation {
        var revocation = Revocation(owner: owner)
        lock.withLock {
            moduleList.removeAll { $0.owner == owner }
            for (key, stackOfBindings) in bindings where stackOfBindings.contains(where: { $0.owner == owner }) {
                let remaining = stackOfBindings.filter { $0.owner != owner }
                bindings[key] = remaining.isEmpty ? nil : remaining
                revocation.keys.append(key)
                // Remembered so that a later `get` says why the key has no binding (until it is bound again).
                if remaining.isEmpty { revokedKeys[key] = owner }
            }
            invalidate(revocation.keys)
        }
        revocation.keys.sort()
        // Every injector derived from this one loses the owner's bindings too.
        let children = lock.withLock { derived.compactMap(\.injector) }
        for child in children { _ = child.revokeAll(ownedBy: owner) }
        ledger.markRevoked(owner)
        revocation.survivors = ledger.survivors(ownedBy: owner)
        observers.notify(revocation.keys.map { .removed($0, owner: owner) })
        return revocation
    }

    public var registrations: [RegistrationInfo] {
        lock.withLock {
            let all = bindings.values.compactMap(\.last) + automatic.values
            return all.map { binding in
                // Class instances are counted by the ledger; a cached value-type singleton counts once here.
                let cached = singletons[binding.key].map { SurvivorLedger.reference($0) == nil ? 1 : 0 } ?? 0
                return RegistrationInfo(
                    key: binding.key, owner: binding.owner, scope: binding.scopeDescription,
                    liveInstances: cached + ledger.liveCount(key: binding.key, owner: binding.owner))
            }.sorted { $0.key < $1.key }
        }
    }

    public var survivors: [Survivor] { ledger.survivors() }

    /// The key and owner of the registration a live class instance was made from by this injector (nil for objects
    /// it did not make, and once they are gone).
    public func origin(of object: AnyObject) -> (key: ServiceKey, owner: Owner)? { ledger.owner(of: object) }

    public func observe(_ handler: @escaping (RegistrationChange) -> Void) -> ObservationToken {
        observers.add(handler)
    }

    // MARK: Resolution (the lock is held)

    private func binding(for key: ServiceKey, buildable: Injectable.Type?) -> Binding? {
        if let binding = bindings[key]?.last { return binding }
        if let binding = automatic[key] { return binding }
        guard let buildable else { return nil }
        let binding = Binding(key: key, owner: .host, kind: .type(nil, buildable, check: nil))
        automatic[key] = binding
        return binding
    }

    private func scope(of key: ServiceKey) -> Scope? {
        guard let binding = bindings[key]?.last ?? automatic[key] else { return nil }
        switch binding.kind {
        case .instance: return .singleton
        case .provider(let scope, _): return scope
        case .type(let scope, let type, _): return scope ?? type.composition.scope ?? .normal
        }
    }

    private func isCached(_ key: ServiceKey) -> Bool {
        if singletons[key] != nil { return true }
        if case .instance = bindings[key]?.last?.kind { return true }
        return false
    }

    private func resolve(_ key: ServiceKey, arguments: [Any], buildable: Injectable.Type?) throws -> Any? {
        if !stack.isEmpty { stack[stack.count - 1].dependencies.insert(key) }
        if let cached = singletons[key] { return cached }
        guard let binding = binding(for: key, buildable: buildable) else {
            if let owner = revokedKeys[key] { throw InjectionError.revoked(key, owner: owner.displayName) }
            throw InjectionError.noBinding(key)
        }
        switch binding.kind {
        case .instance(let value):
            return value
        case .provider(let scope, let provider):
            try enter(key)
            defer { leave(singleton: scope == .singleton) }
            let value = try provider(self, arguments)
            if let value {
                if scope == .singleton { singletons[key] = value }
                ledger.watch(value, key: key, owner: binding.owner)
            }
            return value
        case .type(let scopeOverride, let type, let check):
            return try build(
                key: key, type: type, owner: binding.owner, scopeOverride: scopeOverride, check: check,
                arguments: arguments, initializer: nil)
        }
    }

    private func build(
        key: ServiceKey, type: Injectable.Type, owner: Owner, scopeOverride: Scope?,
        check: ((Any) -> Bool)?, arguments: [Any],
        initializer adHoc: Composition.Initializer?
    ) throws -> AnyObject {
        let composition = type.composition
        let scope = scopeOverride ?? composition.scope ?? .normal
        try enter(key)
        defer { leave(singleton: scope == .singleton) }
        let object: AnyObject
        if let initializer = adHoc ?? composition.initializer {
            let merged = Arguments.merge(defaults: initializer.defaults, caller: arguments)
            object = try initializer.make(
                Arguments(
                    initializer: "\(String(reflecting: type)).\(initializer.name)",
                    values: merged))
        } else {
            guard arguments.isEmpty else {
                throw InjectionError.noInitializer(type: String(reflecting: type), arguments: arguments.count)
            }
            object = type.init()
        }
        if let check, !check(object) {
            throw InjectionError.doesNotConform(instance: String(reflecting: Swift.type(of: object)), key: key)
        }
        ledger.watch(object, key: key, owner: owner)
        if scope == .singleton {
            // Cached before its dependencies are set: singletons that need each other resolve (Objection).
            singletons[key] = object
            stack[stack.count - 1].cachedSingleton = true
        }
        do {
            try inject(object, composition: composition)
        } catch {
            if scope == .singleton {
                singletons[key] = nil
                // A nested get may have kept the half-built object; it must not be handed out again.
                fast.removeAll()
                generation.advance()
            }
            throw error
        }
        return object
    }

    private func inject(_ object: AnyObject, composition: Composition) throws {
        let typeName = String(reflecting: Swift.type(of: object))
        for dependency in composition.dependencies {
            let value: Any?
            do {
                value = try resolve(dependency.key, arguments: [], buildable: dependency.buildable)
            } catch InjectionError.noBinding(let key) where key == dependency.key {
                throw InjectionError.unboundDependency(property: dependency.property, key: key, in: typeName)
            }
            guard dependency.assign(object, value) else {
                throw InjectionError.wrongType(
                    key: dependency.key, expected: dependency.expectedType,
                    got: value.map { String(reflecting: Swift.type(of: $0)) } ?? "nil")
            }
        }
        for hook in composition.awokenHooks { try hook(object) }
    }

    /// Pushes `key`; refuses a cycle that no cached singleton on the way breaks (it would never end).
    private func enter(_ key: ServiceKey) throws {
        if let start = stack.lastIndex(where: { $0.key == key }),
            !stack[start...].contains(where: \.cachedSingleton)
        {
            throw InjectionError.cycle(stack[start...].map(\.key) + [key])
        }
        stack.append(Frame(key: key))
    }

    private func leave(singleton: Bool) {
        let frame = stack.removeLast()
        if singleton {
            for dependency in frame.dependencies where dependency != frame.key {
                dependents[dependency, default: []].insert(frame.key)
            }
        }
        if !stack.isEmpty { stack[stack.count - 1].dependencies.formUnion(frame.dependencies) }
    }

    /// Drops the cached singletons of `keys` and of every singleton built with them.
    private func invalidate(_ keys: [ServiceKey]) {
        var work = keys
        var seen = Set<ServiceKey>()
        while let key = work.popLast() {
            guard seen.insert(key).inserted else { continue }
            singletons[key] = nil
            work.append(contentsOf: dependents.removeValue(forKey: key) ?? [])
        }
        fast.removeAll()
        generation.advance()
    }
}
