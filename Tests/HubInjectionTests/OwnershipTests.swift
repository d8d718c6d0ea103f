import Foundation
import HubCore
import HubInjection
import Testing

// What none of the anchors has: owners on every binding and instance, atomic revocation, observers, and
// reports of instances still alive after their owner was revoked.

protocol Weather: AnyObject { var forecast: String { get } }
final class HostWeather: Weather, Injectable {
    init() {}
    var forecast: String { "host: cloudy" }
}
final class PluginWeather: Weather, Injectable {
    init() {}
    var forecast: String { "plugin: sunny" }
}
final class Dashboard: Injectable {
    var weather: Weather?
    init() {}
    static var composition: Composition {
        Composition(Dashboard.self) { c in
            c.singleton()
            c.requires(\.weather)
        }
    }
}

@Suite("Ownership and revocation")
struct OwnershipTests {
    let plugin = Owner(id: "com.test.weather@1#1", displayName: "com.test.weather 1 (libweather.so)")

    @Test("revoking a plugin's module removes its bindings at once; an earlier binding of the key serves again")
    func revokeRestoresShadowed() throws {
        let injector = try Injector(Module { $0.bindClass(HostWeather.self, to: Weather.self) })
        try injector.install(
            Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self, scope: .singleton) })
        #expect(try injector.get(Weather.self).forecast == "plugin: sunny")
        var changes: [RegistrationChange] = []
        let token = injector.observe { changes.append($0) }
        let revocation = injector.revokeAll(ownedBy: plugin)
        #expect(revocation.keys == [ServiceKey(Weather.self)])
        #expect(changes == [.removed(ServiceKey(Weather.self), owner: plugin)])
        #expect(try injector.get(Weather.self).forecast == "host: cloudy")
        #expect(injector.modules.allSatisfy { $0.owner == .host })
        token.cancel()
    }

    @Test("a revocation reaches injectors derived with withModules and withoutModules")
    func revocationReachesDerivedInjectors() throws {
        let injector = try Injector(Module { $0.bindClass(HostWeather.self, to: Weather.self) })
        try injector.install(Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self) })
        let derived = try injector.withModules(Module { _ in })
        let grandchild = try derived.withModules(Module { _ in })
        #expect(try derived.get(Weather.self).forecast == "plugin: sunny")
        #expect(try grandchild.get(Weather.self).forecast == "plugin: sunny")
        injector.revokeAll(ownedBy: plugin)
        #expect(try derived.get(Weather.self).forecast == "host: cloudy", "the derived injector forgot the plugin too")
        #expect(try grandchild.get(Weather.self).forecast == "host: cloudy")
    }

    @Test("without another binding, lookups fail cleanly until a provider returns; the new provider then serves")
    func failCleanlyThenReload() throws {
        let injector = try Injector()
        try injector.install(Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self) })
        #expect(try injector.get(Weather.self) is PluginWeather)
        injector.revokeAll(ownedBy: plugin)
        // The error says why: the key was bound, by a plugin that unloaded.
        #expect(throws: InjectionError.revoked(ServiceKey(Weather.self), owner: plugin.displayName)) {
            try injector.get(Weather.self)
        }
        #expect(
            InjectionError.revoked(ServiceKey(Weather.self), owner: plugin.displayName).description
                .contains("bound by com.test.weather 1 (libweather.so), which unloaded"))
        let reloaded = Owner(id: "com.test.weather@2#2")
        try injector.install(Module(owner: reloaded) { $0.bindClass(HostWeather.self, to: Weather.self) })
        #expect(try injector.get(Weather.self) is HostWeather)
        #expect(injector.registrations.first { $0.key == ServiceKey(Weather.self) }?.owner == reloaded)
    }

    @Test("singletons built with a revoked binding are dropped, so the next get uses the new provider")
    func dependentsInvalidated() throws {
        let injector = try Injector(Module { $0.bindClass(HostWeather.self, to: Weather.self) })
        try injector.install(Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self) })
        let before = try injector.get(Dashboard.self)
        #expect(before.weather is PluginWeather)
        #expect(try injector.get(Dashboard.self) === before)
        injector.revokeAll(ownedBy: plugin)
        let after = try injector.get(Dashboard.self)
        #expect(after !== before)
        #expect(after.weather is HostWeather)
    }

    @Test("instances still alive after their owner was revoked are reported until they go")
    func survivorsReported() throws {
        let injector = try Injector()
        try injector.install(Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self) })
        var kept: Weather? = try injector.get(Weather.self)
        withExtendedLifetime(try injector.get(Weather.self)) { _ in
            #expect(injector.registrations.first { $0.key == ServiceKey(Weather.self) }?.liveInstances == 2)
            let revocation = injector.revokeAll(ownedBy: plugin)
            #expect(revocation.survivors.count == 2)
            #expect(
                revocation.survivors.first?.description.contains("is still alive after its owner was revoked") == true)
            #expect(
                revocation.survivors.allSatisfy {
                    $0.what == String(reflecting: PluginWeather.self) && $0.owner == plugin
                })
            #expect(kept is PluginWeather)
            kept = nil
            #expect(injector.survivors.count == 1)  // the one this closure still holds
        }
        #expect(injector.survivors.isEmpty)
    }

    @Test(
        "revocation under concurrent lookups: lookups either succeed or fail cleanly, and nothing of the owner remains")
    func atomicRevocation() throws {
        let injector = try Injector()
        try injector.install(
            Module(owner: plugin) { b in
                b.bindClass(PluginWeather.self, to: Weather.self)
                b.bindProvider(to: String.self, named: "city") { _, _ in "Stockholm" }
            })
        let unexpected = Results()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker == 0 {
                injector.revokeAll(ownedBy: plugin)
                return
            }
            for _ in 0..<200 {
                // Failing cleanly after the revocation says why: the owner unloaded.
                do { _ = try injector.get(Weather.self) } catch InjectionError.revoked(_, let owner)
                    where owner == plugin.displayName
                {
                } catch { unexpected.append(nil) }
            }
        }
        #expect(unexpected.all.isEmpty)
        #expect(injector.registrations.allSatisfy { $0.owner != plugin })
        #expect(!injector.hasBinding(for: Weather.self))
    }

    @Test("installing a module whose eager singleton fails leaves nothing of it behind")
    func installIsAllOrNothing() throws {
        let injector = try Injector(Module { $0.bindClass(HostWeather.self, to: Weather.self) })
        #expect(throws: InjectionError.eagerSingletonNotSingleton(ServiceKey(Dashboard.self, name: "x"))) {
            try injector.install(
                Module(owner: plugin) { b in
                    b.bindClass(PluginWeather.self, to: Weather.self)
                    b.registerEagerSingleton(Dashboard.self, named: "x")
                })
        }
        #expect(try injector.get(Weather.self) is HostWeather)
        #expect(injector.modules.count == 1)
    }

    @Test("every instance records the registration and owner it came from")
    func instanceOrigin() throws {
        let injector = try Injector(Module { $0.bindClass(HostWeather.self, to: Weather.self, named: "host") })
        try injector.install(Module(owner: plugin) { $0.bindClass(PluginWeather.self, to: Weather.self) })
        let fromPlugin = try injector.get(Weather.self)
        let fromHost = try injector.get(Weather.self, named: "host")
        #expect(injector.origin(of: fromPlugin)?.owner == plugin)
        #expect(injector.origin(of: fromPlugin)?.key == ServiceKey(Weather.self))
        #expect(injector.origin(of: fromHost)?.owner == .host)
        #expect(injector.origin(of: HostWeather()) == nil)
        let locator = ServiceLocator()
        locator.registerFactory(PluginWeather.self, owner: plugin) { _ in PluginWeather() }
        #expect(locator.origin(of: try #require(locator.getInstanceOf(PluginWeather.self)))?.owner == plugin)
    }

    @Test("every registration lists its owner and scope")
    func listing() throws {
        let injector = try Injector(
            Module(owner: plugin) { b in
                b.bindClass(PluginWeather.self, to: Weather.self, scope: .singleton)
                b.bind("Stockholm", to: String.self, named: "city")
            })
        let rows = Dictionary(uniqueKeysWithValues: injector.registrations.map { ($0.key.description, $0) })
        #expect(rows[ServiceKey(Weather.self).description]?.scope.hasSuffix("(singleton)") == true)
        #expect(rows[ServiceKey(String.self, name: "city").description]?.scope == "instance")
        #expect(rows[ServiceKey(String.self, name: "city").description]?.owner == plugin)
        #expect(rows[ServiceKey(ObjectFactory.self).description]?.owner == .host)
    }
}
