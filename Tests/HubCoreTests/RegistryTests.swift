import HubCore
import Testing

/// The component registry with the seed's semantics (HUBComponentRegistry): register, unregister, create.
@Suite("Component registry")
struct RegistryTests {
    final class Named: Component {
        let name: String
        init(_ name: String) { self.name = name }
        var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
        func loadView() {}
        func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size { .zero }
        func prepareViewForReuse() {}
        func configureView(with model: ComponentModel, containerSize: Size) {}
        func drawView(into view: ViewBuilder, size: Size) {}
    }

    /// Makes components for a fixed set of names; nil for others.
    final class Factory: ComponentFactory {
        let tag: String
        let componentNames: [String]
        var asked: [String] = []
        init(_ tag: String, names: [String]) {
            self.tag = tag
            self.componentNames = names
        }
        func createComponent(forName name: String) -> Component? {
            asked.append(name)
            return componentNames.contains(name) ? Named("\(tag):\(name)") : nil
        }
    }

    let alice = Owner(id: "alice#1", displayName: "com.alice 1.0 (liba.so)")
    let bob = Owner(id: "bob#2", displayName: "com.bob 2.0 (libb.so)")

    func model(_ id: String, category: String = "row") -> ComponentModel {
        ComponentModel(
            identifier: "m", componentIdentifier: ComponentIdentifier(lenient: id, defaultNamespace: "default"),
            componentCategory: category)
    }

    @Test("register, create, unregister")
    func registerCreateUnregister() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        let factory = Factory("A", names: ["row"])
        try registry.register(factory, forNamespace: "demo", owner: alice)
        #expect(registry.entry(forNamespace: "demo")?.owner == alice)

        let (component, source) = registry.createComponent(for: model("demo:row"))
        #expect((component as? Named)?.name == "A:row")
        #expect(source == .factory(namespace: "demo", owner: alice))
        #expect(factory.asked == ["row"])

        var told: [String] = []
        registry.addUnregisterObserver { told.append($0.namespace) }
        #expect(registry.unregister(namespace: "demo")?.owner == alice)
        #expect(told == ["demo"])
        #expect(registry.entry(forNamespace: "demo") == nil)
        #expect(registry.createComponent(for: model("demo:row")).source == .fallback(category: "row"))
    }

    @Test("a second claim on a namespace is refused naming both owners; the first keeps it")
    func duplicateRefused() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try registry.register(Factory("A", names: ["row"]), forNamespace: "demo", owner: alice)
        #expect(throws: RegistryError.namespaceTaken(namespace: "demo", owner: alice, claimant: bob)) {
            try registry.register(Factory("B", names: ["row"]), forNamespace: "demo", owner: bob)
        }
        do {
            try registry.register(Factory("B", names: ["row"]), forNamespace: "demo", owner: bob)
        } catch {
            #expect(
                "\(error)"
                    == "namespace 'demo' is already registered by com.alice 1.0 (liba.so); com.bob 2.0 (libb.so) cannot claim it"
            )
        }
        #expect(registry.entry(forNamespace: "demo")?.owner == alice)
        #expect((registry.createComponent(for: model("demo:row")).component as? Named)?.name == "A:row")
    }

    @Test("invalid namespaces are refused")
    func invalidNamespace() {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        #expect(throws: RegistryError.self) {
            try registry.register(Factory("A", names: []), forNamespace: "", owner: alice)
        }
        #expect(throws: RegistryError.self) {
            try registry.register(Factory("A", names: []), forNamespace: "a:b", owner: alice)
        }
        // Names no view could write, or that would flood every message echoing them, with the reason.
        let refusals: [(String, String)] = [
            ("\u{1b}[31mred", "\"\\u{1b}[31mred\": it holds control characters"),
            ("bad\u{FFFD}bytes", "it is not UTF-8 text"),
            (String(repeating: "n", count: 300), "it is 300 bytes long (at most 256)"),
        ]
        for (namespace, reason) in refusals {
            #expect {
                try registry.register(Factory("A", names: []), forNamespace: namespace, owner: alice)
            } throws: { error in
                "\(error)".hasSuffix(reason) && !"\(error)".contains("\u{1b}")
            }
        }
        let actions = OwnedRegistry<Int>(kind: "action namespace")
        #expect(throws: OwnedRegistry<Int>.Failure.self) { try actions.register(1, forKey: "tab\there", owner: alice) }
        #expect(registry.allEntries.isEmpty && actions.allEntries.isEmpty)
        try? registry.register(Factory("A", names: []), forNamespace: "com.example.ünïcode-ok", owner: alice)
        #expect(registry.allEntries.count == 1, "non-ASCII text is a name")
    }

    @Test("a pool and a sizing cache are told of unregistrations while they live, and leave no observer behind")
    func poolObserversLeaveWithTheirOwners() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try registry.register(Factory("A", names: ["row"]), forNamespace: "demo", owner: alice)
        var pipeline: RenderPipeline? = RenderPipeline(registry: registry)
        #expect(registry.unregisterObserverCount == 2)  // its pool and its sizing cache
        let view = ViewModel(body: [model("demo:row")])
        pipeline!.render(view, viewport: Size(width: 320, height: 480))
        #expect(pipeline!.pool.wrapperCount == 1 && pipeline!.sizing.count == 1)
        registry.unregister(namespace: "demo")
        #expect(pipeline!.pool.wrapperCount == 0 && pipeline!.sizing.count == 0)  // both purged
        pipeline = nil
        #expect(registry.unregisterObserverCount == 0)
        // Unregistering after they are gone calls nothing of theirs.
        try registry.register(Factory("A", names: ["row"]), forNamespace: "demo", owner: alice)
        #expect(registry.unregister(namespace: "demo")?.owner == alice)
    }

    @Test("unregistering an unknown namespace, or someone else's, is a no-op")
    func unknownUnregister() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        var told = 0
        registry.addUnregisterObserver { _ in told += 1 }
        #expect(registry.unregister(namespace: "nothing") == nil)
        try registry.register(Factory("A", names: ["row"]), forNamespace: "demo", owner: alice)
        #expect(registry.unregister(namespace: "demo", owner: bob) == nil)
        #expect(registry.entry(forNamespace: "demo")?.owner == alice)
        #expect(told == 0)
    }

    @Test("the fallback makes a component for the model's category when no factory can")
    func fallbackByCategory() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        let factory = Factory("A", names: ["row"])
        try registry.register(factory, forNamespace: "demo", owner: alice)
        // No factory for the namespace.
        let card = registry.createComponent(for: model("other:thing", category: "card"))
        #expect(card.component is FallbackCardComponent)
        #expect(card.source == .fallback(category: "card"))
        // The factory returns nil for the name.
        let row = registry.createComponent(for: model("demo:unknown", category: "row"))
        #expect(row.component is FallbackRowComponent)
        #expect(row.source == .fallback(category: "row"))
        #expect(factory.asked == ["unknown"])
        // A bare name uses the default namespace.
        #expect(registry.createComponent(for: model("row")).source == .fallback(category: "row"))
    }

    @Test("a custom fallback handler decides per category")
    func customFallback() {
        final class Fallback: ComponentFallbackHandler {
            var categories: [String] = []
            func createFallbackComponent(forCategory category: String) -> Component {
                categories.append(category)
                return Named("fallback:\(category)")
            }
        }
        let fallback = Fallback()
        let registry = ComponentRegistry(fallbackHandler: fallback)
        let made = registry.createComponent(for: model("x:y", category: "carousel")).component
        #expect((made as? Named)?.name == "fallback:carousel")
        #expect(fallback.categories == ["carousel"])
    }

    @Test("re-register after unregister; unregisterAll revokes exactly one owner's namespaces")
    func reregisterAndRevokeOwner() throws {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try registry.register(Factory("A", names: ["row"]), forNamespace: "demo", owner: alice)
        registry.unregister(namespace: "demo")
        try registry.register(Factory("B", names: ["row"]), forNamespace: "demo", owner: bob)
        #expect((registry.createComponent(for: model("demo:row")).component as? Named)?.name == "B:row")

        try registry.register(Factory("A", names: []), forNamespace: "a1", owner: alice)
        try registry.register(Factory("A", names: []), forNamespace: "a2", owner: alice)
        let revoked = registry.unregisterAll(ownedBy: alice)
        #expect(revoked.map(\.namespace) == ["a1", "a2"])
        #expect(registry.allEntries.map(\.namespace) == ["demo"])
    }

    @Test("OwnedRegistry: taken keys refused naming both owners; revoking an owner removes exactly its entries")
    func ownedRegistry() throws {
        let registry = OwnedRegistry<String>(kind: "layout manager")
        try registry.register("one", forKey: "compact", owner: alice)
        do {
            try registry.register("two", forKey: "compact", owner: bob)
            Issue.record("a taken key was accepted")
        } catch {
            #expect(
                "\(error)"
                    == "layout manager 'compact' is already registered by com.alice 1.0 (liba.so); com.bob 2.0 (libb.so) cannot claim it"
            )
        }
        try registry.register("three", forKey: "wide", owner: bob)
        #expect(registry["compact"] == "one")
        #expect(registry.unregister(key: "compact", owner: bob) == nil)
        #expect(registry.unregisterAll(ownedBy: alice).map(\.key) == ["compact"])
        #expect(registry.allEntries.map(\.key) == ["wide"])
    }
}
