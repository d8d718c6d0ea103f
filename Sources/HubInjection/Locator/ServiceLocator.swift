import FoundationEssentials
import HubCore

/// A service locator with HIPInstanceLocator's semantics, plus an owner on every registration.
///
/// - `registerFactory` registers a lazy factory: it runs on the first get, the result is cached, then the
///   injector for the same key runs once. Later gets return the cached instance and never inject again.
/// - `register(_:sharedInstance:)` stores a class instance **weakly**; no injector runs on it.
/// - Factories and shared instances share one table: a second registration for a taken key is refused
///   (`triedToRegisterTooManyFactories`, `false`) and the first one is kept. Injectors have their own table.
/// - A missing key is an error value (`resolve`) or nil plus `errorCallback` (`getInstanceOf`), never a crash.
///
/// # Threads, and factories that call back into the locator
/// One recursive lock covers every table access, and factories, injectors and assembly blocks run while it is
/// held (as in HIPInstanceLocator); `errorCallback` and observers are called after it is released, except for
/// registrations made inside an assembly block. Consequences, all tested:
/// - a factory runs at most once however many threads ask at the same time (no double construction);
/// - a factory or injector may get other keys from the same locator on its own thread (the lock is recursive,
///   no deadlock); asking for the key it is building is reported as `dependencyCycle` (no stack overflow);
/// - a factory must not wait for *another* thread that uses this locator: that thread waits for the lock the
///   factory holds. Hand such work over after the factory returns.
/// - `revokeAll(ownedBy:)` takes the same lock, so a lookup sees all of an owner's registrations or none.
public final class ServiceLocator: OwnedContainer, @unchecked Sendable {
    public typealias ErrorCallback = @Sendable (LocatorError) -> Void

    @usableFromInline let lock = RecursiveLock()
    private let errorCallback: ErrorCallback
    /// One table for factories and shared instances, by key; `typed` indexes the same entries by metatype so a
    /// typed get skips building the key string.
    private var entries: [ServiceKey: LocatorEntry] = [:]
    @usableFromInline var typed: [ObjectIdentifier: LocatorEntry] = [:]
    private var injectors: [ServiceKey: InjectorEntry] = [:]
    /// Keys whose factories are running on the (single, locked) construction path, outermost first.
    /// A cycle found while the current outermost construction runs (cleared when it ends).
    private var cycleFound: [ServiceKey]?
    private var constructing: [ServiceKey] = []
    /// The owner registrations made inside `assemble` default to.
    private var assemblyOwner: Owner?
    private let observers = ChangeObservers()
    private let ledger = SurvivorLedger()

    /// - Parameter errorCallback: told about every error. The default writes each one to stderr (a missing key
    ///   must not pass silently), where HIPInstanceLocator's asserts: a plugin host must not trap on a plugin's
    ///   missing registration.
    public init(errorCallback: @escaping ErrorCallback = ServiceLocator.reportToStandardError) {
        self.errorCallback = errorCallback
    }

    /// The default error callback: one line on stderr per error, "hubhost: locator: no dependency registered for …".
    public static let reportToStandardError: ErrorCallback = { error in
        StandardError.writeLine("hubhost: locator: \(error)")
    }

    /// Runs `assemblyBlock` right after initialisation.
    public convenience init(
        errorCallback: @escaping ErrorCallback = ServiceLocator.reportToStandardError,
        assemblyBlock: (ServiceLocator) -> Void
    ) {
        self.init(errorCallback: errorCallback)
        assemblyBlock(self)
    }

    // MARK: Registering

    /// Registers a lazy factory for `key`. Returns false, reporting `triedToRegisterTooManyFactories`, when the
    /// key is taken by a factory or a shared instance.
    @discardableResult
    public func registerFactory<T>(
        _ key: T.Type, name: String? = nil, owner: Owner? = nil,
        factory: @escaping (ServiceLocator) -> T
    ) -> Bool {
        let entry = Slot<T>(key: ServiceKey(T.self, name: name), owner: owner ?? currentOwner, factory: factory)
        return insert(entry, typedAs: name == nil ? ObjectIdentifier(T.self) : nil)
    }

    /// Registers a lazy factory under a string key (for keys that are not Swift types, e.g. plugin interface ids).
    @discardableResult
    public func registerFactory(
        forKey key: ServiceKey, owner: Owner? = nil,
        factory: @escaping (ServiceLocator) -> Any
    ) -> Bool {
        insert(Slot<Any>(key: key, owner: owner ?? currentOwner, factory: factory), typedAs: nil)
    }

    /// Registers an existing instance, held weakly: its owner keeps it alive. Same duplicate rule as factories.
    @discardableResult
    public func register<T: AnyObject>(
        _ key: T.Type, name: String? = nil, sharedInstance: T,
        owner: Owner? = nil
    ) -> Bool {
        let entry = Slot<T>(key: ServiceKey(T.self, name: name), owner: owner ?? currentOwner, shared: sharedInstance)
        guard insert(entry, typedAs: name == nil ? ObjectIdentifier(T.self) : nil) else { return false }
        ledger.watch(sharedInstance, key: entry.key, owner: entry.owner)
        return true
    }

    /// Registers the injector for instances of `key`: it runs once on each instance this locator creates for
    /// that key, and on outside instances passed to `applyInjector`. A second injector is refused.
    @discardableResult
    public func injectInstancesOf<T>(
        _ key: T.Type, owner: Owner? = nil,
        injector: @escaping (ServiceLocator, T) -> Void
    ) -> Bool {
        let serviceKey = ServiceKey(T.self)
        let claimant = owner ?? currentOwner
        let refused: LocatorError? = lock.withLock {
            if let existing = injectors[serviceKey] {
                return .triedToRegisterTooManyInjectors(serviceKey, owner: existing.owner, claimant: claimant)
            }
            injectors[serviceKey] = InjectorEntry(owner: claimant) { locator, value in
                guard let typedValue = value as? T else { return false }
                injector(locator, typedValue)
                return true
            }
            return nil
        }
        if let refused {
            report(refused)
            return false
        }
        return true
    }

    /// Runs each assembly's block in order. Registrations inside an assembly default to its owner.
    public func assemble(_ assemblies: LocatorAssembly...) { assemble(assemblies) }

    public func assemble(_ assemblies: [LocatorAssembly]) {
        for assembly in assemblies {
            lock.withLock {
                let outer = assemblyOwner
                assemblyOwner = assembly.owner
                defer { assemblyOwner = outer }
                assembly.assemblyBlock(self)
            }
        }
    }

    // MARK: Getting

    /// The instance for `T`, or the error. Never traps.
    @inlinable
    public func resolve<T>(_ type: T.Type = T.self, name: String? = nil) -> Result<T, LocatorError> {
        // Fast path, inlined into the caller so `Slot<T>` is a known type: a typed entry already built.
        if name == nil {
            lock.lock()
            if let entry = typed[ObjectIdentifier(T.self)], let value = unsafeDowncast(entry, to: Slot<T>.self).value {
                lock.unlock()
                return .success(value)
            }
            lock.unlock()
        }
        return resolveUncached(type, name: name)
    }

    @usableFromInline
    func resolveUncached<T>(_ type: T.Type, name: String?) -> Result<T, LocatorError> {
        lock.withLock { () -> Result<T, LocatorError> in
            if name == nil, let entry = typed[ObjectIdentifier(T.self)] {
                return resolveSlow(unsafeDowncast(entry, to: Slot<T>.self))
            }
            let key = ServiceKey(T.self, name: name)
            guard let entry = entries[key] else { return .failure(.noDependencyRegistered(key)) }
            return entry.resolveAny(in: self).flatMap { value in
                if let typedValue = value as? T { return .success(typedValue) }
                return .failure(
                    .storedDependencyWasNotOfExpectedType(
                        key, expected: String(reflecting: T.self), got: String(reflecting: Swift.type(of: value))))
            }
        }.mapError { error in
            report(error)
            return error
        }
    }

    /// The instance under a string key (HIPInstanceLocator's `objc_getInstanceOfClass`, keyed by id).
    public func resolve(key: ServiceKey) -> Result<Any, LocatorError> {
        lock.withLock { () -> Result<Any, LocatorError> in
            guard let entry = entries[key] else { return .failure(.noDependencyRegistered(key)) }
            return entry.resolveAny(in: self)
        }.mapError { error in
            report(error)
            return error
        }
    }

    /// HIPInstanceLocator's `getInstanceOf`: the instance, or nil after telling `errorCallback`.
    @inlinable
    public func getInstanceOf<T>(_ type: T.Type, name: String? = nil) -> T? {
        try? resolve(type, name: name).get()
    }

    /// HIPInstanceLocator's `implicitGet`: the type comes from where the result goes.
    @inlinable
    public func implicitGet<T>() -> T? { getInstanceOf(T.self) }

    /// Applies the injector registered for the static type of `instance`. False (and no error) when there is none.
    @discardableResult
    public func applyInjector<T>(_ instance: T) -> Bool {
        applyInjector(instance, key: ServiceKey(T.self))
    }

    /// Applies the injector registered under `key` (HIPInstanceLocator's `objc_applyInjector`).
    @discardableResult
    public func applyInjector(_ instance: Any, key: ServiceKey) -> Bool {
        lock.withLock {
            guard let injector = injectors[key] else { return false }
            return injector.apply(self, instance)
        }
    }

    // MARK: Ownership

    @discardableResult
    public func revokeAll(ownedBy owner: Owner) -> Revocation {
        var revocation = Revocation(owner: owner)
        lock.withLock {
            let owned = entries.values.filter { $0.owner == owner }
            for entry in owned {
                entries[entry.key] = nil
                if let id = entry.typedID { typed[id] = nil }
                entry.forget()
                revocation.keys.append(entry.key)
            }
            for (key, injector) in injectors where injector.owner == owner {
                injectors[key] = nil
                revocation.keys.append(key)
            }
        }
        revocation.keys.sort()
        ledger.markRevoked(owner)
        revocation.survivors = ledger.survivors(ownedBy: owner)
        observers.notify(revocation.keys.map { .removed($0, owner: owner) })
        return revocation
    }

    public var registrations: [RegistrationInfo] {
        lock.withLock {
            entries.values.map { entry in
                RegistrationInfo(
                    key: entry.key, owner: entry.owner, scope: entry.scopeDescription,
                    liveInstances: entry.cachedValue == nil ? 0 : 1)
            }
                + injectors.map { key, injector in
                    RegistrationInfo(key: key, owner: injector.owner, scope: "injector", liveInstances: 0)
                }
        }.sorted { ($0.key, $0.scope) < ($1.key, $1.scope) }
    }

    public var survivors: [Survivor] { ledger.survivors() }

    /// The key and owner of the registration a live class instance was made from by this locator (nil for objects
    /// it did not make, and once they are gone).
    public func origin(of object: AnyObject) -> (key: ServiceKey, owner: Owner)? { ledger.owner(of: object) }

    public func observe(_ handler: @escaping (RegistrationChange) -> Void) -> ObservationToken {
        observers.add(handler)
    }

    // MARK: Internals

    private var currentOwner: Owner { lock.withLock { assemblyOwner ?? .host } }

    private func insert(_ entry: LocatorEntry, typedAs id: ObjectIdentifier?) -> Bool {
        let refused: LocatorError? = lock.withLock {
            if let existing = entries[entry.key] {
                return .triedToRegisterTooManyFactories(entry.key, owner: existing.owner, claimant: entry.owner)
            }
            entries[entry.key] = entry
            if let id {
                entry.typedID = id
                typed[id] = entry
            }
            return nil
        }
        if let refused {
            report(refused)
            return false
        }
        observers.notify([.registered(entry.key, owner: entry.owner)])
        return true
    }

    private func resolveSlow<T>(_ slot: Slot<T>) -> Result<T, LocatorError> {
        slot.resolveAny(in: self).flatMap { value in
            if let typedValue = slot.value ?? (value as? T) { return .success(typedValue) }
            return .failure(
                .factoryDidNotReturnExpectedType(
                    slot.key, expected: String(reflecting: T.self), got: String(reflecting: Swift.type(of: value))))
        }
    }

    /// Runs `entry`'s factory (the lock is held), caches the result, then runs the key's injector once.
    fileprivate func construct(_ entry: LocatorEntry, _ build: () -> Any) -> Result<Any, LocatorError> {
        if let start = constructing.firstIndex(of: entry.key) {
            let cycle = Array(constructing[start...]) + [entry.key]
            cycleFound = cycleFound ?? cycle
            return .failure(.dependencyCycle(cycle))
        }
        constructing.append(entry.key)
        let value = build()
        constructing.removeLast()
        // A factory whose dependencies ran into a cycle built its object without them: that half-built object is
        // neither cached nor returned; the caller gets the cycle as its error.
        if let cycle = cycleFound, cycle.contains(entry.key) {
            if constructing.isEmpty { cycleFound = nil }
            return .failure(.dependencyCycle(cycle))
        }
        if constructing.isEmpty { cycleFound = nil }
        entry.cache(value)
        ledger.watch(value, key: entry.key, owner: entry.owner)
        _ = injectors[entry.key]?.apply(self, value)
        return .success(value)
    }

    private func report(_ error: LocatorError) {
        errorCallback(error)
    }
}

/// A group of registrations applied in order with `assemble` (HIPInstanceLocatorAssembly), optionally owned.
public struct LocatorAssembly {
    public let owner: Owner?
    public let assemblyBlock: (ServiceLocator) -> Void
    public init(owner: Owner? = nil, assemblyBlock: @escaping (ServiceLocator) -> Void) {
        self.owner = owner
        self.assemblyBlock = assemblyBlock
    }
}

// MARK: - Entries

/// A registration: a factory (lazy, then cached) or a weakly held shared instance.
@usableFromInline
class LocatorEntry {
    let key: ServiceKey
    let owner: Owner
    var typedID: ObjectIdentifier?
    init(key: ServiceKey, owner: Owner) {
        self.key = key
        self.owner = owner
    }
    func resolveAny(in locator: ServiceLocator) -> Result<Any, LocatorError> { fatalError("abstract") }
    var cachedValue: Any? { nil }
    func cache(_ value: Any) {}
    func forget() {}
    var scopeDescription: String { "" }
}

/// The typed entry; the typed fast path reads `value` without a dynamic cast.
@usableFromInline
final class Slot<T>: LocatorEntry {
    private var factory: ((ServiceLocator) -> T)?
    @usableFromInline var value: T?
    private weak var shared: AnyObject?
    private let isShared: Bool

    init(key: ServiceKey, owner: Owner, factory: @escaping (ServiceLocator) -> T) {
        self.factory = factory
        self.isShared = false
        super.init(key: key, owner: owner)
    }

    init(key: ServiceKey, owner: Owner, shared: AnyObject) {
        self.shared = shared
        self.isShared = true
        super.init(key: key, owner: owner)
    }

    var sharedValue: T? { shared as? T }

    override func resolveAny(in locator: ServiceLocator) -> Result<Any, LocatorError> {
        if let value { return .success(value) }
        if isShared {
            guard let object = shared else { return .failure(.sharedInstanceWasNotOfExpectedType(key, released: true)) }
            return .success(object)
        }
        guard let factory else { return .failure(.noDependencyRegistered(key)) }
        return locator.construct(self) { factory(locator) }
    }

    override var cachedValue: Any? { isShared ? shared : value }
    override func cache(_ value: Any) { self.value = value as? T }
    override func forget() {
        value = nil
        factory = nil
    }
    override var scopeDescription: String {
        isShared ? "shared (weak)" : (value == nil ? "factory (lazy)" : "factory (cached)")
    }
}

struct InjectorEntry {
    let owner: Owner
    let apply: (ServiceLocator, Any) -> Bool
}
