import Foundation
import HubCore
import HubHost
import HubInjection
import HubPluginKit
import HubTestKit
import Testing

/// HubPluginKit's `HubHost.inject` through the real bridge (ABI 1.1): a Swift plugin resolves keys the host binds.
@Suite(.serialized, .pluginCode) struct InjectionKitTests {
    @Test func aSwiftPluginResolvesKeysWithArgumentsScopesAndErrors() throws {
        let host = PluginHost(
            cacheDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("kit-inject"))
        defer { host.unloadAll() }
        let record = host.loadEmbedded(EmbeddedPluginEntry.descriptor, name: "embedded")
        #expect(record.isLoaded, "\(record.reason ?? "")")
        var made = 0
        try host.services.injector.install(
            Module(owner: Owner(id: "test.bindings")) { binder in
                binder.bindProvider(toKey: ServiceKey(id: "sum"), scope: .normal) { _, arguments in
                    (arguments.compactMap { $0 as? Int64 }).reduce(Int64(0), +)
                }
                binder.bindProvider(toKey: ServiceKey(id: "greeting", name: "formal"), scope: .singleton) { _, _ in
                    made += 1
                    return "Good evening"
                }
            })
        let kit = HubPluginKit.HubHost.current
        #expect(try kit.inject("sum", arguments: [40, 2]) == .int(42))
        #expect(try kit.inject("greeting", named: "formal") == .string("Good evening"))
        #expect(try kit.inject("greeting", named: "formal").stringValue == "Good evening")
        #expect(made == 1, "a singleton is made once")
        #expect(throws: HubInjectionError.self) { try kit.inject("missing") }
        do {
            _ = try kit.inject("missing")
        } catch {
            #expect("\(error)".contains("inject missing"), "\(error)")
        }
        #expect(throws: HubInjectionError.self) { try kit.inject("sum", arguments: [[1]]) }
    }

    @Test func aSwiftPluginBindsKeysOthersResolveAndItsUnloadRevokesThem() throws {
        let host = PluginHost(cacheDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("kit-bind"))
        let record = host.loadEmbedded(EmbeddedPluginEntry.descriptor, name: "embedded")
        #expect(record.isLoaded, "\(record.reason ?? "")")
        let kit = HubPluginKit.HubHost.current
        var made = 0
        try kit.bind("swift.greeting", singleton: true) { _ in
            made += 1
            return .string("Hello from Swift")
        }
        try kit.bind("swift.double") { arguments in
            guard let n = arguments.first as? Double else { throw HubInjectionError(description: "needs a number") }
            return .double(n * 2)
        }
        // The host resolves them (as a C plugin's `inject` would), with the scope honoured.
        #expect(try host.services.injector.get(key: ServiceKey(id: "swift.greeting")) as? String == "Hello from Swift")
        #expect(try host.services.injector.get(key: ServiceKey(id: "swift.greeting")) as? String == "Hello from Swift")
        #expect(made == 1)
        #expect(try kit.inject("swift.double", arguments: [21]) == .double(42))
        #expect(throws: (any Error).self) { try host.services.injector.get(key: ServiceKey(id: "swift.double")) }
        // A second bind of the key is refused, naming the holder.
        #expect(throws: HubInjectionError.self) { try kit.bind("swift.double") { _ in .none } }
        host.unloadAll()
        #expect(throws: InjectionError.self) { try host.services.injector.get(key: ServiceKey(id: "swift.double")) }
    }
}
