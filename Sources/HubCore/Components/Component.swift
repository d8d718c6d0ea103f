/// A component (Hub's HUBComponent): a controller between a component model and a headless view that draws
/// itself into a display list. Components are reused for many models; never assume one model per instance.
///
/// Lifecycle, as the host drives it: `loadView` once per displayed instance; `configureView` for each new model
/// (an equal model is not configured again); `prepareViewForReuse` before showing a different model; `drawView`
/// whenever the host renders it at its final size. Instances used only for sizing get `layoutTraits` and
/// `preferredViewSize` but never `loadView`.
///
/// Optional capabilities (Hub's protocol extensions) are exposed as properties that are nil when absent. The
/// defaults return `self` when the component conforms to the extension protocol, so a Swift component simply
/// conforms; a bridged plugin component answers from its extension tables.
///
/// - Important: every method is called on the host's main thread.
public protocol Component: AnyObject {
    /// The same for every instance of a component class.
    var layoutTraits: Set<LayoutTrait> { get }
    func loadView()
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size
    func prepareViewForReuse()
    func configureView(with model: ComponentModel, containerSize: Size)
    func drawView(into view: ViewBuilder, size: Size)

    var childrenSupport: ComponentWithChildren? { get }
    var imageHandling: ComponentWithImageHandling? { get }
    var restorableUIState: ComponentWithRestorableUIState? { get }
    var selectionStateHandling: ComponentWithSelectionState? { get }
    var contentOffsetObserver: ComponentContentOffsetObserver? { get }
    var viewObserver: ComponentViewObserver? { get }
    var actionPerformerSupport: ComponentActionPerformer? { get }
    var actionObserver: ComponentActionObserver? { get }

    /// Releases what the instance holds outside Swift (a plugin instance). Called once by its owner when the
    /// instance is discarded; Swift components need not implement it.
    func destroy()
}

extension Component {
    public var childrenSupport: ComponentWithChildren? { self as? ComponentWithChildren }
    public var imageHandling: ComponentWithImageHandling? { self as? ComponentWithImageHandling }
    public var restorableUIState: ComponentWithRestorableUIState? { self as? ComponentWithRestorableUIState }
    public var selectionStateHandling: ComponentWithSelectionState? { self as? ComponentWithSelectionState }
    public var contentOffsetObserver: ComponentContentOffsetObserver? { self as? ComponentContentOffsetObserver }
    public var viewObserver: ComponentViewObserver? { self as? ComponentViewObserver }
    public var actionPerformerSupport: ComponentActionPerformer? { self as? ComponentActionPerformer }
    public var actionObserver: ComponentActionObserver? { self as? ComponentActionObserver }
    public func destroy() {}
}

// MARK: - Extensions (Hub's protocol extensions)

/// The host side of a component with children (Hub's HUBComponentChildDelegate).
public protocol ChildDelegate: AnyObject {
    /// Creates or reuses the child component for child `index` of the current model, loaded and configured with
    /// the parent's size as container; returns its preferred size (zero when out of range).
    func createChild(at index: Int) -> Size
    func willDisplayChild(at index: Int)
    func didStopDisplayingChild(at index: Int)
    /// A child drawn by the component itself was selected.
    func childSelected(at index: Int, customData: JSONObject?)
}

public protocol ComponentWithChildren: AnyObject {
    var childDelegate: ChildDelegate? { get set }
}

/// An image loaded for a component.
public struct LoadedImage: Sendable, Hashable {
    public var uri: String
    public var kind: ImageData.Kind
    public var identifier: String?
    public var pixelSize: Size
    public var bytes: [UInt8]
    public init(
        uri: String, kind: ImageData.Kind, identifier: String? = nil, pixelSize: Size = .zero, bytes: [UInt8] = []
    ) {
        self.uri = uri
        self.kind = kind
        self.identifier = identifier
        self.pixelSize = pixelSize
        self.bytes = bytes
    }
}

public protocol ComponentWithImageHandling: AnyObject {
    /// The size wanted for an image; zero means "do not load it".
    func preferredSizeForImage(_ image: ImageData, model: ComponentModel, containerSize: Size) -> Size
    func updateView(forLoadedImage image: LoadedImage, from data: ImageData, model: ComponentModel, animated: Bool)
}

public protocol ComponentWithRestorableUIState: AnyObject {
    /// nil means "no state" (a saved state is removed).
    var currentUIState: String? { get }
    func restoreUIState(_ state: String)
}

public protocol ComponentWithSelectionState: AnyObject {
    func updateViewForSelectionState(_ state: SelectionState)
}

public protocol ComponentContentOffsetObserver: AnyObject {
    func updateViewForChangedContentOffset(_ offset: Point)
}

public protocol ComponentViewObserver: AnyObject {
    func viewDidResize(_ size: Size)
    func viewWillAppear()
}

/// What performs actions for a component (set by the host).
public protocol ActionPerformer: AnyObject {
    @discardableResult
    func performAction(_ identifier: ComponentIdentifier, customData: JSONObject?) -> Bool
}

public protocol ComponentActionPerformer: AnyObject {
    var actionPerformer: ActionPerformer? { get set }
}

/// What an action is performed with (Hub's HUBActionContext).
public struct ActionContext {
    public var trigger: ActionTrigger
    /// nil for the default selection action.
    public var actionIdentifier: ComponentIdentifier?
    public var customData: JSONObject?
    public var viewURI: String?
    public var viewModel: ViewModel?
    public var componentModel: ComponentModel?
    public init(
        trigger: ActionTrigger, actionIdentifier: ComponentIdentifier? = nil, customData: JSONObject? = nil,
        viewURI: String? = nil, viewModel: ViewModel? = nil, componentModel: ComponentModel? = nil
    ) {
        self.trigger = trigger
        self.actionIdentifier = actionIdentifier
        self.customData = customData
        self.viewURI = viewURI
        self.viewModel = viewModel
        self.componentModel = componentModel
    }
}

public protocol ComponentActionObserver: AnyObject {
    func actionPerformed(with context: ActionContext)
}
