import CHubPlugin
import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// HubPluginKit through the real host: the SDK's descriptor, init, registrar, component bridge, text metrics and
/// selection-state extension, exercised in process (`PluginHost.loadEmbedded`), as `NIOEmbedded` exercises
/// swift-nio handlers without a network.
@Suite(.serialized, .pluginCode) struct PluginKitTests {
    static let view = """
        {"body": [
          {"id": "l", "component": {"id": "kit:label"}, "text": {"title": "Hello"}},
          {"id": "b", "component": {"id": "kit:box"}},
          {"id": "x", "component": {"id": "kit:nothing", "category": "card"}}
        ]}
        """

    func host() -> (PluginHost, PluginRecord) {
        let host = PluginHost(cacheDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("kit"))
        let record = host.loadEmbedded(EmbeddedPluginEntry.descriptor, name: "embedded")
        return (host, record)
    }

    @Test func theDescriptorAndRegistrationsReachTheHost() throws {
        let (host, record) = host()
        defer { host.unloadAll() }
        #expect(record.state == .pinned, "\(record.reason ?? "")")
        #expect(record.id == "com.example.embedded" && record.version == "2.0.0" && record.abi == "1.1")
        #expect(record.namespaces.map(\.namespace) == ["kit"])
        #expect(record.namespaces.first?.components == ["box", "label"])
    }

    @Test func componentsLayOutAndDrawThroughTheBridge() throws {
        let (host, _) = host()
        defer { host.unloadAll() }
        let decoded = try ViewModelDecoder(file: "kit.json").decode(Self.view)
        let pipeline = RenderPipeline(registry: host.registry, layoutManager: DefaultLayoutManager(margin: 0))
        let tree = pipeline.render(decoded.viewModel, viewport: Size(width: 320, height: 480))
        defer { pipeline.tearDown() }
        try #require(tree.body.count == 3)
        #expect(tree.body[0].frame.size == Size(width: 100, height: 40))
        #expect(tree.body[1].frame.width == 320 && tree.body[1].frame.height == 60)
        guard case .fallback = tree.body[2].source else {
            Issue.record("an unknown component of the namespace falls back")
            return
        }
        #expect(
            tree.body[0].displayList.contains { if case .text(_, let text, _) = $0 { text == "Hello" } else { false } })
    }

    @Test func selectionStateReachesTheSDKComponent() throws {
        let (host, _) = host()
        defer { host.unloadAll() }
        let decoded = try ViewModelDecoder(file: "kit.json").decode(Self.view)
        let engine = host.makeEventEngine(
            viewModel: decoded.viewModel, viewport: Size(width: 320, height: 480),
            layoutManager: DefaultLayoutManager(margin: 0))
        engine.load()
        func boxFill() -> UInt32? {
            let box = engine.renderTree().body[1].displayList.first
            if case .rect(_, let style)? = box { return style.fill.rgba }
            return nil
        }
        #expect(boxFill() == 0x1DB9_54FF)
        engine.apply(.highlight(.indexPath([1])))
        engine.apply(.advance(seconds: 0.25))
        #expect(boxFill() == 0xFF3B_30FF, "highlighted after Hub's 0.2 s delay")
        engine.pipeline.tearDown()
    }

    @Test func unloadingRevokesTheNamespaceAndKeepsTheCodeMapped() throws {
        let (host, record) = host()
        let report = host.unload(record)
        #expect(record.state == .retired, "\(report)")
        #expect(host.registry.entry(forNamespace: "kit") == nil)
        // Loaded again (as a hot reload would): the SDK's descriptor and init serve a second time.
        let again = host.loadEmbedded(EmbeddedPluginEntry.descriptor, name: "embedded")
        #expect(again.isLoaded, "\(again.reason ?? "")")
        host.unloadAll()
    }
}
