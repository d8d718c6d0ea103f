import Foundation
import HubCore
import HubInjection
import HubTestKit
import Testing

@testable import HubHost

/// Plugin A provides a service that plugin B's component uses when it is configured; unloading A makes B's
/// lookups fail cleanly (B draws its fallback), reloading A restores it. Real C plugins, real dlopen.
@Suite("Services across plugins", .serialized, .pluginCode)
struct CrossPluginTests {
    /// Renders one "consumer:greeting" component for `title` and returns the text it drew.
    static func render(_ host: PluginHost, title: String) -> String {
        let model = ComponentModel(
            identifier: "row", componentIdentifier: ComponentIdentifier(namespace: "consumer", name: "greeting"),
            title: title)
        let (component, _) = host.registry.createComponent(for: model)
        defer { component.destroy() }
        component.loadView()
        component.configureView(with: model, containerSize: Size(width: 320, height: 600))
        let view = ViewBuilder()
        component.drawView(into: view, size: Size(width: 320, height: 40))
        return view.items.compactMap { item -> String? in
            if case .text(_, let text, _) = item { return text }
            return nil
        }.joined(separator: "|")
    }

    static func export<T>(_ record: PluginRecord, _ name: String, as type: T.Type) throws -> T {
        let handle = try #require(record.handle, "\(record.displayName) is not loaded")
        let symbol = try #require(dlsym(handle, name), "\(name) not exported")
        return unsafeBitCast(symbol, to: type)
    }

    typealias IntFn = @convention(c) () -> Int32

    @Test("A's service serves B's component; unloading A makes B fall back; reloading A restores it")
    func provideUnloadReload() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let providerFile = try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        let records = host.loadPlugins(in: [dir.plugins])
        #expect(records.allSatisfy { $0.isLoaded }, "\(records.map { $0.reason ?? "ok" })")
        let provider = records[0]
        let consumer = records[1]

        #expect(Self.render(host, title: "World") == "Hello, World")
        // B acquired and released through the host: the provider's retain and release were each called once.
        #expect(try Self.export(provider, "provider_retains", as: IntFn.self)() == 1)
        #expect(try Self.export(provider, "provider_releases", as: IntFn.self)() == 1)
        let listed = host.services.registrations.first { $0.key.id == "com.test.greeter" }
        #expect(listed?.owner == provider.owner && listed?.version == 2)

        let changesBefore = try Self.export(consumer, "consumer_changes", as: IntFn.self)()
        let report = host.unload(provider)
        #expect(report.outcome == .unloaded)
        #expect(try Self.export(consumer, "consumer_changes", as: IntFn.self)() == changesBefore + 1)
        #expect(try Self.export(consumer, "consumer_last_available", as: IntFn.self)() == 0)
        #expect(Self.render(host, title: "World") == "fallback: no provider for com.test.greeter")
        guard
            case .failure(.noProvider) = host.services.registry.acquire(
                ServiceKey(id: "com.test.greeter"),
                minVersion: 1, consumer: .host)
        else {
            Issue.record("the revoked service must not be found")
            return
        }

        // A new build of A arrives: its provider serves.
        try dir.compile(providerSource, as: "liba_provider.so", defines: ["GREETING": CPlugins.quoted("Howdy")])
        let reloaded = host.load(file: providerFile)
        #expect(reloaded.isLoaded, "\(reloaded.reason ?? "")")
        #expect(try Self.export(consumer, "consumer_last_available", as: IntFn.self)() == 1)
        #expect(Self.render(host, title: "World") == "Howdy, World")
        #expect(host.services.registrations.first { $0.key.id == "com.test.greeter" }?.owner == reloaded.owner)
    }

    /// A provider may hand back the arguments it was given as its string result (they are borrowed until it
    /// returns): the host copies it before they go (the first result read them after, as garbage).
    @Test func aProviderMayReturnTheArgumentsItWasGiven() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let host = PluginHost(cacheDirectory: dir.cache)
        try dir.compile(
            providerSource, as: "liba_provider.so",
            defines: ["BIND_KEY": CPlugins.quoted("echo"), "ECHO_ARGUMENTS": "1"])
        host.loadPlugins(in: [dir.plugins])
        for _ in 0..<3 {
            let echoed = try host.services.injector.get(key: ServiceKey(id: "echo"), arguments: [1, "x"]) as? String
            #expect(echoed == #"[1,"x"]"#, "\(String(describing: echoed))")
        }
        host.unloadAll()
    }

    /// The same service registered twice in one init: the second call returns false, as the header promises (it
    /// returned true, and the duplicate was only a warning after init).
    @Test func aServiceRegisteredTwiceInInitIsRefusedAtOnce() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let host = PluginHost(cacheDirectory: dir.cache)
        try dir.compile(providerSource, as: "liba_provider.so", defines: ["REGISTER_TWICE": "1"])
        let record = try #require(host.loadPlugins(in: [dir.plugins]).first)
        #expect(record.isLoaded, "\(record.reason ?? "")")
        #expect(host.services.registrations.filter { $0.key.id == "com.test.greeter" }.count == 1)
        host.unloadAll()
    }

    /// What a plugin registers in its deinit is refused (it outlived the unload: a consumer that acquired the
    /// service then called into a closed image).
    @Test func registrationsInDeinitAreRefused() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let host = PluginHost(cacheDirectory: dir.cache)
        try dir.compile(providerSource, as: "liba_provider.so", defines: ["REGISTER_IN_DEINIT": "1"])
        let record = try #require(host.loadPlugins(in: [dir.plugins]).first)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        _ = host.unload(record)
        #expect(!host.services.registrations.contains { $0.key.id == "com.test.late" })
        #expect(
            record.warnings.contains { $0.contains("register_service: refused while the plugin unloads") },
            "\(record.warnings)")
    }

    /// A provider that fills the error buffer without a NUL: the host reads at most the buffer (it read past it
    /// and crashed, blaming the consumer that asked).
    @Test func aProvidersUnterminatedErrorIsReadWithinItsBuffer() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let host = PluginHost(cacheDirectory: dir.cache)
        try dir.compile(
            providerSource, as: "liba_provider.so",
            defines: ["BIND_KEY": CPlugins.quoted("greeting.text"), "FAIL_UNTERMINATED": "1"])
        host.loadPlugins(in: [dir.plugins])
        #expect(throws: (any Error).self) { try host.services.injector.get(key: ServiceKey(id: "greeting.text")) }
        do { _ = try host.services.injector.get(key: ServiceKey(id: "greeting.text")) } catch {
            let text = "\(error)"
            #expect(text.contains("QQQQ") && text.count < 1000, "\(text.prefix(400))")
        }
        host.unloadAll()
    }

    @Test("hot reload: the new provider loads beside the old one (its registration held), then serves after the swap")
    func hotSwapProvider() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let bindsGreeting = ["BIND_KEY": CPlugins.quoted("greeting.text")]
        let providerFile = try dir.compile(providerSource, as: "liba_provider.so", defines: bindsGreeting)
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        let records = host.loadPlugins(in: [dir.plugins])
        let old = records[0]
        let consumer = records[1]
        #expect(Self.render(host, title: "A") == "Hello, A")
        try
            #"{ "bindings": [ { "key": "sum", "plugin": "liba_provider.so", "symbol": "add_u32", "signature": "(u32,u32)->u32", "defaults": [2, 3] } ] }"#
            .write(to: dir.plugins.appendingPathComponent("math.modules.json"), atomically: true, encoding: .utf8)
        #expect(host.services.loadModuleFiles(in: [dir.plugins]).isEmpty)
        #expect(try host.services.injector.get(key: ServiceKey(id: "sum")) as? UInt64 == 5)
        #expect(try host.services.injector.get(key: ServiceKey(id: "greeting.text")) as? String == "Hello")
        try dir.compile(
            providerSource, as: "liba_provider.so",
            defines: bindsGreeting.merging(["GREETING": CPlugins.quoted("Hej")]) { $1 })
        let successor = HotSwap.loadBeside(old, file: providerFile, in: host)
        #expect(successor.record.isLoaded, "\(successor.record.reason ?? "")")
        // The key its hub_host.bind asks for is the old version's: held as its service is (it was refused).
        #expect(successor.held.sorted() == ["binding greeting.text", "service com.test.greeter"])
        #expect(try host.services.injector.get(key: ServiceKey(id: "greeting.text")) as? String == "Hello")
        #expect(Self.render(host, title: "A") == "Hello, A")  // the old version keeps serving meanwhile
        let (report, failed) = HotSwap.commit(successor, in: host)
        #expect(report.outcome == .unloaded && failed.isEmpty, "\(failed)")
        // The module file's binding moved to the new version in the same step.
        #expect(
            host.services.injector.registrations.first { $0.key.id == "sum" }?.owner == successor.record.owner)
        #expect(try host.services.injector.get(key: ServiceKey(id: "sum"), arguments: [Int64(40)]) as? UInt64 == 43)
        #expect(Self.render(host, title: "A") == "Hej, A")
        #expect(try host.services.injector.get(key: ServiceKey(id: "greeting.text")) as? String == "Hej")

        // A build that binds the key twice is refused beside the old one, as it would be on a fresh load.
        try dir.compile(
            providerSource, as: "liba_provider.so",
            defines: bindsGreeting.merging(["BIND_TWICE": "1", "GREETING": CPlugins.quoted("Twice")]) { $1 })
        let twice = HotSwap.loadBeside(successor.record, file: providerFile, in: host)
        #expect(!twice.record.isLoaded)
        #expect(twice.record.reason?.contains("cannot bind it again") == true, "\(twice.record.reason ?? "")")
        #expect(try host.services.injector.get(key: ServiceKey(id: "greeting.text")) as? String == "Hej")
        #expect(try Self.export(consumer, "consumer_last_available", as: IntFn.self)() == 1)
        #expect(host.services.registrations.first { $0.key.id == "com.test.greeter" }?.owner == successor.record.owner)
    }

    @Test("an incompatible version says which version is there and which was asked")
    func versionCheck() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so", defines: ["GREETER_VERSION": "1"])
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        host.loadPlugins(in: [dir.plugins])
        let text = Self.render(host, title: "World")
        #expect(text.hasPrefix("fallback: com.test.greeter is version 1 (from com.test.provider 1.0.0"))
        #expect(text.hasSuffix("2 was asked"))
    }

    @Test("a second provider of the same key is refused, naming the first; the first keeps serving")
    func duplicateProvider() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(
            providerSource, as: "liba_second.so",
            defines: [
                "PLUGIN_ID": CPlugins.quoted("com.test.second"),
                "GREETING": CPlugins.quoted("Second"),
            ])
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        let records = host.loadPlugins(in: [dir.plugins])
        let second = try #require(records.first { $0.file.lastPathComponent == "liba_second.so" })
        #expect(!second.isLoaded)
        #expect(
            second.reason?.contains("service com.test.greeter is already provided by com.test.provider 1.0.0") == true)
        #expect(Self.render(host, title: "you") == "Hello, you")
    }

    @Test("a consumer still holding a service when its provider unloads is reported, and its late release is safe")
    func survivorsAfterUnload() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        let records = host.loadPlugins(in: [dir.plugins])
        let provider = records[0]
        let consumer = records[1]
        #expect(try Self.export(consumer, "consumer_hold", as: IntFn.self)() == 1)
        #expect(host.services.registrations.first { $0.key.id == "com.test.greeter" }?.liveInstances == 1)
        host.unload(provider)
        let survivors = host.services.survivors
        #expect(survivors.count == 1)
        #expect(survivors.first?.description.contains("held 1× by com.test.consumer") == true)
        #expect(host.services.revocations.last?.survivors == survivors)
        // The late release must not call into the unloaded provider; the survivor is then gone.
        typealias VoidFn = @convention(c) () -> Void
        try Self.export(consumer, "consumer_let_go", as: VoidFn.self)()
        #expect(host.services.survivors.isEmpty)
    }

    @Test("what a consumer holds is released when the consumer unloads")
    func consumerUnloadReleases() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        let records = host.loadPlugins(in: [dir.plugins])
        let provider = records[0]
        let consumer = records[1]
        #expect(try Self.export(consumer, "consumer_hold", as: IntFn.self)() == 1)
        host.unload(consumer)
        #expect(try Self.export(provider, "provider_releases", as: IntFn.self)() == 1)
        #expect(host.services.registrations.first { $0.key.id == "com.test.greeter" }?.liveInstances == 0)
    }

    @Test("a plugin may shadow the host's URI opener; when it unloads the host's serves again")
    func hostServiceShadowing() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(uriOpenerSource, as: "libopener.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        #expect(try host.services.openURI("spotify:home").get())
        #expect(host.services.openedURIs == ["spotify:home"])
        let opener = host.load(file: dir.plugins.appendingPathComponent("libopener.so"))
        #expect(opener.isLoaded, "\(opener.reason ?? "")")
        #expect(try host.services.openURI("test:one").get())
        #expect(try !host.services.openURI("other:two").get())
        #expect(try Self.export(opener, "opener_count", as: IntFn.self)() == 2)
        #expect(host.services.openedURIs == ["spotify:home"])
        host.unload(opener)
        #expect(try host.services.openURI("spotify:again").get())
        #expect(host.services.openedURIs == ["spotify:home", "spotify:again"])
        #expect(host.services.registrations.first { $0.key.id == "hub.uri-opener" }?.owner == .host)
    }

    @Test("the host's image loader is reachable through the registry")
    func hostImageLoader() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let file = dir.root.appendingPathComponent("image.png")
        try Data([1, 2, 3, 4]).write(to: file)
        let host = PluginHost(cacheDirectory: dir.cache)
        #expect(try host.services.loadImage(file.absoluteString).get().bytes == [1, 2, 3, 4])
        guard case .failure(let error) = host.services.loadImage("https://example.com/x.png") else {
            Issue.record("an unsupported URI must fail")
            return
        }
        #expect("\(error)".contains("reads only file URIs"))
    }

    @Test("malformed registrations are refused with a reason, and lookups of unknown services say so")
    func malformedServices() throws {
        let expectations = [
            "1": "interface_id is NULL or empty", "2": "\"com.test.bad\" has a NULL table",
            "3": "hub_service is 8 bytes; ABI 1.0 needs", "4": "service is NULL",
        ]
        for (mode, message) in expectations.sorted(by: { $0.key < $1.key }) {
            let dir = try CPlugins()
            defer { dir.cleanUp() }
            try dir.compile(badServiceSource, as: "libbad.so", defines: ["MODE": mode])
            let host = PluginHost(cacheDirectory: dir.cache)
            let record = host.load(file: dir.plugins.appendingPathComponent("libbad.so"))
            typealias StringFn = @convention(c) () -> UnsafePointer<CChar>
            let error = String(cString: try Self.export(record, "bad_last_error", as: StringFn.self)())
            #expect(error.contains(message), "mode \(mode): \(error)")
            #expect(error.hasSuffix("| no provider for com.test.nothing:named"), "mode \(mode): \(error)")
            #expect(host.services.registrations.allSatisfy { $0.owner == .host })
        }
    }
}
