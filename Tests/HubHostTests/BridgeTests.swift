import CHubPlugin
import Foundation
import HubCore
import HubTestKit
import Logging
import Testing

@testable import HubHost

/// The C bridge: plugin components, models, drawing, extensions, layout managers, actions, the clock.
@Suite("C bridge", .pluginCode)
struct BridgeTests {
    /// A host with the fixture plugin loaded.
    final class Loaded {
        let fx: FixtureBuilder
        let host: PluginHost
        let record: PluginRecord
        init() throws {
            fx = try FixtureBuilder()
            try fx.cPlugin("libfixture.so")
            host = PluginHost(cacheDirectory: fx.cache)
            record = try #require(host.loadPlugins(in: [fx.plugins]).first)
            try #require(record.state == .active)
        }
        deinit { fx.cleanUp() }
    }

    static func model(
        _ component: String, title: String? = "Hello", custom: JSONObject? = nil,
        children: [ComponentModel] = []
    ) -> ComponentModel {
        ComponentModel(
            identifier: "m-\(component)",
            componentIdentifier: ComponentIdentifier(lenient: component, defaultNamespace: "default"),
            componentCategory: "row", title: title, mainImage: ImageData(kind: .main, uri: "https://img/1.png"),
            customImages: ["logo": ImageData(kind: .custom, identifier: "logo", uri: "https://img/logo.png")],
            custom: custom, children: children)
    }

    @Test("a plugin component sizes, configures and draws through the view builder")
    func componentLifecycle() throws {
        let loaded = try Loaded()
        let model = Self.model("fixture:label", custom: JSONObject([("extra", .number(5)), ("k", .string("v"))]))
        let (component, source) = loaded.host.registry.createComponent(for: model)
        #expect(source == .factory(namespace: "fixture", owner: loaded.record.owner))
        #expect(component.layoutTraits == [.compactWidth, .stackable])
        #expect(
            component.preferredViewSize(for: model, containerSize: Size(width: 300, height: 800))
                == Size(width: 150, height: 45))
        component.loadView()
        component.configureView(with: model, containerSize: Size(width: 300, height: 800))
        let view = ViewBuilder()
        component.drawView(into: view, size: Size(width: 150, height: 45))
        #expect(view.items.count == 3)
        #expect(
            view.items[0]
                == .rect(
                    Rect(x: 0, y: 0, width: 150, height: 45),
                    RectStyle(fill: Color(rgba: 0x1122_33FF), cornerRadius: 4)))
        #expect(
            view.items[1]
                == .text(
                    Rect(x: 4, y: 4, width: 142, height: 16), "fixture:label Hello sel=0",
                    TextStyle(fontSize: 12, lineLimit: 1)))
        #expect(
            view.items[2]
                == .text(
                    Rect(x: 4, y: 20, width: 142, height: 16), #"{"extra":5,"k":"v"}"#,
                    TextStyle(fontSize: 12, lineLimit: 1)))
        #expect(FixtureStats.of(loaded.record)?.configured == 1)
        #expect(loaded.record.liveComponentCount == 1)

        // hub.selection-state/1 reaches the plugin.
        let selection = try #require(component.selectionStateHandling)
        selection.updateViewForSelectionState(.selected)
        view.removeAll()
        component.drawView(into: view, size: Size(width: 150, height: 45))
        #expect(
            view.items[1]
                == .text(
                    Rect(x: 4, y: 4, width: 142, height: 16), "fixture:label Hello sel=2",
                    TextStyle(fontSize: 12, lineLimit: 1)))
        // Extensions the plugin does not implement are nil.
        #expect(component.childrenSupport == nil)
        #expect(component.imageHandling == nil)
        #expect(component.restorableUIState == nil)

        component.destroy()
        #expect(FixtureStats.of(loaded.record)?.destroyed == 1)
        #expect(loaded.record.liveComponentCount == 0)
        component.destroy()  // a second destroy is a no-op
        #expect(FixtureStats.of(loaded.record)?.destroyed == 1)
    }

    @Test("unknown names and namespaces fall back by category")
    func fallback() throws {
        let loaded = try Loaded()
        let unknownName = loaded.host.registry.createComponent(for: Self.model("fixture:nope"))
        #expect(unknownName.source == .fallback(category: "row"))
        #expect(unknownName.component is FallbackRowComponent)
        let unknownNamespace = loaded.host.registry.createComponent(
            identifier: ComponentIdentifier(namespace: "zzz", name: "x"),
            category: "card")
        #expect(unknownNamespace.component is FallbackCardComponent)
    }

    /// A child delegate recording what the plugin asked.
    final class RecordingChildDelegate: ChildDelegate {
        var created: [Int] = []
        func createChild(at index: Int) -> Size {
            created.append(index)
            return Size(width: 10, height: 20)
        }
        func willDisplayChild(at index: Int) {}
        func didStopDisplayingChild(at index: Int) {}
        func childSelected(at index: Int, customData: JSONObject?) {}
    }

    final class RecordingPerformer: ActionPerformer {
        var performed: [ComponentIdentifier] = []
        func performAction(_ identifier: ComponentIdentifier, customData: JSONObject?) -> Bool {
            performed.append(identifier)
            return true
        }
    }

    @Test("children: the plugin gets a child delegate and places its child")
    func children() throws {
        let loaded = try Loaded()
        let model = Self.model("fixture:box", children: [Self.model("fixture:label", title: "child")])
        let component = loaded.host.registry.createComponent(for: model).component
        #expect(component.layoutTraits == [.fullWidth])
        let delegate = RecordingChildDelegate()
        let children = try #require(component.childrenSupport)
        children.childDelegate = delegate
        #expect(component.actionPerformerSupport != nil)
        component.loadView()
        component.configureView(with: model, containerSize: Size(width: 320, height: 600))
        let view = ViewBuilder()
        component.drawView(into: view, size: Size(width: 320, height: 100))
        #expect(delegate.created == [0])
        #expect(view.items.last == .child(Rect(x: 0, y: 40, width: 10, height: 20), index: 0))
    }

    @Test("model accessors return host-owned strings that live as long as the model")
    func modelAccessors() throws {
        let loaded = try Loaded()
        let table = try #require(loaded.record.hostTable)
        let child = Self.model("fixture:label", title: "kid")
        let model = Self.model(
            "fixture:label", custom: JSONObject([("n", .number(2.5)), ("flag", .bool(true)), ("s", .string("text"))]),
            children: [child])
        let handle = CInterop.handle(model)
        let t = table.pointee
        let title = try #require(t.model_string(table, handle, HUB_MODEL_TITLE))
        #expect(String(cString: title) == "Hello")
        #expect(t.model_string(table, handle, HUB_MODEL_TITLE) == title, "cached: the same pointer")
        #expect(t.model_string(table, handle, HUB_MODEL_SUBTITLE) == nil)
        #expect(String(cString: t.model_string(table, handle, HUB_MODEL_COMPONENT_NAMESPACE)!) == "fixture")
        #expect(String(cString: t.model_string(table, handle, HUB_MODEL_COMPONENT_ID)!) == "fixture:label")
        #expect(
            String(cString: t.model_json(table, handle, HUB_MODEL_CUSTOM)!) == #"{"flag":true,"n":2.5,"s":"text"}"#
                || String(cString: t.model_json(table, handle, HUB_MODEL_CUSTOM)!)
                    == #"{"n":2.5,"flag":true,"s":"text"}"#
        )
        #expect(t.model_json(table, handle, HUB_MODEL_METADATA) == nil)
        #expect(String(cString: t.model_custom_string(table, handle, "s")!) == "text")
        #expect(t.model_custom_string(table, handle, "n") == nil)
        var number = 0.0
        #expect(t.model_custom_number(table, handle, "n", &number) && number == 2.5)
        #expect(t.model_custom_number(table, handle, "flag", &number) && number == 1)
        #expect(!t.model_custom_number(table, handle, "s", &number))
        #expect(String(cString: t.model_image_uri(table, handle, HUB_IMAGE_MAIN, nil)!) == "https://img/1.png")
        #expect(String(cString: t.model_image_uri(table, handle, HUB_IMAGE_CUSTOM, "logo")!) == "https://img/logo.png")
        #expect(t.model_image_uri(table, handle, HUB_IMAGE_BACKGROUND, nil) == nil)
        #expect(t.model_child_count(table, handle) == 1)
        let childHandle = try #require(t.model_child(table, handle, 0))
        #expect(String(cString: t.model_string(table, childHandle, HUB_MODEL_TITLE)!) == "kid")
        #expect(t.model_child(table, handle, 1) == nil)

        var style = hub_text_style()
        style.struct_size = UInt32(MemoryLayout<hub_text_style>.size)
        style.font_size = 10
        let measured = t.measure_text(table, "hello world", &style, 0)
        let expected = TextMetrics.measure("hello world", style: TextStyle(fontSize: 10), maxWidth: 0)
        #expect(measured.width == expected.width && measured.height == expected.height)
    }

    @Test("layout managers, action factories, handlers and timers registered by a plugin work through HubCore")
    func layoutAndActions() throws {
        let loaded = try Loaded()
        let host = loaded.host
        let manager = try #require(host.layoutManagers["fixture"])
        #expect(host.layoutManagers.entry(forKey: "fixture")?.owner == loaded.record.owner)
        #expect(manager.marginBetweenComponent(withTraits: [.fullWidth], andContentEdge: .top) == 7)
        #expect(
            manager.horizontalMarginForComponent(withTraits: [.compactWidth, .stackable], precedingTraits: []) == 2)
        #expect(
            manager.horizontalOffsetForComponents(
                withTraits: [[.centered], [], [.compactWidth]],
                firstComponentLeadingOffset: 1, lastComponentTrailingOffset: 2) == 3)

        let factory = try #require(host.actionFactories["fixture"])
        #expect(factory.createAction(forName: "nope") == nil)
        let action = try #require(factory.createAction(forName: "go"))
        var completions = 0
        #expect(
            action.perform(with: ActionContext(trigger: .selection), completion: { _, _ in completions += 1 })
                == .performed)
        let async = ActionContext(
            trigger: .component, actionIdentifier: ComponentIdentifier(namespace: "fixture", name: "go"),
            customData: JSONObject([("mode", .string("async"))]))
        #expect(action.perform(with: async, completion: { _, _ in completions += 1 }) == .pending)
        #expect(completions == 1)
        action.destroy()

        // The plugin scheduled a timer on the host clock: it fires only when the clock is advanced past it.
        #expect(host.scheduler.pendingCount == 1)
        host.scheduler.advance(by: 0.5)
        #expect(FixtureStats.of(loaded.record)?.timerFired == 0)
        host.scheduler.advance(by: 0.5)
        #expect(FixtureStats.of(loaded.record)?.timerFired == 1)

        #expect(host.actionHandlers.count == 1)
        let handler = try #require(host.actionHandlers.first?.handler)
        #expect(
            handler.handleAction(
                with: ActionContext(
                    trigger: .selection,
                    actionIdentifier: ComponentIdentifier(namespace: "fixture", name: "handled"))))
        #expect(!handler.handleAction(with: ActionContext(trigger: .selection)))
    }

    @Test("the host scheduler fires timers in due order when advanced")
    func scheduler() {
        let scheduler = HostScheduler()
        var fired: [String] = []
        scheduler.schedule(after: 2, owner: .host) { fired.append("b") }
        scheduler.schedule(after: 1, owner: .host) {
            fired.append("a")
            scheduler.schedule(after: 0.5, owner: .host) { fired.append("a2") }
        }
        scheduler.schedule(after: 5, owner: Owner(id: "x")) { fired.append("x") }
        scheduler.advance(by: 3)
        #expect(fired == ["a", "a2", "b"])
        #expect(scheduler.now == 3)
        #expect(scheduler.cancelAll(ownedBy: Owner(id: "x")) == 1)
        scheduler.advance(by: 10)
        #expect(fired == ["a", "a2", "b"])
    }

    /// Collects log entries.
    final class RecordingLog: @unchecked Sendable {
        var entries: [(level: Logger.Level, message: String, plugin: String?)] = []
    }

    struct RecordingHandler: LogHandler {
        let log: RecordingLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let plugin = (event.metadata?["plugin"] ?? metadata["plugin"]).map { "\($0)" }
            log.entries.append((event.level, event.message.description, plugin))
        }
    }

    @Test("a plugin's log calls reach swift-log under its plugin id")
    func logging() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        try fx.cPlugin("libfixture.so")
        let log = RecordingLog()
        let logger = Logger(label: "test") { _ in RecordingHandler(log: log) }
        let host = PluginHost(cacheDirectory: fx.cache, logger: logger)
        host.loadPlugins(in: [fx.plugins])
        let entry = try #require(log.entries.first { $0.message == "fixture initialised" })
        #expect(entry.level == .debug)
        #expect(entry.plugin == "com.example.fixture")
    }
}
