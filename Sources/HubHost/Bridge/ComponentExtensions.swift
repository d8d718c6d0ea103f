import CHubPlugin
import FoundationEssentials
import HubCore

// Adapters from the plugin's extension tables (hub.children/1, …) to HubCore's extension protocols. Each holds its
// component unowned (the component owns it) and does nothing once the component is no longer alive.

/// The base of every adapter: the component and the plugin's table, copied once with the members its
/// `struct_size` does not cover left NULL (a table is valid, and static, while the instance exists), so a call
/// checks only that the component is alive.
class ExtensionAdapter<Table> {
    unowned let component: PluginComponent
    let table: UnsafePointer<Table>
    let methods: Table
    init(_ component: PluginComponent, _ table: UnsafePointer<Table>) {
        self.component = component
        self.table = table
        self.methods = CInterop.copyTable(table)
    }
}

/// hub.children/1. The host-side delegate is held weakly, as Hub's child delegate is.
final class ChildrenAdapter: ExtensionAdapter<hub_children_ext>, ComponentWithChildren {
    /// The C delegate given to the plugin once; its functions forward to `childDelegate`.
    private let cDelegate = UnsafeMutablePointer<hub_child_delegate>.allocate(capacity: 1)
    private var installed = false

    weak var childDelegate: ChildDelegate? {
        didSet {
            guard !installed, let set = (component.isAlive ? methods.set_child_delegate : nil) else { return }
            installed = true
            CallRecorder.during(.childDelegate, slot: component.slot, model: component.configuredModel) {
                set(component.instance, cDelegate)
            }
        }
    }

    override init(_ component: PluginComponent, _ table: UnsafePointer<hub_children_ext>) {
        super.init(component, table)
        var d = hub_child_delegate()
        d.struct_size = UInt32(MemoryLayout<hub_child_delegate>.size)
        d.delegate_data = Unmanaged.passUnretained(self).toOpaque()
        d.create_child = { d, index in
            guard let adapter = ChildrenAdapter.from(d), let delegate = adapter.childDelegate else { return hub_size() }
            return CInterop.size(delegate.createChild(at: Int(index)))
        }
        d.will_display_child = { d, index in ChildrenAdapter.from(d)?.childDelegate?.willDisplayChild(at: Int(index)) }
        d.did_stop_displaying_child = { d, index in
            ChildrenAdapter.from(d)?.childDelegate?.didStopDisplayingChild(at: Int(index))
        }
        d.child_selected = { d, index, json in
            ChildrenAdapter.from(d)?.childDelegate?.childSelected(at: Int(index), customData: CInterop.jsonObject(json))
        }
        cDelegate.initialize(to: d)
    }

    deinit { cDelegate.deallocate() }

    static func from(_ d: UnsafePointer<hub_child_delegate>?) -> ChildrenAdapter? {
        guard let data = d?.pointee.delegate_data else { return nil }
        let adapter = Unmanaged<ChildrenAdapter>.fromOpaque(data).takeUnretainedValue()
        return adapter.component.isAlive ? adapter : nil
    }
}

/// hub.image-handling/1.
final class ImageHandlingAdapter: ExtensionAdapter<hub_image_handling_ext>, ComponentWithImageHandling {
    func preferredSizeForImage(_ image: ImageData, model: ComponentModel, containerSize: Size) -> Size {
        guard let preferred = (component.isAlive ? methods.preferred_image_size : nil) else { return .zero }
        let kind = hub_image_kind(rawValue: UInt32(image.kind.rawValue))
        return ModelCStrings.borrowing {
            withOptionalCString(image.identifier) { id in
                CallRecorder.during(.imageSize, slot: component.slot, model: model) {
                    CInterop.size(
                        preferred(component.instance, kind, id, CInterop.handle(model), CInterop.size(containerSize)))
                }
            }
        }
    }

    func updateView(forLoadedImage image: LoadedImage, from data: ImageData, model: ComponentModel, animated: Bool) {
        guard let loaded = (component.isAlive ? methods.image_loaded : nil) else { return }
        image.uri.withCString { uri in
            withOptionalCString(image.identifier ?? data.identifier) { customID in
                image.bytes.withUnsafeBufferPointer { bytes in
                    var c = hub_image()
                    c.struct_size = UInt32(MemoryLayout<hub_image>.size)
                    c.kind = hub_image_kind(rawValue: UInt32(image.kind.rawValue))
                    c.custom_id = customID
                    c.uri = uri
                    c.size = CInterop.size(image.pixelSize)
                    c.bytes = bytes.baseAddress
                    c.length = bytes.count
                    CallRecorder.during(.imageLoaded, slot: component.slot, model: model) {
                        loaded(component.instance, &c, animated)
                    }
                }
            }
        }
    }
}

/// hub.ui-state/1.
final class UIStateAdapter: ExtensionAdapter<hub_ui_state_ext>, ComponentWithRestorableUIState {
    var currentUIState: String? {
        guard let current = (component.isAlive ? methods.current_ui_state : nil) else { return nil }
        return CallRecorder.during(.saveUIState, slot: component.slot, model: component.configuredModel) {
            CInterop.string(current(component.instance))
        }
    }
    func restoreUIState(_ state: String) {
        guard let restore = (component.isAlive ? methods.restore_ui_state : nil) else { return }
        CallRecorder.during(.restoreUIState, slot: component.slot, model: component.configuredModel) {
            state.withCString { restore(component.instance, $0) }
        }
    }
}

/// hub.selection-state/1.
final class SelectionStateAdapter: ExtensionAdapter<hub_selection_state_ext>, ComponentWithSelectionState {
    func updateViewForSelectionState(_ state: SelectionState) {
        guard let update = (component.isAlive ? methods.update_selection_state : nil) else { return }
        CallRecorder.during(.selectionState, slot: component.slot, model: component.configuredModel) {
            update(component.instance, hub_selection_state(rawValue: UInt32(state.rawValue)))
        }
    }
}

/// hub.content-offset-observer/1.
final class ContentOffsetAdapter: ExtensionAdapter<hub_content_offset_observer_ext>, ComponentContentOffsetObserver {
    func updateViewForChangedContentOffset(_ offset: Point) {
        guard let changed = (component.isAlive ? methods.content_offset_changed : nil) else { return }
        CallRecorder.during(.contentOffset, slot: component.slot, model: component.configuredModel) {
            changed(component.instance, hub_point(x: offset.x, y: offset.y))
        }
    }
}

/// hub.view-observer/1.
final class ViewObserverAdapter: ExtensionAdapter<hub_view_observer_ext>, ComponentViewObserver {
    func viewDidResize(_ size: Size) {
        guard let resize = (component.isAlive ? methods.view_did_resize : nil) else { return }
        CallRecorder.during(.viewResize, slot: component.slot, model: component.configuredModel) {
            resize(component.instance, CInterop.size(size))
        }
    }
    func viewWillAppear() {
        guard let appear = (component.isAlive ? methods.view_will_appear : nil) else { return }
        CallRecorder.during(.viewWillAppear, slot: component.slot, model: component.configuredModel) {
            appear(component.instance)
        }
    }
}

/// hub.action-performer/1. The host-side performer is held weakly, as Hub's is.
final class ActionPerformerAdapter: ExtensionAdapter<hub_action_performer_ext>, ComponentActionPerformer {
    private let cPerformer = UnsafeMutablePointer<hub_action_performer>.allocate(capacity: 1)
    private var installed = false

    weak var actionPerformer: ActionPerformer? {
        didSet {
            guard !installed, let set = (component.isAlive ? methods.set_action_performer : nil) else { return }
            installed = true
            CallRecorder.during(.actionPerformer, slot: component.slot, model: component.configuredModel) {
                set(component.instance, cPerformer)
            }
        }
    }

    override init(_ component: PluginComponent, _ table: UnsafePointer<hub_action_performer_ext>) {
        super.init(component, table)
        var p = hub_action_performer()
        p.struct_size = UInt32(MemoryLayout<hub_action_performer>.size)
        p.performer_data = Unmanaged.passUnretained(self).toOpaque()
        p.perform = { p, actionID, json in
            guard let data = p?.pointee.performer_data else { return false }
            let adapter = Unmanaged<ActionPerformerAdapter>.fromOpaque(data).takeUnretainedValue()
            guard adapter.component.isAlive, let performer = adapter.actionPerformer,
                let id = CInterop.string(actionID).flatMap(ComponentIdentifier.init(strict:))
            else { return false }
            return performer.performAction(id, customData: CInterop.jsonObject(json))
        }
        cPerformer.initialize(to: p)
    }

    deinit { cPerformer.deallocate() }
}

/// hub.action-observer/1.
final class ActionObserverAdapter: ExtensionAdapter<hub_action_observer_ext>, ComponentActionObserver {
    func actionPerformed(with context: ActionContext) {
        guard let observe = (component.isAlive ? methods.action_performed : nil) else { return }
        ModelCStrings.borrowing {
            ActionContextBridge.withCContext(context) { c in
                CallRecorder.during(.actionObserver, slot: component.slot, model: context.componentModel) {
                    observe(component.instance, c)
                }
            }
        }
    }
}

/// Calls `body` with a C string for `string`, or NULL.
func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
