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

    @Test func aSwiftModuleBindsByTypeWithRequiresAwokenAndEagerSingletons() throws {
        let host = PluginHost(
            cacheDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("kit-module"))
        let record = host.loadEmbedded(EmbeddedPluginEntry.descriptor, name: "embedded")
        #expect(record.isLoaded, "\(record.reason ?? "")")
        defer { host.unloadAll() }
        let kit = HubPluginKit.HubHost.current
        var events: [String] = []
        try host.services.injector.install(
            Module(owner: Owner(id: "host")) { binder in
                binder.bindProvider(toKey: ServiceKey(id: "base.url"), scope: .singleton) { _, _ in
                    events.append("base.url")
                    return "https://example.com"
                }
            })
        try kit.install(
            HubModule { binder in
                binder.bind(KitClock.self, singleton: true, eager: true, requires: ["base.url"]) { _ in
                    events.append("clock made")
                    return KitClock(start: 10)
                }
                binder.bind(KitGreeting.self, awoken: { greeting in events.append("awoken \(greeting.text)") }) {
                    arguments in
                    KitGreeting(text: "Hello \((arguments.first as? String) ?? "you")")
                }
                binder.bind(KitGreeting(text: "Good evening"), named: "formal")
            })
        // The eager singleton was made at install, after the key it requires; awakeFromInjection ran once.
        #expect(events == ["base.url", "clock made"])
        let clock = try kit.get(KitClock.self)
        #expect(clock.awakened == 1 && clock.start == 10)
        #expect(try kit.get(KitClock.self) === clock, "a singleton is one object")
        // The host and other plugins resolve the same key (a pointer to the same object).
        let viaHost = try host.services.injector.get(key: ServiceKey(id: KitClock.injectionKey))
        #expect((viaHost as? UnsafeMutableRawPointer) == Unmanaged.passUnretained(clock).toOpaque())
        // A normal binding is made (and awoken) per get, with the caller's arguments.
        #expect(try kit.get(KitGreeting.self, arguments: ["Ada"]).text == "Hello Ada")
        #expect(try kit.get(KitGreeting.self).text == "Hello you")
        #expect(events.suffix(2) == ["awoken Hello Ada", "awoken Hello you"])
        #expect(try kit.get(KitGreeting.self, named: "formal").text == "Good evening")
        // A value of the wrong kind is an error naming the type; a module with a problem binds nothing.
        #expect(throws: HubInjectionError.self) { _ = try kit.get(KitClockByString.self) }
        #expect(throws: HubInjectionError.self) {
            try kit.install(
                HubModule { binder in
                    binder.bind(key: "twice") { _ in .none }
                    binder.bind(key: "twice") { _ in .none }
                })
        }
        #expect(!host.services.injector.hasBinding(forKey: ServiceKey(id: "twice")))
        // A required key that is missing is the binding's error, naming both.
        try kit.install(
            HubModule { binder in
                binder.bind(KitNeedy.self, requires: ["not.bound"]) { _ in KitNeedy() }
            })
        do {
            _ = try kit.get(KitNeedy.self)
            Issue.record("a missing required key must fail")
        } catch {
            #expect("\(error)".contains("kit.needy requires not.bound"), "\(error)")
        }
    }
}

final class KitClock: HubInjectableObject, HubAwakable {
    static let injectionKey = "kit.clock"
    let start: Int
    var awakened = 0
    init(start: Int) { self.start = start }
    func awakeFromInjection() { awakened += 1 }
}

final class KitNeedy: HubInjectableObject {
    static let injectionKey = "kit.needy"
}

struct KitGreeting: HubInjectable {
    static let injectionKey = "kit.greeting"
    let text: String
    static func decode(_ injected: HubInjected) throws -> KitGreeting {
        KitGreeting(text: try injected.string(for: Self.self))
    }
    var injected: HubInjected { .string(text) }
}

/// Reads the clock's key as a string: the binding gives a pointer, so this fails.
struct KitClockByString: HubInjectable {
    static let injectionKey = "kit.clock"
    static func decode(_ injected: HubInjected) throws -> KitClockByString {
        _ = try injected.string(for: Self.self)
        return KitClockByString()
    }
    var injected: HubInjected { .none }
}
