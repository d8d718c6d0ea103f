import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubHost

/// Swift images cannot be unmapped safely: they are loaded RTLD_NODELETE, retired on unload, and a changed copy
/// loads as new code beside them.
@Suite("Swift plugins", .pluginCode)
struct SwiftPluginTests {
    protocol Greeting { var text: String { get } }
    final class HostGreeting: Greeting, CustomStringConvertible {
        let text = "host"
        var description: String { "HostGreeting(\(text))" }
    }

    static func draw(_ host: PluginHost, namespace: String, name: String) -> [DrawItem] {
        let model = ComponentModel(
            identifier: "m", componentIdentifier: ComponentIdentifier(namespace: namespace, name: name))
        let component = host.registry.createComponent(for: model).component
        defer { component.destroy() }
        component.loadView()
        component.configureView(with: model, containerSize: Size(width: 200, height: 100))
        let view = ViewBuilder()
        component.drawView(into: view, size: Size(width: 200, height: 30))
        return view.items
    }

    static func drawnText(_ items: [DrawItem]) -> [String] {
        items.compactMap {
            if case .text(_, let text, _) = $0 { return text }
            return nil
        }
    }

    @Test("a Swift plugin is pinned; a changed copy loads as new code; the host's casts and printing still work")
    func pinnedAndReloaded() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = fx.plugins.appendingPathComponent("libswiftfixture.so")
        try fx.swiftPlugin(version: "1.0", at: file)

        let host = PluginHost(cacheDirectory: fx.cache)
        let first = host.load(file: file)
        #expect(first.state == .pinned, "\(first.reason ?? "")")
        #expect(first.isSwiftImage)
        #expect(first.namespaces.map(\.namespace) == ["swiftfixture"])
        #expect(Self.drawnText(Self.draw(host, namespace: "swiftfixture", name: "label")) == ["swift label 1.0"])

        let report = host.unload(first)
        #expect(report.outcome == .pinned)
        #expect(report.description.contains("pinned: Swift image"))
        #expect(first.state == .retired)
        #expect(host.registry.entry(forNamespace: "swiftfixture") == nil)
        // The truth: the image is still mapped (NODELETE), and its copy is kept.
        let firstCopy = try #require(first.privateCopy)
        #expect(FixtureBuilder.isMapped(firstCopy.path))

        // Rebuild in place (write + rename, as a build does) with new code; load it beside the retired image.
        try fx.swiftPlugin(version: "2.0", at: file)
        let second = host.load(file: file)
        #expect(second.state == .pinned, "\(second.reason ?? "")")
        #expect(second.version == "2.0")
        #expect(second.privateCopy != first.privateCopy)
        #expect(Self.drawnText(Self.draw(host, namespace: "swiftfixture", name: "label")) == ["swift label 2.0"])

        // The same content as a retired image loads from a fresh path, as new code too.
        host.unload(second)
        let third = host.load(file: file)
        #expect(third.state == .pinned, "\(third.reason ?? "")")
        #expect(third.privateCopy != second.privateCopy)
        #expect(Self.drawnText(Self.draw(host, namespace: "swiftfixture", name: "label")) == ["swift label 2.0"])

        // The host's own dynamic casts, printing and Foundation still work with retired images around.
        let values: [Any] = [HostGreeting(), 42, "text", [1, 2]]
        #expect((values[0] as? Greeting)?.text == "host")
        #expect(values[1] as? Greeting == nil)
        #expect(String(describing: values[0]) == "HostGreeting(host)")
        #expect("\(values)" == #"[HostGreeting(host), 42, "text", [1, 2]]"#)
        let json = try JSONSerialization.data(withJSONObject: ["a": [1, 2]], options: .sortedKeys)
        #expect(String(decoding: json, as: UTF8.self) == #"{"a":[1,2]}"#)
    }

    @Test("the shipped plugins (HubDemoSwift, HubDemoC) load and list when they are built")
    func shippedPlugins() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        var found = 0
        for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
            let built = FixtureBuilder.binDir.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: built.path) else { continue }
            try FileManager.default.copyItem(at: built, to: fx.plugins.appendingPathComponent(name))
            found += 1
        }
        let host = PluginHost(cacheDirectory: fx.cache)
        let records = host.loadPlugins(in: [fx.plugins])
        #expect(records.count == found)
        for record in records {
            #expect(record.isLoaded, "\(record.reason ?? "")")
            #expect(!record.namespaces.isEmpty, "\(record.file.lastPathComponent) registers a namespace")
            #expect(record.namespaces.allSatisfy { !$0.components.isEmpty })
        }
        if let swift = records.first(where: { $0.file.lastPathComponent == "libHubDemoSwift.so" }) {
            #expect(swift.isSwiftImage && swift.state == .pinned)
        }
        if let c = records.first(where: { $0.file.lastPathComponent == "libHubDemoC.so" }) {
            #expect(!c.isSwiftImage && c.state == .active)
        }
    }
}
