import CHubPlugin
import HubCore
import HubTestKit
import Testing

@testable import HubHost

/// The C strings the host hands plugins for a model (`model_string`, …) live as long as the model is valid
/// for a plugin — an instance configured with it or with an ancestor, or a call borrowing it — and are freed
/// after, so long scrolls and renders keep only the strings of the models on screen.
@Suite("C bridge: model string lifetime", .pluginCode)
struct BridgeStringLifetimeTests {
    static func title(_ loaded: BridgeTests.Loaded, _ model: ComponentModel) throws -> UnsafePointer<CChar> {
        let table = try #require(loaded.record.hostTable)
        return try #require(table.pointee.model_string(table, CInterop.handle(model), HUB_MODEL_TITLE))
    }

    @Test("strings stay while an instance is configured with the model, and go when it moves to another")
    func configuredModelHoldsStrings() throws {
        let loaded = try BridgeTests.Loaded()
        let a = BridgeTests.model("fixture:label", title: "A")
        let b = BridgeTests.model("fixture:label", title: "B")
        let component = loaded.host.registry.createComponent(for: a).component
        component.loadView()
        component.configureView(with: a, containerSize: Size(width: 300, height: 800))
        let titleA = try Self.title(loaded, a)
        component.drawView(into: ViewBuilder(), size: Size(width: 150, height: 45))
        #expect(try Self.title(loaded, a) == titleA, "the same pointer while configured")
        #expect(String(cString: titleA) == "A")

        // Sizing borrows a model for the call only: its strings go after it.
        _ = try Self.title(loaded, b)
        _ = component.preferredViewSize(for: b, containerSize: Size(width: 300, height: 800))
        #expect(b.bridgeStorage == nil)
        #expect(a.bridgeStorage != nil, "still configured")

        component.configureView(with: b, containerSize: Size(width: 300, height: 800))
        #expect(a.bridgeStorage == nil, "no instance shows A any more")
        #expect(b.bridgeStorage != nil)
        #expect(String(cString: try Self.title(loaded, b)) == "B")
        component.prepareViewForReuse()
        #expect(b.bridgeStorage == nil)
        // Asked again, a string is made again.
        #expect(String(cString: try Self.title(loaded, a)) == "A")
    }

    @Test("storage reused after a release holds only the new model's strings")
    func reusedStorageStartsEmpty() throws {
        let loaded = try BridgeTests.Loaded()
        let table = try #require(loaded.record.hostTable)
        // Two custom strings: the second goes to the storage's list of further strings, whose buffer is kept.
        let a = BridgeTests.model(
            "fixture:label", title: "A", custom: JSONObject([("k", .string("from A")), ("k2", .string("A too"))]))
        let b = BridgeTests.model("fixture:label", title: nil, custom: JSONObject([("k2", .string("from B"))]))
        #expect(String(cString: try Self.title(loaded, a)) == "A")
        #expect(
            table.pointee.model_custom_string(table, CInterop.handle(a), "k").map { String(cString: $0) } == "from A")
        #expect(
            table.pointee.model_custom_string(table, CInterop.handle(a), "k2").map { String(cString: $0) } == "A too")
        let storageOfA = ObjectIdentifier(try #require(a.bridgeStorage))  // not a reference: it would keep A's
        ModelCStrings.releaseIfUnused(a)
        #expect(a.bridgeStorage == nil)

        #expect(table.pointee.model_string(table, CInterop.handle(b), HUB_MODEL_TITLE) == nil, "b has no title")
        #expect(b.bridgeStorage.map(ObjectIdentifier.init) == storageOfA, "the released storage is reused")
        #expect(table.pointee.model_custom_string(table, CInterop.handle(b), "k") == nil, "nor A's custom value")
        #expect(
            table.pointee.model_custom_string(table, CInterop.handle(b), "k2").map { String(cString: $0) } == "from B")
        #expect(
            String(cString: try #require(table.pointee.model_string(table, CInterop.handle(b), HUB_MODEL_ID)))
                == "m-fixture:label")
    }

    @Test("short strings inline and long ones allocated read back whole, each at its own address")
    func shortAndLongStrings() throws {
        let loaded = try BridgeTests.Loaded()
        let table = try #require(loaded.record.hostTable)
        let long = String(repeating: "long title é ", count: 20)
        // Six of 8 bytes fill 48 of the 64 inline bytes, the next does not fit, the model id (16) fills the rest.
        var values = (0..<6).map { ("key\($0)", "value \($0)") }
        values.append(("k", String(repeating: "v", count: 20)))
        let model = BridgeTests.model(
            "fixture:label", title: long, custom: JSONObject(values.map { ($0.0, .string($0.1)) }))
        let handle = CInterop.handle(model)
        var pointers: [UnsafePointer<CChar>] = [try Self.title(loaded, model)]
        for (key, _) in values { pointers.append(try #require(table.pointee.model_custom_string(table, handle, key))) }
        pointers.append(try #require(table.pointee.model_string(table, handle, HUB_MODEL_ID)))
        // Read after every string was made: a later one written over an earlier one would show here.
        #expect(pointers.map { String(cString: $0) } == [long] + values.map(\.1) + ["m-fixture:label"])
        #expect(Set(pointers).count == pointers.count)
        ModelCStrings.releaseIfUnused(model)
        #expect(model.bridgeStorage == nil)
    }

    @Test("a child's strings stay while its parent is configured")
    func parentHoldsChildStrings() throws {
        let loaded = try BridgeTests.Loaded()
        let table = try #require(loaded.record.hostTable)
        let child = BridgeTests.model("fixture:label", title: "kid")
        let parent = BridgeTests.model("fixture:box", children: [child])
        let component = loaded.host.registry.createComponent(for: parent).component
        component.loadView()
        component.configureView(with: parent, containerSize: Size(width: 320, height: 600))
        let childHandle = try #require(table.pointee.model_child(table, CInterop.handle(parent), 0))
        let kid = try #require(table.pointee.model_string(table, childHandle, HUB_MODEL_TITLE))
        ModelCStrings.releaseIfUnused(child)
        #expect(child.bridgeStorage != nil, "the parent is configured: its child's handle and strings are valid")
        #expect(table.pointee.model_string(table, childHandle, HUB_MODEL_TITLE) == kid)
        component.prepareViewForReuse()
        #expect(parent.bridgeStorage == nil && child.bridgeStorage == nil)
    }

    @Test("a sizing call reads its model's strings without storage on the model, valid for the call")
    func sizingCallsReadIntoScratch() throws {
        let loaded = try BridgeTests.Loaded()
        let table = try #require(loaded.record.hostTable)
        func title(_ model: ComponentModel) -> UnsafePointer<CChar>? {
            table.pointee.model_string(table, CInterop.handle(model), HUB_MODEL_TITLE)
        }
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let a = BridgeTests.model("fixture:label", title: "A")
        let b = BridgeTests.model("fixture:label", title: "B")
        let other = BridgeTests.model("fixture:label", title: "other")
        ModelCStrings.borrowing(a) {
            let first = title(a)
            #expect(text(first) == "A")
            #expect(title(a) == first, "the same pointer for the call")
            #expect(a.bridgeStorage == nil, "nothing attached to the borrowed model")
            // Another model read during the call gets storage of its own, released when the call returns.
            #expect(text(title(other)) == "other")
            ModelCStrings.releaseIfUnused(other)
            #expect(other.bridgeStorage != nil, "released after the call")
            #expect(text(first) == "A", "reading another model leaves the call's strings alone")
        }
        #expect(other.bridgeStorage == nil)
        // The next call's model reads its own strings, not what the last call left.
        ModelCStrings.borrowing(b) { #expect(text(title(b)) == "B") }
        // A model an instance holds keeps its storage through a sizing call.
        ModelCStrings.hold(a)
        let held = title(a)
        ModelCStrings.borrowing(a) { #expect(title(a) == held) }
        #expect(a.bridgeStorage != nil)
        ModelCStrings.unhold(a)
        #expect(a.bridgeStorage == nil)
    }

    @Test("nothing is freed during a plugin call that borrows a model")
    func releasesWaitForBorrowingCalls() throws {
        let loaded = try BridgeTests.Loaded()
        let model = BridgeTests.model("fixture:label")
        let title = try Self.title(loaded, model)
        ModelCStrings.borrowing {
            ModelCStrings.borrowing { ModelCStrings.releaseIfUnused(model) }
            #expect(model.bridgeStorage != nil)
            #expect(String(cString: title) == "Hello")
        }
        #expect(model.bridgeStorage == nil)
    }
}
