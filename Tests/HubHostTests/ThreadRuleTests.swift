import CHubPlugin
import Foundation
import HubTestKit
import Testing

@testable import HubHost

/// The header's thread rule is enforced, not raced: a [main-thread] host function called from another thread is
/// refused (the bridge keeps its state without locks), and the same call on the host's thread goes through.
@Suite(.serialized, .pluginCode) struct ThreadRuleTests {
    @Test func aHostCallFromAnotherThreadIsRefusedAndFromTheMainThreadAccepted() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libthreads.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        nonisolated(unsafe) let table = try #require(record.hostTable)
        let unregister = try #require(table.pointee.unregister_component_factory)
        #expect(host.registry.entry(forNamespace: "fixture") != nil)

        // From a thread of the plugin's own: refused, nothing changes.
        let done = DispatchSemaphore(value: 0)
        Thread {
            unregister(table, "fixture")
            done.signal()
        }.start()
        done.wait()
        #expect(host.registry.entry(forNamespace: "fixture") != nil, "the off-thread call must be refused")
        #expect(record.offThreadCalls.withLock { $0 }, "the refusal is reported")

        // From the host's main thread: accepted.
        unregister(table, "fixture")
        #expect(host.registry.entry(forNamespace: "fixture") == nil)
        host.unloadAll()
    }

    /// The model readers, called several times per component, check the thread too (a Rust author's thread read
    /// models while the host changed them, unnoticed).
    @Test func aModelReadFromAnotherThreadIsRefused() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libmodels.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        nonisolated(unsafe) let table = try #require(record.hostTable)
        let read = try #require(table.pointee.model_string)
        let model = BridgeTests.model("fixture:label", title: "Hello")
        nonisolated(unsafe) let handle = CInterop.handle(model)
        nonisolated(unsafe) var offThread: UnsafePointer<CChar>? = UnsafePointer(bitPattern: 1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            offThread = read(table, handle, HUB_MODEL_TITLE)
            done.signal()
        }.start()
        done.wait()
        #expect(offThread == nil, "the off-thread read must be refused")
        #expect(record.offThreadCalls.withLock { $0 }, "the refusal is reported")
        #expect(read(table, handle, HUB_MODEL_TITLE).map { String(cString: $0) } == "Hello")
        withExtendedLifetime(model) {}
        host.unloadAll()
    }

    @Test func adoptingAThreadMovesTheRule() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libadopt.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        try #require(record.isLoaded)
        nonisolated(unsafe) let table = try #require(record.hostTable)
        let unregister = try #require(table.pointee.unregister_component_factory)
        let done = DispatchSemaphore(value: 0)
        Thread {
            host.adoptCurrentThread()
            unregister(table, "fixture")
            done.signal()
        }.start()
        done.wait()
        #expect(host.registry.entry(forNamespace: "fixture") == nil)
    }
}
