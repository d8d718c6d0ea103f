import Foundation
import HubCore
import HubInjection
import Testing

// HIPInstanceLocator's TestInstanceLocator, ported (the error callback is captured into `errors`), plus the
// owner, thread and cycle rules this port adds.

private protocol Greeting: AnyObject { var text: String { get } }
private final class Greeter: Greeting {
    let text: String
    init(_ text: String = "DEFAULT") { self.text = text }
}
private final class Service {
    var greeter: Greeter?
    let serial: Int
    init(serial: Int = 0) { self.serial = serial }
}
private final class ServiceHolder { var service: Service? }

private final class ErrorLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [LocatorError] = []
    func append(_ error: LocatorError) {
        lock.lock()
        storage.append(error)
        lock.unlock()
    }
    var all: [LocatorError] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
    var last: LocatorError? { all.last }
}

private func makeLocator() -> (ServiceLocator, ErrorLog) {
    let log = ErrorLog()
    return (ServiceLocator(errorCallback: { log.append($0) }), log)
}

@Suite("Service locator (HIPInstanceLocator semantics)")
struct LocatorTests {
    @Test("getInstanceOf and implicitGet return the identical instance")
    func getAndImplicitGet() {
        let (locator, _) = makeLocator()
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        let explicit = locator.getInstanceOf(Greeter.self)
        let implicit: Greeter? = locator.implicitGet()
        #expect(explicit != nil)
        #expect(explicit === implicit)
    }

    @Test("an unregistered key is nil plus noDependencyRegistered, never a crash")
    func missingKey() {
        let (locator, log) = makeLocator()
        #expect(locator.getInstanceOf(Greeter.self) == nil)
        #expect(log.last == .noDependencyRegistered(ServiceKey(Greeter.self)))
        guard case .failure(.noDependencyRegistered) = locator.resolve(Greeter.self) else {
            Issue.record("resolve should give the error value")
            return
        }
    }

    @Test("a duplicate factory is refused with triedToRegisterTooManyFactories and the first is kept")
    func duplicateFactory() {
        let (locator, log) = makeLocator()
        #expect(locator.registerFactory(Greeter.self) { _ in Greeter("DEFAULT") })
        #expect(!locator.registerFactory(Greeter.self) { _ in Greeter("SECOND") })
        #expect(log.last == .triedToRegisterTooManyFactories(ServiceKey(Greeter.self), owner: .host, claimant: .host))
        #expect(locator.getInstanceOf(Greeter.self)?.text == "DEFAULT")
    }

    @Test("ten concurrent gets all return the same instance, built once")
    func concurrentGets() {
        let (locator, _) = makeLocator()
        let builds = Counter()
        locator.registerFactory(Greeter.self) { _ in
            builds.increment()
            usleep(2000)  // widen the window in which a second build could start
            return Greeter()
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 10) { _ in
            let g: Greeter? = locator.implicitGet()
            results.append(g.map(ObjectIdentifier.init))
        }
        #expect(builds.value == 1)
        #expect(Set(results.all).count == 1)
        #expect(results.all.count == 10 && !results.all.contains(nil))
    }

    @Test("a dependency built inside another factory is the same object as a direct get")
    func nestedFactory() {
        let (locator, _) = makeLocator()
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        locator.registerFactory(Service.self) { locator in
            let service = Service()
            service.greeter = locator.implicitGet()
            return service
        }
        let service = locator.getInstanceOf(Service.self)
        #expect(service?.greeter === locator.getInstanceOf(Greeter.self))
    }

    @Test("the key-based get returns the same instance as the typed API")
    func keyBasedGet() throws {
        let (locator, _) = makeLocator()
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        let byKey = try locator.resolve(key: ServiceKey(Greeter.self)).get() as AnyObject
        #expect(byKey === locator.getInstanceOf(Greeter.self))
    }

    @Test("the injector runs after the factory builds the instance, once")
    func injectorRuns() {
        let (locator, _) = makeLocator()
        let injections = Counter()
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        locator.registerFactory(Service.self) { _ in Service() }
        locator.injectInstancesOf(Service.self) { locator, service in
            injections.increment()
            service.greeter = locator.implicitGet()
        }
        #expect(locator.getInstanceOf(Service.self)?.greeter != nil)
        _ = locator.getInstanceOf(Service.self)
        #expect(injections.value == 1)
    }

    @Test("a second injector is refused and the first is the one that runs")
    func duplicateInjector() {
        let (locator, log) = makeLocator()
        locator.registerFactory(Service.self) { _ in Service() }
        #expect(locator.injectInstancesOf(Service.self) { _, s in s.greeter = Greeter("first") })
        #expect(!locator.injectInstancesOf(Service.self) { _, s in s.greeter = Greeter("second") })
        #expect(log.last == .triedToRegisterTooManyInjectors(ServiceKey(Service.self), owner: .host, claimant: .host))
        #expect(locator.getInstanceOf(Service.self)?.greeter?.text == "first")
    }

    @Test("applyInjector injects an outside instance on request; false without an injector")
    func applyInjector() {
        let (locator, log) = makeLocator()
        let outside = Service()
        #expect(!locator.applyInjector(outside))
        #expect(log.all.isEmpty)
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        locator.injectInstancesOf(Service.self) { locator, s in s.greeter = locator.implicitGet() }
        #expect(locator.applyInjector(outside))
        #expect(outside.greeter === locator.getInstanceOf(Greeter.self))
    }

    @Test("a shared instance comes back identical, and is not retained")
    func sharedInstanceIsWeak() {
        let (locator, log) = makeLocator()
        var shared: Greeter? = Greeter("shared")
        #expect(locator.register(Greeter.self, sharedInstance: shared!))
        #expect(locator.getInstanceOf(Greeter.self) === shared)
        shared = nil
        #expect(locator.getInstanceOf(Greeter.self) == nil)
        #expect(log.last == .sharedInstanceWasNotOfExpectedType(ServiceKey(Greeter.self), released: true))
    }

    @Test("a shared instance after a factory is refused and the factory's object is returned")
    func sharedAfterFactory() {
        let (locator, log) = makeLocator()
        locator.registerFactory(Greeter.self) { _ in Greeter("factory") }
        let shared = Greeter("shared")
        #expect(!locator.register(Greeter.self, sharedInstance: shared))
        #expect(log.last == .triedToRegisterTooManyFactories(ServiceKey(Greeter.self), owner: .host, claimant: .host))
        #expect(locator.getInstanceOf(Greeter.self)?.text == "factory")
    }

    @Test("assemblies run in order and their registrations belong to the assembly's owner")
    func assembliesInOrder() {
        let (locator, log) = makeLocator()
        let plugin = Owner(id: "com.test.a#1")
        var order: [String] = []
        locator.assemble(
            LocatorAssembly(owner: plugin) { l in
                order.append("one")
                l.registerFactory(Greeter.self) { _ in Greeter("one") }
            },
            LocatorAssembly { l in
                order.append("two")
                l.registerFactory(Greeter.self) { _ in Greeter("two") }  // refused: the first keeps it
            })
        #expect(order == ["one", "two"])
        #expect(log.last == .triedToRegisterTooManyFactories(ServiceKey(Greeter.self), owner: plugin, claimant: .host))
        #expect(locator.registrations.first { $0.key == ServiceKey(Greeter.self) }?.owner == plugin)
    }

    @Test("the convenience initialiser runs the assembly block")
    func assemblyBlockInit() {
        let locator = ServiceLocator { $0.registerFactory(Greeter.self) { _ in Greeter("assembled") } }
        #expect(locator.getInstanceOf(Greeter.self)?.text == "assembled")
    }

    @Test("a factory asking for its own key is a dependencyCycle, not a stack overflow")
    func factoryCycle() {
        let (locator, log) = makeLocator()
        locator.registerFactory(Service.self) { l in
            let s = Service()
            s.greeter = l.implicitGet()
            return s
        }
        locator.registerFactory(Greeter.self) { l in
            _ = l.getInstanceOf(Service.self)
            return Greeter()
        }
        // The caller sees the cycle, never a half-built object (a Service whose Greeter could not be made).
        #expect(locator.getInstanceOf(Service.self) == nil)
        let cycle = LocatorError.dependencyCycle([
            ServiceKey(Service.self), ServiceKey(Greeter.self), ServiceKey(Service.self),
        ])
        #expect(log.all.contains(cycle))
        if case .failure(let error) = locator.resolve(Service.self) {
            #expect(error == cycle)
        } else {
            Issue.record("resolve returned a half-built object")
        }
    }

    @Test("a cycle through an injector works: the instance is cached before its injector runs")
    func injectorCycle() {
        let (locator, log) = makeLocator()
        locator.registerFactory(Service.self) { _ in Service() }
        locator.registerFactory(ServiceHolder.self) { _ in ServiceHolder() }
        locator.injectInstancesOf(Service.self) { l, _ in _ = l.getInstanceOf(ServiceHolder.self) }
        locator.injectInstancesOf(ServiceHolder.self) { l, h in h.service = l.implicitGet() }
        let service = locator.getInstanceOf(Service.self)
        #expect(locator.getInstanceOf(ServiceHolder.self)?.service === service)
        #expect(log.all.isEmpty)
    }

    @Test("a factory may get other keys on other threads' behalf only after returning; same-thread nesting is fine")
    func reentrancyRule() {
        // Documented rule: the factory holds the locator's recursive lock, so nested gets on the same thread
        // re-enter (no deadlock) and concurrent first gets of a slow factory build it once.
        let (locator, _) = makeLocator()
        let builds = Counter()
        locator.registerFactory(Greeter.self) { _ in Greeter() }
        locator.registerFactory(Service.self) { l in
            builds.increment()
            let s = Service(serial: builds.value)
            s.greeter = l.implicitGet()  // nested, same thread
            _ = l.getInstanceOf(Greeter.self)  // and again
            return s
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            results.append(locator.getInstanceOf(Service.self).map(ObjectIdentifier.init))
        }
        #expect(builds.value == 1)
        #expect(Set(results.all).count == 1)
    }

    @Test("revokeAll removes exactly an owner's registrations, tells observers, and reports survivors")
    func revocation() {
        let (locator, log) = makeLocator()
        let plugin = Owner(id: "com.test.plugin#1")
        locator.registerFactory(Greeter.self, owner: plugin) { _ in Greeter("plugin") }
        locator.registerFactory(Service.self) { _ in Service() }
        locator.injectInstancesOf(Service.self, owner: plugin) { _, _ in }
        var changes: [RegistrationChange] = []
        let token = locator.observe { changes.append($0) }
        var kept: Greeter? = locator.getInstanceOf(Greeter.self)
        let revocation = locator.revokeAll(ownedBy: plugin)
        #expect(revocation.keys == [ServiceKey(Greeter.self), ServiceKey(Service.self)].sorted())
        #expect(changes.contains(.removed(ServiceKey(Greeter.self), owner: plugin)))
        #expect(revocation.survivors.map(\.key) == [ServiceKey(Greeter.self)])
        #expect(locator.survivors.count == 1)
        #expect(locator.getInstanceOf(Greeter.self) == nil)
        #expect(log.last == .noDependencyRegistered(ServiceKey(Greeter.self)))
        #expect(locator.getInstanceOf(Service.self) != nil)
        #expect(kept?.text == "plugin")  // the instance made before the revocation is the survivor
        kept = nil
        #expect(locator.survivors.isEmpty)
        // A new provider can take the key again.
        #expect(locator.registerFactory(Greeter.self, owner: Owner(id: "com.test.plugin#2")) { _ in Greeter("again") })
        #expect(locator.getInstanceOf(Greeter.self)?.text == "again")
        token.cancel()
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [ObjectIdentifier?] = []
    func append(_ id: ObjectIdentifier?) {
        lock.lock()
        storage.append(id)
        lock.unlock()
    }
    var all: [ObjectIdentifier?] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

@Suite("Service locator string keys")
struct LocatorKeyTests {
    @Test("a string-keyed factory serves typed gets of a matching type and reports a mismatching one")
    func stringKeys() throws {
        let log = ErrorLog()
        let locator = ServiceLocator(errorCallback: { log.append($0) })
        let key = ServiceKey(id: "com.test.greeting", name: "short")
        #expect(locator.registerFactory(forKey: key) { _ in "hi" })
        #expect(try locator.resolve(key: key).get() as? String == "hi")
        #expect(locator.getInstanceOf(String.self, name: "short") == nil)  // typed keys are module-qualified type ids
        #expect(log.last == .noDependencyRegistered(ServiceKey(String.self, name: "short")))
        let typedKey = ServiceKey(Int.self)
        #expect(locator.registerFactory(forKey: typedKey) { _ in "not a number" })
        #expect(locator.getInstanceOf(Int.self) == nil)
        #expect(log.last == .storedDependencyWasNotOfExpectedType(typedKey, expected: "Swift.Int", got: "Swift.String"))
    }
}
