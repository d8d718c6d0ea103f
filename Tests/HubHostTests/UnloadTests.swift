import CHubPlugin
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubHost

@Suite("Unload", .pluginCode)
struct UnloadTests {
    /// The slots that name plugins in a worker's black box are given again once an image is unmapped: used once
    /// each, they ran out after 4,096 loads in one worker (a long dev session), and a crash then named no plugin.
    @Test func blackBoxSlotsOfUnmappedImagesAreGivenAgain() {
        var last: UInt16 = 0
        for i in 0..<(BlackBox.slotCount + 500) {
            last = CallRecorder.register(path: "/p/lib\(i).so", id: "x", version: "\(i)", digest: "d")
            if last == 0 { break }
            CallRecorder.imageUnmapped(slot: last)
        }
        #expect(last != 0, "a slot for every load")
    }

    /// A plugin may unregister its namespace from inside one of its components' calls (the header allows it): the
    /// components go once that call has returned, not while it runs (its instance was freed under it).
    @Test func unregisteringFromInsideAComponentsDrawWaitsForItToReturn() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libfixture.so", ["FIXTURE_UNREGISTER_IN_DRAW": "1"])
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        let pipeline = RenderPipeline(registry: host.registry)
        let view = try ViewModelDecoder().decode(
            bytes: Array(#"{"body": [{"id": "a", "component": {"id": "fixture:label"}, "text": {"title": "A"}}]}"#.utf8)
        ).viewModel
        pipeline.render(view, viewport: Size(width: 320, height: 480))
        let stats = try #require(FixtureStats.of(record))
        #expect(stats.destroyedInDraw == 0, "destroyed while its draw ran")
        #expect(stats.destroyed == stats.created, "every instance (the sizing one too) goes once draw returned")
        #expect(host.registry.entry(forNamespace: "fixture") == nil)
        host.unloadAll()
    }

    /// A font size of 0 or less is the header's default (14), not a slip to warn of (it was warned of as "outside
    /// 0.5…1000").
    /// A plugin may call through its host table after its unload (a thread it did not stop, a destructor run at
    /// exit): the table stays, refusing, instead of being freed memory the call crashed the host in.
    @Test func aHostTableCalledAfterItsUnloadRefuses() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libfixture.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        let table = try #require(record.hostTable)
        _ = host.unload(record)
        table.pointee.log(table, HUB_LOG_ERROR, "after the unload")
        var error = [CChar](repeating: 0, count: 200)
        let registered = "late".withCString { name in
            table.pointee.register_layout_manager(table, name, nil, &error, 200)
        }
        #expect(!registered)
        #expect(String(cString: error) == "register_layout_manager: the plugin is not loaded (its unload has finished)")
    }

    @Test func aFontSizeOfZeroIsTheHeadersDefault() {
        #expect(BoundaryValues.fontSize(0) == 14)
        #expect(BoundaryValues.fontSize(-2) == 14)
        #expect(!BoundaryValues.replacedLines.contains { $0.contains("font size 0") || $0.contains("font size -2") })
        #expect(BoundaryValues.fontSize(12) == 12)
    }

    @Test("unload revokes every registration, destroys live components, and really unmaps a C image")
    func unloadRevokesEverything() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        try fx.cPlugin("libfixture.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = try #require(host.loadPlugins(in: [fx.plugins]).first)
        let copy = try #require(record.privateCopy)

        // Live components the "renderer" still holds, and a pending timer.
        let model = BridgeTests.model("fixture:label")
        let label = host.registry.createComponent(for: model).component
        let box = host.registry.createComponent(for: BridgeTests.model("fixture:box")).component
        label.loadView()
        label.configureView(with: model, containerSize: Size(width: 100, height: 100))
        let action = try #require(host.actionFactories["fixture"]?.createAction(forName: "go"))
        _ = action.perform(with: ActionContext(trigger: .component, customData: JSONObject([("async", .bool(true))]))) {
            _, _ in
        }
        #expect(host.scheduler.pendingCount == 1)

        // What the plugin saw, read just before its deinit.
        var seen: FixtureStats?
        host.unloadObservers.append { if $0 === record { seen = FixtureStats.of($0) } }

        let report = host.unload(record)
        #expect(report.outcome == .unloaded, "\(report)")
        #expect(report.destroyedComponents == 2)
        #expect(report.revoked.contains("namespace fixture"))
        #expect(report.revoked.contains("layout manager fixture"))
        #expect(report.revoked.contains("action namespace fixture"))
        #expect(seen?.destroyed == 2)
        #expect(seen?.factoryDestroyed == 1)
        #expect(seen?.actionFactoryDestroyed == 1)
        #expect(record.state == .unloaded)

        #expect(host.registry.allEntries.isEmpty)
        #expect(host.layoutManagers.allEntries.isEmpty)
        #expect(host.actionFactories.allEntries.isEmpty)
        #expect(host.actionHandlers.isEmpty)
        #expect(host.scheduler.pendingCount == 0)
        #expect(host.registry.createComponent(for: model).source == .fallback(category: "row"))

        // The revoked components are harmless no-ops now (their code is gone).
        #expect(label.preferredViewSize(for: model, containerSize: Size(width: 100, height: 100)) == .zero)
        let view = ViewBuilder()
        label.drawView(into: view, size: Size(width: 10, height: 10))
        #expect(view.items.isEmpty)
        label.destroy()
        box.destroy()
        action.destroy()

        // Really gone: not mapped. Its private copy stays in the cache, named by its content, for other runs (and the
        // weekly prune).
        #expect(!FixtureBuilder.isMapped(copy.path))
        #expect(host.unload(record).outcome == .notLoaded)
    }

    @Test("load → unload → load of a C plugin runs fresh code each time")
    func reloadC() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libfixture.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        var owners: [Owner] = []
        for round in 1...3 {
            let record = host.load(file: file)
            owners.append(record.owner)
            #expect(record.state == .active, "round \(round): \(record.reason ?? "")")
            let component = host.registry.createComponent(for: BridgeTests.model("fixture:label")).component
            // Static state starts from zero: the image was really unloaded and loaded again.
            #expect(FixtureStats.of(record)?.created == 1, "round \(round)")
            component.destroy()
            let copy = try #require(record.privateCopy)
            #expect(FixtureBuilder.isMapped(copy.path))
            #expect(host.unload(record).outcome == .unloaded)
            #expect(!FixtureBuilder.isMapped(copy.path))
        }
        // One record for the file, the last load's: each kept record grew a dev session's worker by about 7 KB a
        // rebuild.
        #expect(host.plugins.map(\.state) == [.unloaded])
        // Each load is its own owner.
        #expect(Set(owners).count == 3)
    }

    @Test("a C plugin that unregisters its own namespace loses its live components")
    func unregisterNamespace() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        try fx.cPlugin("libfixture.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = try #require(host.loadPlugins(in: [fx.plugins]).first)
        let component = host.registry.createComponent(for: BridgeTests.model("fixture:label")).component
        let table = try #require(record.hostTable)
        table.pointee.unregister_component_factory(table, "fixture")
        #expect(host.registry.entry(forNamespace: "fixture") == nil)
        #expect(record.namespaces.isEmpty)
        #expect(FixtureStats.of(record)?.destroyed == 1)
        #expect(FixtureStats.of(record)?.factoryDestroyed == 1)
        #expect(
            component.preferredViewSize(
                for: BridgeTests.model("fixture:label"), containerSize: Size(width: 9, height: 9)) == .zero)
        // Unregistering an unknown namespace, or someone else's, is a no-op.
        table.pointee.unregister_component_factory(table, "nobody")
        // Re-registering after unregister works.
        #expect(host.unload(record).outcome == .unloaded)
        #expect(host.load(file: record.file).state == .active)
    }

    @Test("unloadAll unloads every plugin, newest first, and each is really unmapped")
    func unloadAll() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        for name in ["one", "two", "three"] {
            try fx.cPlugin(
                "lib\(name).so", ["FIXTURE_NAMESPACE": "\"\(name)\"", "FIXTURE_ID": "\"com.example.\(name)\""])
        }
        try fx.file("libbad.so", [1, 2, 3])
        let host = PluginHost(cacheDirectory: fx.cache)
        let records = host.loadPlugins(in: [fx.plugins])
        let copies = records.compactMap { $0.isLoaded ? $0.privateCopy?.path : nil }
        #expect(copies.count == 3)
        let reports = host.unloadAll()
        #expect(reports.map(\.file) == ["libtwo.so", "libthree.so", "libone.so"])
        #expect(reports.allSatisfy { $0.outcome == .unloaded })
        #expect(copies.allSatisfy { !FixtureBuilder.isMapped($0) })
        #expect(host.registry.allEntries.isEmpty)
        #expect(host.unloadAll().isEmpty)
    }

    @Test("an image something else still holds is reported as still mapped, and its copy is kept")
    func stillMappedIsReported() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libheld.so")
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        let copy = try #require(record.privateCopy?.path)
        // A second reference to the same image (as another library depending on it would hold).
        let extra = try #require(dlopen(copy, RTLD_NOW | RTLD_NOLOAD))
        let report = host.unload(record)
        guard case .stillMapped(let detail) = report.outcome else {
            Issue.record("expected stillMapped, got \(report)")
            dlclose(extra)
            return
        }
        #expect(detail.contains(copy))
        #expect(report.description.hasPrefix("libheld.so: still mapped after dlclose: "))
        #expect(record.warnings.contains { $0.hasPrefix("still mapped after dlclose") })
        #expect(FileManager.default.fileExists(atPath: copy), "a mapped copy is not deleted")
        #expect(host.registry.allEntries.isEmpty, "registrations are revoked all the same")
        dlclose(extra)
        #expect(!FixtureBuilder.isMapped(copy))
    }
}
