import CHubPlugin
import FoundationEssentials
import HubCore

/// The checks that call every other entry point a plugin registers, beyond create, size, configure and draw:
/// each component extension, action handlers (every trigger, with and without custom data), layout managers,
/// and, with a view (`validate --view`), every component over the view's own models. A crash or hang in any of
/// them is named by the phase (`ProbePhase`) the child printed just before.
extension ConformanceSuite {
    typealias Check = (String, String?, Bool, String?, String?) -> Void
    typealias Phase = (String, String?) -> Void

    /// Calls every extension function of `component` once, with `model` configured.
    func exerciseExtensions(
        _ component: PluginComponent, model: ComponentModel, container: Size, id: String, phase: Phase,
        check: Check
    ) {
        var called: [String] = []
        if let children = component.childrenSupport {
            phase("children", id)
            children.childDelegate = Self.childDelegate
            called.append("children")
        }
        if let images = component.imageHandling {
            phase("imageHandling", id)
            let image = model.mainImage ?? ImageData(kind: .main, uri: "data:,probe")
            _ = images.preferredSizeForImage(image, model: model, containerSize: container)
            let loaded = LoadedImage(
                uri: image.uri ?? "data:,probe", kind: image.kind, pixelSize: Size(width: 1, height: 1),
                bytes: [0, 0, 0, 255])
            images.updateView(forLoadedImage: loaded, from: image, model: model, animated: false)
            called.append("image handling")
        }
        if let observer = component.contentOffsetObserver {
            phase("contentOffset", id)
            for y in [0.0, 120, 1e6] { observer.updateViewForChangedContentOffset(Point(x: 0, y: y)) }
            called.append("content offset")
        }
        if let observer = component.viewObserver {
            phase("viewObserver", id)
            observer.viewWillAppear()
            observer.viewDidResize(container)
            called.append("view observer")
        }
        if let performer = component.actionPerformerSupport {
            phase("actionPerformer", id)
            performer.actionPerformer = nil
            called.append("action performer")
        }
        if let observer = component.actionObserver {
            phase("actionObserver", id)
            for context in Self.sampleContexts(model: model) { observer.actionPerformed(with: context) }
            called.append("action observer")
        }
        if !called.isEmpty { check("extensions called", id, false, nil, called.joined(separator: ", ")) }
    }

    /// Calls every action handler and layout manager the plugin registered.
    func exerciseRegistrations(of record: PluginRecord, host: PluginHost, phase: Phase, check: Check) {
        let model = SampleModels.models(for: ComponentIdentifier(namespace: "probe", name: "row"))[0]
        let handlers = host.actionHandlers.filter { $0.owner == record.owner }
        if !handlers.isEmpty {
            phase("actionHandler", nil)
            var handled = 0
            for (_, handler) in handlers {
                for context in Self.sampleContexts(model: model) where handler.handleAction(with: context) {
                    handled += 1
                }
            }
            check(
                "action handlers", nil, false, nil,
                "\(handlers.count) handler(s) × \(Self.sampleContexts(model: model).count) contexts, \(handled) handled"
            )
        }
        for entry in host.layoutManagers.allEntries where entry.owner == record.owner {
            phase("layoutManager", entry.key)
            let manager = entry.value
            let traits: [Set<LayoutTrait>] = [[], [.fullWidth], [.compactWidth], [.fullWidth, .stackable]]
            var bad: [String] = []
            for a in traits {
                for edge in [ContentEdge.top, .bottom, .left, .right] {
                    let margin = manager.marginBetweenComponent(withTraits: a, andContentEdge: edge)
                    if !margin.isFinite { bad.append("margin to \(edge): \(margin)") }
                }
                for b in traits {
                    _ = manager.verticalMarginBetweenComponent(withTraits: a, andHeaderWithTraits: b)
                    _ = manager.horizontalMarginForComponent(withTraits: a, precedingTraits: b)
                    _ = manager.verticalMarginForComponent(withTraits: a, precedingTraits: b)
                }
            }
            _ = manager.horizontalOffsetForComponents(
                withTraits: traits, firstComponentLeadingOffset: 0, lastComponentTrailingOffset: 0)
            check(
                "layout manager", entry.key, false, bad.isEmpty ? nil : bad.prefix(3).joined(separator: "; "), nil)
        }
    }

    /// Runs every component of the plugin over the models of a real view that name it (`validate --view`).
    func exerciseView(_ view: ViewModel, record: PluginRecord, host: PluginHost, phase: Phase, check: Check) {
        let namespaces = Set(record.namespaces.map(\.namespace))
        var models: [ComponentModel] = []
        view.forEachModel { if namespaces.contains($0.componentIdentifier.namespace) { models.append($0) } }
        let container = SampleModels.containerSizes[0]
        for model in models {
            let id = model.componentIdentifier.description
            let place =
                "\(ModelLocation(code: model.locationCode).map(\.description) ?? "?") (id \"\(model.identifier)\")"
            phase("view create for \(place)", id)
            guard
                let component = Self.created(
                    model.componentIdentifier, category: model.componentCategory, host: host)
            else { continue }
            phase("view configure for \(place)", id)
            component.loadView()
            component.configureView(with: model, containerSize: container)
            phase("view size for \(place)", id)
            let size = component.preferredViewSize(for: model, containerSize: container)
            phase("view draw for \(place)", id)
            component.drawView(into: ViewBuilder(), size: size)
            phase("view extensions for \(place)", id)
            exerciseExtensions(component, model: model, container: container, id: id, phase: phase) { _, _, _, _, _ in
            }
            if let selection = component.selectionStateHandling {
                phase("view selection for \(place)", id)
                for state in [SelectionState.highlighted, .selected, .none] {
                    selection.updateViewForSelectionState(state)
                }
            }
            if let state = component.restorableUIState {
                phase("view UI state for \(place)", id)
                if let saved = state.currentUIState { state.restoreUIState(saved) }
            }
            for context in Self.sampleContexts(model: model) {
                phase("view action handlers for \(place)", id)
                for (owner, handler) in host.actionHandlers where owner == record.owner {
                    _ = handler.handleAction(with: context)
                }
            }
            phase("view destroy for \(place)", id)
            component.destroy()
        }
        check("runs over the view's models", nil, false, nil, "\(models.count) model(s) of its namespaces")
    }

    /// Every trigger, with and without custom data.
    static func sampleContexts(model: ComponentModel) -> [ActionContext] {
        var contexts: [ActionContext] = []
        for trigger in [ActionTrigger.selection, .component, .contentOperation] {
            for custom in [nil, JSONObject([("probe", .bool(true))])] {
                contexts.append(
                    ActionContext(
                        trigger: trigger,
                        actionIdentifier: trigger == .selection
                            ? nil : ComponentIdentifier(namespace: "probe", name: "action"),
                        customData: custom, viewURI: "hub:probe",
                        componentModel: trigger == .contentOperation ? nil : model))
            }
        }
        return contexts
    }
}

/// A child delegate that creates nothing (the probe has no view to put children in).
extension ConformanceSuite {
    /// The child delegate of every instance the suite makes (it keeps none of its own: a plugin's delegate is held
    /// weakly).
    nonisolated(unsafe) static let childDelegate = SilentChildDelegate()

    /// A plugin component the factory of `identifier` creates, with its child delegate set right after creation
    /// as the header promises and a host wrapper does (a configure that uses it must not meet NULL); nil (and
    /// nothing kept) when the factory makes none.
    static func created(_ identifier: ComponentIdentifier, category: String, host: PluginHost) -> PluginComponent? {
        let made = host.registry.createComponent(identifier: identifier, category: category)
        guard case .factory = made.source, let component = made.component as? PluginComponent else {
            made.component.destroy()
            return nil
        }
        component.childrenSupport?.childDelegate = childDelegate
        return component
    }
}

/// Answers a component's children with nothing: no child component is made, each reports a zero size.
final class SilentChildDelegate: ChildDelegate {
    func createChild(at index: Int) -> Size { .zero }
    func willDisplayChild(at index: Int) {}
    func didStopDisplayingChild(at index: Int) {}
    func childSelected(at index: Int, customData: JSONObject?) {}
}
