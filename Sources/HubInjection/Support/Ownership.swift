import HubCore

/// One registration as listings show it (`hubhost list-services`).
public struct RegistrationInfo: Sendable, Equatable {
    public let key: ServiceKey
    public let owner: Owner
    /// "factory", "shared (weak)", "instance", "singleton", "normal", "provider", …
    public let scope: String
    /// Instances made from this registration that are alive now (cached or tracked weakly).
    public let liveInstances: Int
    /// The interface version, for services; 0 where versions do not apply.
    public let version: UInt32

    public init(key: ServiceKey, owner: Owner, scope: String, liveInstances: Int, version: UInt32 = 0) {
        self.key = key
        self.owner = owner
        self.scope = scope
        self.liveInstances = liveInstances
        self.version = version
    }
}

/// An instance that was still alive after its owner was revoked. Its code may live in an image the host is about
/// to unload, so it is reported, never silently forgotten.
public struct Survivor: Sendable, Equatable, CustomStringConvertible {
    public let key: ServiceKey
    public let owner: Owner
    /// The instance's dynamic type, or a description for C contexts.
    public let what: String
    public init(key: ServiceKey, owner: Owner, what: String) {
        self.key = key
        self.owner = owner
        self.what = what
    }
    public var description: String { "\(key) (\(what)) from \(owner) is still alive after its owner was revoked" }
}

/// What `revokeAll(ownedBy:)` removed.
public struct Revocation: Sendable, Equatable {
    public let owner: Owner
    public var keys: [ServiceKey]
    /// Instances still referenced elsewhere at the moment of revocation.
    public var survivors: [Survivor]
    public init(owner: Owner, keys: [ServiceKey] = [], survivors: [Survivor] = []) {
        self.owner = owner
        self.keys = keys
        self.survivors = survivors
    }
    public var isEmpty: Bool { keys.isEmpty }
}

/// A change consumers can observe (OSGi's ServiceListener, which none of the Swift anchors has).
public enum RegistrationChange: Sendable, Equatable {
    case registered(ServiceKey, owner: Owner)
    case removed(ServiceKey, owner: Owner)
}

/// Something that holds owned registrations: the locator, the injector, the C service registry.
public protocol OwnedContainer: AnyObject {
    /// Removes everything `owner` registered and every instance made from it, atomically (no lookup between
    /// sees half of it), then tells observers.
    @discardableResult func revokeAll(ownedBy owner: Owner) -> Revocation
    /// Every registration, sorted by key.
    var registrations: [RegistrationInfo] { get }
    /// Instances alive now whose owner was revoked.
    var survivors: [Survivor] { get }
    /// Calls `handler` after each change until the token is cancelled or released.
    func observe(_ handler: @escaping (RegistrationChange) -> Void) -> ObservationToken
}

/// Keeps an observer registered while it is alive; `cancel()` or releasing it removes the observer.
public final class ObservationToken: @unchecked Sendable {
    private var onCancel: (() -> Void)?
    public init(onCancel: @escaping () -> Void) { self.onCancel = onCancel }
    public func cancel() {
        onCancel?()
        onCancel = nil
    }
    deinit { cancel() }
}

/// The observer list shared by the containers. Observers are called outside the container's lock so they may
/// look things up again.
public final class ChangeObservers: @unchecked Sendable {
    private let lock = RecursiveLock()
    private var handlers: [Int: (RegistrationChange) -> Void] = [:]
    private var nextID = 0

    public init() {}

    public func add(_ handler: @escaping (RegistrationChange) -> Void) -> ObservationToken {
        let id = lock.withLock { () -> Int in
            nextID += 1
            handlers[nextID] = handler
            return nextID
        }
        return ObservationToken { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.handlers[id] = nil }
        }
    }

    public func notify(_ changes: [RegistrationChange]) {
        guard !changes.isEmpty else { return }
        let current = lock.withLock { handlers.sorted { $0.key < $1.key }.map(\.value) }
        for change in changes { for handler in current { handler(change) } }
    }
}

/// Weak references to the class instances a container made, by key and owner, so listings can count live
/// instances and, once an owner is revoked, report the ones that are still alive (their code may be about to be
/// unmapped).
final class SurvivorLedger: @unchecked Sendable {
    private struct Entry {
        let key: ServiceKey
        let owner: Owner
        let what: String
        weak var object: AnyObject?
    }
    private struct Slot: Hashable {
        let object: ObjectIdentifier
        let key: ServiceKey
    }
    private let lock = RecursiveLock()
    /// By object and key, so watching is O(1) and an object made twice for one key is watched once.
    private var entries: [Slot: Entry] = [:]
    private var revokedOwners: Set<Owner> = []
    private var watchesSincePrune = 0

    /// Starts watching `value` weakly if it is a class instance (values are copies and cannot dangle).
    func watch(_ value: Any, key: ServiceKey, owner: Owner) {
        guard let reference = Self.reference(value) else { return }
        let slot = Slot(object: ObjectIdentifier(reference), key: key)
        lock.withLock {
            watchesSincePrune += 1
            if watchesSincePrune >= 1024 {
                entries = entries.filter { $0.value.object != nil }
                watchesSincePrune = 0
            }
            // A dead entry at the same address belonged to an earlier object: replace it.
            if let existing = entries[slot], existing.object === reference { return }
            entries[slot] = Entry(
                key: key, owner: owner, what: String(reflecting: type(of: reference)), object: reference)
        }
    }

    /// From now on, live instances of `owner` are survivors.
    func markRevoked(_ owner: Owner) { lock.withLock { _ = revokedOwners.insert(owner) } }

    /// Live instances whose owner was revoked (all revoked owners, or one), sorted.
    func survivors(ownedBy owner: Owner? = nil) -> [Survivor] {
        lock.withLock {
            entries = entries.filter { $0.value.object != nil }
            return entries.values.filter { revokedOwners.contains($0.owner) && (owner == nil || $0.owner == owner) }
                .map { Survivor(key: $0.key, owner: $0.owner, what: $0.what) }
                .sorted { $0.description < $1.description }
        }
    }

    /// The owner of the registration `object` was made from, while it is alive.
    func owner(of object: AnyObject) -> (key: ServiceKey, owner: Owner)? {
        lock.withLock {
            entries.first { $0.key.object == ObjectIdentifier(object) && $0.value.object === object }
                .map { ($0.value.key, $0.value.owner) }
        }
    }

    /// Live watched instances made for `key` by `owner`.
    func liveCount(key: ServiceKey, owner: Owner) -> Int {
        lock.withLock { entries.values.filter { $0.key == key && $0.owner == owner && $0.object != nil }.count }
    }

    /// A class reference, or nil for values.
    static func reference(_ value: Any) -> AnyObject? {
        guard type(of: value) is AnyClass else { return nil }
        return value as AnyObject
    }
}
