// A plugin written with HubPluginKit and linked into the test binary: the tests run it through the host's C-ABI
// bridge with `PluginHost.loadEmbedded`, without building a shared object or calling dlopen. This file imports
// only the SDK, as a plugin's sources do.
import HubPluginKit

final class EmbeddedPlugin: HubPlugin {
    static let id = "com.example.embedded"
    static let name = "Embedded test plugin"
    static let version = "2.0.0"
    static let description = "A label and a selectable box, for the SDK's tests."
    static let vendor = "hubhost tests"

    func register(with registrar: HubRegistrar) throws {
        try registrar.registerComponentFactory(
            HubComponentCatalog(["label": { LabelComponent() }, "box": { BoxComponent() }]), forNamespace: "kit")
    }
}

/// `kit:label`: compact width, its title measured with the SDK's text metrics, at least 40 points high.
final class LabelComponent: HubComponent {
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }
    private var title = ""

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let height = measureText(model.title ?? "", style: .body, maxWidth: 100).height
        return Size(width: 100, height: max(40, height))
    }

    func configureView(with model: HubModel, containerSize: Size) { title = model.title ?? "" }

    func draw(in view: HubView, size: Size) {
        view.text(title, in: Rect(x: 0, y: 0, width: size.width, height: size.height))
    }
}

/// `kit:box`: full width, 60 high, filled red when highlighted or selected, green otherwise.
final class BoxComponent: HubComponent, HubComponentWithSelectionState {
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    private var state = HubSelectionState.none

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        Size(width: containerSize.width, height: 60)
    }

    func configureView(with model: HubModel, containerSize: Size) {}

    func prepareViewForReuse() { state = .none }

    func updateViewForSelectionState(_ state: HubSelectionState) { self.state = state }

    func draw(in view: HubView, size: Size) {
        view.rect(Rect(x: 0, y: 0, width: size.width, height: size.height), fill: state == .none ? .green : .red)
    }
}

/// The descriptor the test host loads (what `hub_plugin_entry` would return from a shared object).
enum EmbeddedPluginEntry {
    static var descriptor: UnsafePointer<HubPluginDescriptor> { EmbeddedPlugin.descriptor }
}
