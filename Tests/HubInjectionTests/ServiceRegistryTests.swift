import Foundation
import HubCore
import HubInjection
import Testing

@testable import HubHost

/// The C service registry without plugins: contexts and retain/release counters are Swift-side C callbacks.
@Suite("Service registry", .serialized)
struct ServiceRegistryTests {
    nonisolated(unsafe) static var retains = 0
    nonisolated(unsafe) static var releases = 0
    static let retain: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in ServiceRegistryTests.retains += 1 }
    static let release: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in ServiceRegistryTests.releases += 1 }
    static let table = UnsafeRawPointer(UnsafeMutablePointer<Int>.allocate(capacity: 1))

    let a = Owner(id: "com.test.a#1"), b = Owner(id: "com.test.b#1"), c = Owner(id: "com.test.c#1")

    init() {
        Self.retains = 0
        Self.releases = 0
    }

    @Test("acquire retains, release releases; a withdrawn provider still gets its release, a revoked one never")
    func retainRelease() throws {
        let registry = ServiceRegistry()
        let key = ServiceKey(id: "com.test.clock")
        try registry.register(
            key, version: 3, owner: a, table: Self.table, context: nil,
            retain: Self.retain, release: Self.release)
        let first = try registry.acquire(key, minVersion: 2, consumer: b).get()
        #expect(Self.retains == 1 && first.holdCount == 1)
        registry.release(first, consumer: b)
        #expect(Self.releases == 1 && first.holdCount == 0)

        // Withdrawn while held: lookups fail, the late release still reaches the (loaded) provider.
        let held = try registry.acquire(key, minVersion: 1, consumer: b).get()
        registry.unregister(key, owner: a)
        #expect(held.state == .withdrawn)
        #expect(throws: ServiceError.noProvider(key)) { try registry.acquire(key, minVersion: 1, consumer: b).get() }
        registry.release(idCString: UnsafeRawPointer(held.idCString), consumer: b)
        #expect(Self.releases == 2)

        // Revoked while held: reported as a survivor; the late release is not forwarded.
        try registry.register(
            key, version: 3, owner: a, table: Self.table, context: nil,
            retain: Self.retain, release: Self.release)
        let kept = try registry.acquire(key, minVersion: 1, consumer: c).get()
        let revocation = registry.revokeAll(ownedBy: a)
        #expect(revocation.keys == [key])
        #expect(
            revocation.survivors.map(\.description) == [
                "com.test.clock (context held 1× by com.test.c#1) from com.test.a#1 is still alive after its owner was revoked"
            ])
        registry.release(kept, consumer: c)
        #expect(Self.releases == 2)
        #expect(registry.survivors.isEmpty)
    }

    @Test("versions: an older provider is refused with both versions and the provider named")
    func versions() throws {
        let registry = ServiceRegistry()
        let key = ServiceKey(id: "com.test.clock", name: "utc")
        try registry.register(key, version: 1, owner: a, table: Self.table, context: nil)
        #expect(throws: ServiceError.tooOld(key, version: 1, wanted: 2, owner: a)) {
            try registry.acquire(key, minVersion: 2, consumer: b).get()
        }
        #expect(
            "\(ServiceError.tooOld(key, version: 1, wanted: 2, owner: a))"
                == "com.test.clock:utc is version 1 (from com.test.a#1); 2 was asked")
        // Named and default bindings are separate keys.
        #expect(throws: ServiceError.noProvider(ServiceKey(id: "com.test.clock"))) {
            try registry.acquire(ServiceKey(id: "com.test.clock"), minVersion: 1, consumer: b).get()
        }
    }

    @Test("one provider per key; host services may be shadowed once and come back")
    func conflicts() throws {
        let registry = ServiceRegistry()
        let key = ServiceKey(id: "com.test.clock")
        try registry.register(key, version: 1, owner: a, table: Self.table, context: nil)
        #expect(throws: ServiceError.taken(key, owner: a, claimant: b)) {
            try registry.register(key, version: 2, owner: b, table: Self.table, context: nil)
        }
        let hostKey = ServiceKey(id: "hub.uri-opener")
        try registry.register(hostKey, version: 1, owner: .host, table: Self.table, context: nil, shadowable: true)
        try registry.register(hostKey, version: 1, owner: b, table: Self.table, context: nil)
        #expect(registry.provider(of: hostKey)?.owner == b)
        #expect(throws: ServiceError.taken(hostKey, owner: b, claimant: c)) {
            try registry.register(hostKey, version: 1, owner: c, table: Self.table, context: nil)
        }
        var changes: [RegistrationChange] = []
        let token = registry.observe { changes.append($0) }
        registry.revokeAll(ownedBy: b)
        #expect(registry.provider(of: hostKey)?.owner == .host)
        #expect(registry.provider(of: hostKey)?.state == .active)
        #expect(changes == [.removed(hostKey, owner: b)])
        token.cancel()
    }
}
