import CHubPlugin
import HubCore

/// A plugin component (`hub_component`) as a HubCore `Component`.
///
/// Once revoked (its namespace unregistered or its plugin unloading) or destroyed, the plugin instance is gone:
/// every method becomes a harmless no-op (zero sizes, no drawing), so a renderer still holding it cannot call
/// into freed or unmapped code.
final class PluginComponent: Component {
    let klass: UnsafePointer<hub_component_class>
    let instance: UnsafeMutableRawPointer?
    let factory: PluginComponentFactory
    weak var record: PluginRecord?
    /// The plugin's `CallRecorder` slot, noted before every call into it.
    let slot: UInt16
    /// False once revoked or destroyed.
    @exclusivity(unchecked) private(set) var isAlive = true
    /// The model last configured: the plugin may keep its handle until the next configure, reuse or destroy.
    /// It holds the model's bridge strings (`ModelCStrings.hold`) until then.
    private(set) var configuredModel: ComponentModel?

    /// Makes `model` the configured model; returns the previous one, which the caller lets go
    /// (`ModelCStrings.unhold`) once the plugin call that replaces it has returned.
    private func setConfiguredModel(_ model: ComponentModel?) -> ComponentModel? {
        guard model !== configuredModel else { return nil }
        let previous = configuredModel
        configuredModel = model
        if let model { ModelCStrings.hold(model) }
        return previous
    }

    /// The class table, copied once with the members its `struct_size` does not cover left NULL (the table is
    /// static for the instance's life), so a call checks neither the size nor a key path.
    private let methods: hub_component_class

    init(
        klass: UnsafePointer<hub_component_class>, instance: UnsafeMutableRawPointer?, factory: PluginComponentFactory,
        record: PluginRecord
    ) {
        self.klass = klass
        self.instance = instance
        self.factory = factory
        self.record = record
        self.slot = record.callSlot
        self.methods = CInterop.copyTable(klass)
    }

    deinit {
        // Dropped without `destroy()`: still free the plugin's instance.
        if isAlive { finish() }
        record?.untrack(self)  // the record holds components unretained
    }

    lazy var layoutTraits: Set<LayoutTrait> = {
        guard isAlive, let traits = methods.layout_traits,
            let list = CallRecorder.during(.layoutTraits, slot: slot, { traits(instance) })
        else { return [] }
        // Text that is not UTF-8 or holds control characters is not a list of names: most often a pointer into
        // memory the plugin freed (a string dropped before the host read it).
        guard let text = String(validatingCString: list), !text.unicodeScalars.contains(where: Self.isControl) else {
            var bytes: [String] = []
            var byte = UnsafeRawPointer(list).assumingMemoryBound(to: UInt8.self)
            while byte.pointee != 0 && bytes.count < 17 {
                bytes.append(
                    byte.pointee < 16 ? "0" + String(byte.pointee, radix: 16) : String(byte.pointee, radix: 16))
                byte += 1
            }
            let shown = bytes.prefix(16).joined(separator: " ") + (bytes.count > 16 ? " …" : "")
            BoundaryValues.refuse(
                "layout_traits returned text that is not a list of trait names (bytes \(shown)): invalid UTF-8 or "
                    + "control characters, as a pointer to freed memory reads; used no traits",
                record: record)
            return []
        }
        return LayoutTrait.parseList(text)
    }()

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    func loadView() {
        guard isAlive, let load = methods.load_view else { return }
        CallRecorder.during(.loadView, slot: slot) { load(instance) }
    }

    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        guard isAlive, let size = methods.preferred_view_size else { return .zero }
        // Checked inside the call's record, so a bad size is reported as this plugin's.
        var result = ModelCStrings.borrowing(model) {
            CallRecorder.during(.size, slot: slot, model: model) {
                CInterop.size(size(instance, CInterop.handle(model), CInterop.size(containerSize)))
            }
        }
        // Borrowed for the call only: unless an instance shows it, its strings can go.
        ModelCStrings.releaseIfUnused(model)
        result.width = min(result.width, containerSize.width)  // the host clamps the width to the container
        return result
    }

    func prepareViewForReuse() {
        if isAlive, let prepare = methods.prepare_view_for_reuse {
            CallRecorder.during(.prepareForReuse, slot: slot, model: configuredModel) { prepare(instance) }
        }
        if let previous = setConfiguredModel(nil) { ModelCStrings.unhold(previous) }
    }

    func configureView(with model: ComponentModel, containerSize: Size) {
        guard isAlive, let configure = methods.configure_view else { return }
        let previous = setConfiguredModel(model)
        CallRecorder.during(.configure, slot: slot, model: model) {
            configure(instance, CInterop.handle(model), CInterop.size(containerSize))
        }
        if let previous { ModelCStrings.unhold(previous) }
    }

    func drawView(into view: ViewBuilder, size: Size) {
        guard isAlive, let draw = methods.draw_view else { return }
        ViewBuilderBridge.withBuilder(view) { builder in
            CallRecorder.during(.draw, slot: slot, model: configuredModel) {
                draw(instance, builder, CInterop.size(size))
            }
        }
    }

    func destroy() {
        guard isAlive else { return }
        finish()
        record?.untrack(self)
    }

    /// Called by the record when the factory or plugin goes away.
    func revoke() {
        guard isAlive else { return }
        finish()
    }

    private func finish() {
        let destroy = isAlive ? methods.destroy : nil
        isAlive = false
        let previous = setConfiguredModel(nil)
        if record?.codeCallable == true, let destroy {
            CallRecorder.during(.destroy, slot: slot, model: previous) { destroy(instance) }
        }
        if let previous { ModelCStrings.unhold(previous) }
    }

    // MARK: Extensions

    /// The plugin's table for `id`, looked up once.
    func extensionTable<T>(_ id: String, as type: T.Type) -> UnsafePointer<T>? {
        if let cached = extensionCache[id] { return cached.map { $0.assumingMemoryBound(to: T.self) } }
        let table = (isAlive ? methods.get_extension : nil).flatMap { get in
            CallRecorder.during(.getExtension, slot: slot) { id.withCString { get(instance, $0) } }
        }
        extensionCache[id] = .some(table)
        return table?.assumingMemoryBound(to: T.self)
    }
    private var extensionCache: [String: UnsafeRawPointer?] = [:]

    // The engine asks every displayed component for its extensions on each event (e.g. every action goes to
    // every action observer), so each adapter is looked up once and then read from a plain stored property.
    @exclusivity(unchecked) private var resolvedExtensions: UInt8 = 0
    @exclusivity(unchecked) private var children: ChildrenAdapter?
    @exclusivity(unchecked) private var images: ImageHandlingAdapter?
    @exclusivity(unchecked) private var uiState: UIStateAdapter?
    @exclusivity(unchecked) private var selection: SelectionStateAdapter?
    @exclusivity(unchecked) private var contentOffset: ContentOffsetAdapter?
    @exclusivity(unchecked) private var viewObserving: ViewObserverAdapter?
    @exclusivity(unchecked) private var performer: ActionPerformerAdapter?
    @exclusivity(unchecked) private var observer: ActionObserverAdapter?

    /// True the first time extension `bit` is asked for (the caller then looks it up).
    @inline(__always)
    private func firstLookup(_ bit: UInt8) -> Bool {
        guard resolvedExtensions & bit == 0 else { return false }
        resolvedExtensions |= bit
        return true
    }

    var childrenSupport: ComponentWithChildren? {
        if firstLookup(1) {
            children = extensionTable(HUB_EXT_CHILDREN, as: hub_children_ext.self).map { ChildrenAdapter(self, $0) }
        }
        return children
    }
    var imageHandling: ComponentWithImageHandling? {
        if firstLookup(2) {
            images = extensionTable(HUB_EXT_IMAGE_HANDLING, as: hub_image_handling_ext.self).map {
                ImageHandlingAdapter(self, $0)
            }
        }
        return images
    }
    var restorableUIState: ComponentWithRestorableUIState? {
        if firstLookup(4) {
            uiState = extensionTable(HUB_EXT_UI_STATE, as: hub_ui_state_ext.self).map { UIStateAdapter(self, $0) }
        }
        return uiState
    }
    var selectionStateHandling: ComponentWithSelectionState? {
        if firstLookup(8) {
            selection = extensionTable(HUB_EXT_SELECTION_STATE, as: hub_selection_state_ext.self).map {
                SelectionStateAdapter(self, $0)
            }
        }
        return selection
    }
    var contentOffsetObserver: ComponentContentOffsetObserver? {
        if firstLookup(16) {
            contentOffset = extensionTable(HUB_EXT_CONTENT_OFFSET_OBSERVER, as: hub_content_offset_observer_ext.self)
                .map { ContentOffsetAdapter(self, $0) }
        }
        return contentOffset
    }
    var viewObserver: ComponentViewObserver? {
        if firstLookup(32) {
            viewObserving = extensionTable(HUB_EXT_VIEW_OBSERVER, as: hub_view_observer_ext.self).map {
                ViewObserverAdapter(self, $0)
            }
        }
        return viewObserving
    }
    var actionPerformerSupport: ComponentActionPerformer? {
        if firstLookup(64) {
            performer = extensionTable(HUB_EXT_ACTION_PERFORMER, as: hub_action_performer_ext.self).map {
                ActionPerformerAdapter(self, $0)
            }
        }
        return performer
    }
    var actionObserver: ComponentActionObserver? {
        if firstLookup(128) {
            observer = extensionTable(HUB_EXT_ACTION_OBSERVER, as: hub_action_observer_ext.self).map {
                ActionObserverAdapter(self, $0)
            }
        }
        return observer
    }
}
