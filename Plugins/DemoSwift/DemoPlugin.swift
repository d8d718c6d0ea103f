// The Swift demo plugin: Hub demo-style components in the namespace "demo".
//
// Copy this folder to start a plugin of your own: change the id, the namespace and the components. The whole
// C side (descriptor, init/deinit, component tables) is written by HubPluginKit.
import HubPluginKit

/// The plugin: its identity and what it registers when the host loads it.
final class DemoPlugin: HubPlugin {
    static let id = "com.hubhost.demo"
    static let name = "Hub demo components"
    static let version = "1.0.0"
    static let description =
        "Rows, headers, cards, images and carousels in the spirit of Hub Framework's demo app; actions demo:log and demo:delay."
    static let vendor = "hubhost"

    /// Models refer to these as "demo:row", "demo:header", …
    static let namespace = "demo"

    func register(with registrar: HubRegistrar) throws {
        let catalog = HubComponentCatalog([
            "row": { RowComponent() },
            "header": { HeaderComponent() },
            "card": { CardComponent() },
            "image": { ImageComponent() },
            "carousel": { CarouselComponent() },
        ])
        try registrar.registerComponentFactory(catalog, forNamespace: Self.namespace)
        // Actions live in their own namespace space; using the same name as the components keeps targets readable.
        try registrar.registerActionFactory(DemoActions(), forNamespace: Self.namespace)
        HubLog.debug("registered \(catalog.componentNames.count) components in '\(Self.namespace)'")
    }
}

/// The one exported symbol: the host calls it to get the plugin's descriptor.
@c(hub_plugin_entry) public func hubPluginEntry() -> UnsafePointer<HubPluginDescriptor> { DemoPlugin.descriptor }
