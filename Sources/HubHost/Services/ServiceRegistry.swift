import CHubPlugin
import FoundationEssentials
import HubCore
import HubInjection

#if canImport(Glibc)
    import Glibc
#endif

/// Why a service registration or lookup failed. The messages are what plugins read in their error buffers.
public enum ServiceError: Error, Equatable, CustomStringConvertible {
    case taken(ServiceKey, owner: Owner, claimant: Owner)
    case noProvider(ServiceKey)
    case tooOld(ServiceKey, version: UInt32, wanted: UInt32, owner: Owner)
    case malformed(String)

    public var description: String {
        switch self {
        case .taken(let key, let owner, let claimant):
            return "service \(key) is already provided by \(owner); \(claimant) cannot provide it too"
        case .noProvider(let key):
            return "no provider for \(key)"
        case .tooOld(let key, let version, let wanted, let owner):
            return "\(key) is version \(version) (from \(owner)); \(wanted) was asked"
        case .malformed(let why):
            return why
        }
    }
}

/// One provided service: the C table and context a provider registered, with its key, version and owner.
/// Entries are never reused: a reload registers a new entry, so a stale acquisition can be told apart.
public final class ServiceEntry: @unchecked Sendable {
    public enum State: String, Sendable {
        /// Serving.
        case active
        /// Shadowed by another provider of the same key (only host services can be shadowed).
        case shadowed
        /// Unregistered by a provider that is still loaded: its `release` may still be called.
        case withdrawn
        /// Its owner was revoked (unloaded): its code may be gone, nothing of it is called again.
        case revoked
    }

    public let key: ServiceKey
    public let version: UInt32
    public let owner: Owner
    public let table: UnsafeRawPointer?
    public let context: UnsafeMutableRawPointer?
    let retain: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    let release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    /// A host service a plugin may shadow.
    let shadowable: Bool
    /// Host-owned copies handed to consumers; their addresses identify the entry on release.
    let idCString: UnsafeMutablePointer<CChar>
    let nameCString: UnsafeMutablePointer<CChar>?
    /// Something that must live as long as the entry (the Swift object behind a host service's context).
    let keepAlive: AnyObject?
    public internal(set) var state: State = .active
    /// The providing plugin's `CallRecorder` slot (0: host code), noted around its retain and release.
    var slot: UInt16 = 0
    /// Outstanding acquisitions by consumer.
    public internal(set) var holders: [Owner: Int] = [:]

    init(
        key: ServiceKey, version: UInt32, owner: Owner, table: UnsafeRawPointer?, context: UnsafeMutableRawPointer?,
        retain: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
        release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?, shadowable: Bool, keepAlive: AnyObject?
    ) {
        self.key = key
        self.version = version
        self.owner = owner
        self.table = table
        self.context = context
        self.retain = retain
        self.release = release
        self.shadowable = shadowable
        self.keepAlive = keepAlive
        idCString = strdup(key.id)!
        nameCString = key.name.map { strdup($0)! }
    }

    deinit {
        free(idCString)
        free(nameCString)
    }

    public var holdCount: Int { holders.values.reduce(0, +) }
}

/// The host's one service registry: C services keyed by interface id (+ name), each with an owner and a version,
/// acquired with retain/release. Plugins reach it through the `hub_host` service slots (`ServiceBridge`); the
/// host's own services (image loader, URI opener, logger) are registered here with owner `.host`.
///
/// - One provider per key; a second claim is refused naming the holder — except host services, which a plugin
///   may shadow; the host's provider serves again when the plugin's goes.
/// - `revokeAll(ownedBy:)` (run in the plugin host's unload transaction) removes an owner's services in one
///   step, releases what it had acquired, tells every other plugin's observer, and reports acquisitions of its
///   services that consumers still hold (`survivors`): those consumers hold pointers into unloaded code.
///
/// # Thread safety
/// Locked, but observers (C and Swift) are called outside the lock so they may look services up again. The
/// header makes every service call [main-thread], as the rest of the host is.
public final class ServiceRegistry: OwnedContainer, @unchecked Sendable {
    private let lock = RecursiveLock()
    /// Per key, the providers in registration order; the last one serves, earlier ones are shadowed host services.
    private var providers: [ServiceKey: [ServiceEntry]] = [:]
    /// Entries that left the table while consumers still held them, by the address of their id string.
    private var handedOut: [UnsafeMutableRawPointer: ServiceEntry] = [:]
    private var pluginObservers: [Owner: PluginObserver] = [:]
    private var pluginEventObservers: [Owner: PluginObserver] = [:]
    private let observers = ChangeObservers()
    /// Plugin observer notices held back while a batch of plugins loads and binds its module files (see
    /// `holdingNotices`), in order; nil when none are held.
    private var heldNotices: [(key: ServiceKey, available: Bool, skipping: Owner?)]?

    /// Runs `body` (plugins loading, then their module files binding) and only then tells plugin observers what
    /// became available or went away, in order. An observer told a provider is there can then `inject` what the
    /// provider's module files bind (its eager singletons are made by then); told as each init returned, it found
    /// nothing yet. An "available" notice whose service is gone again by the end is not delivered.
    public func holdingNotices<R>(_ body: () throws -> R) rethrows -> R {
        let outermost = lock.withLock { () -> Bool in
            guard heldNotices == nil else { return false }
            heldNotices = []
            return true
        }
        defer {
            if outermost {
                let notices = lock.withLock { () -> [(key: ServiceKey, available: Bool, skipping: Owner?)] in
                    defer { heldNotices = nil }
                    return heldNotices ?? []
                }
                for notice in notices where !notice.available || provider(of: notice.key) != nil {
                    notify(notice.key, available: notice.available, skipping: notice.skipping)
                }
            }
        }
        return try body()
    }

    /// A plugin's `hub_service_changed_fn`, called only while `isCallable()` says its code is there.
    struct PluginObserver {
        var function: hub_service_changed_fn?
        /// The 1.1 observer: told id, name, version and provider.
        var eventFunction: hub_service_event_fn?
        let userData: UnsafeMutableRawPointer?
        let isCallable: () -> Bool
        /// The observing plugin's `CallRecorder` slot.
        var slot: UInt16 = 0
        var owner: Owner
    }

    public init() {}

    // MARK: Providing

    /// Registers a service. - Throws: `ServiceError.taken` naming the provider that holds the key.
    @discardableResult
    public func register(
        _ key: ServiceKey, version: UInt32, owner: Owner, table: UnsafeRawPointer?,
        context: UnsafeMutableRawPointer?,
        retain: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil,
        release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil,
        shadowable: Bool = false, keepAlive: AnyObject? = nil
    ) throws -> ServiceEntry {
        guard !key.id.isEmpty else { throw ServiceError.malformed("a service needs a non-empty interface id") }
        let entry = ServiceEntry(
            key: key, version: version, owner: owner, table: table, context: context,
            retain: retain, release: release, shadowable: shadowable, keepAlive: keepAlive)
        let replaced: ServiceEntry? = try lock.withLock {
            let current = providers[key]?.last
            if let current {
                guard current.shadowable, current.owner != owner else {
                    throw ServiceError.taken(key, owner: current.owner, claimant: owner)
                }
                current.state = .shadowed
            }
            providers[key, default: []].append(entry)
            handedOut[UnsafeMutableRawPointer(entry.idCString)] = entry
            return current
        }
        if replaced != nil { notify(key, available: false, skipping: owner) }
        notify(key, available: true, skipping: owner)
        observers.notify([.registered(key, owner: owner)])
        return entry
    }

    /// Withdraws `owner`'s provider of `key`; not providing it is a no-op.
    public func unregister(_ key: ServiceKey, owner: Owner) {
        let restored: Bool? = lock.withLock {
            guard var stack = providers[key], let index = stack.lastIndex(where: { $0.owner == owner }) else {
                return nil
            }
            let entry = stack.remove(at: index)
            let wasServing = index == stack.count
            entry.state = .withdrawn
            if entry.holdCount == 0 { handedOut[UnsafeMutableRawPointer(entry.idCString)] = nil }
            stack.last?.state = .active
            providers[key] = stack.isEmpty ? nil : stack
            return wasServing && !stack.isEmpty
        }
        guard let restored else { return }
        notify(key, available: false, skipping: nil)
        if restored { notify(key, available: true, skipping: nil) }
        observers.notify([.removed(key, owner: owner)])
    }

    // MARK: Consuming

    /// The serving provider of `key` when it is at least `minVersion`, retained for `consumer`.
    public func acquire(_ key: ServiceKey, minVersion: UInt32, consumer: Owner) -> Result<ServiceEntry, ServiceError> {
        lock.withLock {
            guard let entry = providers[key]?.last else { return .failure(.noProvider(key)) }
            guard entry.version >= minVersion else {
                return .failure(.tooOld(key, version: entry.version, wanted: minVersion, owner: entry.owner))
            }
            entry.holders[consumer, default: 0] += 1
            if let retain = entry.retain {
                CallRecorder.duringOnMainThread(.service, slot: entry.slot) { retain(entry.context) }
            }
            return .success(entry)
        }
    }

    /// Releases an acquisition identified by the id string the consumer was given. Unknown ones are ignored.
    public func release(idCString: UnsafeRawPointer, consumer: Owner) {
        lock.withLock {
            guard let entry = handedOut[UnsafeMutableRawPointer(mutating: idCString)] else { return }
            releaseHold(entry, consumer: consumer)
        }
    }

    public func release(_ entry: ServiceEntry, consumer: Owner) {
        lock.withLock { releaseHold(entry, consumer: consumer) }
    }

    private func releaseHold(_ entry: ServiceEntry, consumer: Owner) {
        guard let count = entry.holders[consumer], count > 0 else { return }
        entry.holders[consumer] = count == 1 ? nil : count - 1
        // A revoked provider's code may be unmapped: its release is never called.
        if entry.state != .revoked, let release = entry.release {
            CallRecorder.duringOnMainThread(.service, slot: entry.slot) { release(entry.context) }
        }
        if entry.holdCount == 0, entry.state == .revoked || entry.state == .withdrawn {
            handedOut[UnsafeMutableRawPointer(entry.idCString)] = nil
        }
    }

    /// Why `register` would refuse `owner`'s provider of `key` now, or nil (checked before a held registration).
    func refusal(of key: ServiceKey, owner: Owner) -> ServiceError? {
        lock.withLock {
            guard let current = providers[key]?.last else { return nil }
            return current.shadowable && current.owner != owner
                ? nil : ServiceError.taken(key, owner: current.owner, claimant: owner)
        }
    }

    /// Who holds which service now (consumer and key), for the dependency graph.
    public var acquisitions: [(key: ServiceKey, consumer: Owner)] {
        lock.withLock {
            providers.values.joined().flatMap { entry in
                entry.holders.filter { $0.value > 0 }.keys.map { (entry.key, $0) }
            }
        }
    }

    /// The serving provider of `key`, without acquiring it (listings, host-side calls made under the lock's
    /// protection of the main thread).
    public func provider(of key: ServiceKey) -> ServiceEntry? { lock.withLock { providers[key]?.last } }

    // MARK: Observing

    /// Sets (or with nil removes) the observer of the plugin `owner`.
    func setPluginObserver(_ observer: PluginObserver?, for owner: Owner) {
        lock.withLock { pluginObservers[owner] = observer }
    }

    /// Sets (or with nil removes) the 1.1 event observer of the plugin `owner`.
    func setPluginEventObserver(_ observer: PluginObserver?, for owner: Owner) {
        lock.withLock { pluginEventObservers[owner] = observer }
    }

    public func observe(_ handler: @escaping (RegistrationChange) -> Void) -> ObservationToken {
        observers.add(handler)
    }

    private func notify(_ key: ServiceKey, available: Bool, skipping: Owner?) {
        let held = lock.withLock { () -> Bool in
            guard heldNotices != nil else { return false }
            heldNotices?.append((key, available, skipping))
            return true
        }
        if held { return }
        var targets: [PluginObserver] = []
        var serving: ServiceEntry?
        lock.withLock {
            targets = Array(pluginObservers.values) + Array(pluginEventObservers.values)
            serving = providers[key]?.last
        }
        targets = targets.filter { $0.owner != skipping }.sorted { $0.owner.id < $1.owner.id }
        let provider = available ? serving : nil
        for observer in targets where observer.isCallable() {
            CallRecorder.duringOnMainThread(.serviceObserver, slot: observer.slot) {
                key.id.withCString { id in
                    observer.function?(observer.userData, id, available)
                    guard let eventFunction = observer.eventFunction else { return }
                    withOptionalCString(key.name) { name in
                        withOptionalCString(provider?.owner.displayName) { providerName in
                            var event = hub_service_event(
                                struct_size: UInt32(MemoryLayout<hub_service_event>.size), interface_id: id, name: name,
                                version: provider?.version ?? 0, available: available, provider: providerName)
                            eventFunction(observer.userData, &event)
                        }
                    }
                }
            }
        }
    }

    // MARK: Ownership

    @discardableResult
    public func revokeAll(ownedBy owner: Owner) -> Revocation {
        var revocation = Revocation(owner: owner)
        var restoredKeys: [ServiceKey] = []
        lock.withLock {
            pluginObservers[owner] = nil
            pluginEventObservers[owner] = nil
            for (key, stack) in providers where stack.contains(where: { $0.owner == owner }) {
                let servingWasOwned = stack.last?.owner == owner
                let remaining = stack.filter { $0.owner != owner }
                for entry in stack where entry.owner == owner {
                    entry.state = .revoked
                    if entry.holdCount == 0 { handedOut[UnsafeMutableRawPointer(entry.idCString)] = nil }
                }
                remaining.last?.state = .active
                providers[key] = remaining.isEmpty ? nil : remaining
                revocation.keys.append(key)
                if servingWasOwned && !remaining.isEmpty { restoredKeys.append(key) }
            }
            // What the owner acquired from others is released for it (its code will not do it any more).
            for entry in Array(handedOut.values) {
                while (entry.holders[owner] ?? 0) > 0 { releaseHold(entry, consumer: owner) }
            }
        }
        revocation.keys.sort()
        revocation.survivors = survivors.filter { $0.owner == owner }
        for key in revocation.keys {
            notify(key, available: false, skipping: owner)
            if restoredKeys.contains(key) { notify(key, available: true, skipping: owner) }
        }
        observers.notify(revocation.keys.map { .removed($0, owner: owner) })
        return revocation
    }

    public var registrations: [RegistrationInfo] {
        lock.withLock {
            providers.values.flatMap { $0 }.map { entry in
                RegistrationInfo(
                    key: entry.key, owner: entry.owner,
                    scope: entry.state == .active ? "service" : "service (\(entry.state.rawValue))",
                    liveInstances: entry.holdCount, version: entry.version)
            }.sorted { ($0.key, $0.owner.id) < ($1.key, $1.owner.id) }
        }
    }

    /// Acquisitions of revoked services that consumers still hold.
    public var survivors: [Survivor] {
        lock.withLock {
            handedOut.values.filter { $0.state == .revoked && $0.holdCount > 0 }.flatMap { entry in
                entry.holders.sorted { $0.key.id < $1.key.id }.map { consumer, count in
                    Survivor(
                        key: entry.key, owner: entry.owner,
                        what: "context held \(count)× by \(consumer)")
                }
            }.sorted { $0.description < $1.description }
        }
    }
}
