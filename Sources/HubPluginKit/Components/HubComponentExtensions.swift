// The optional component protocols (Hub's protocol extensions). Conforming is all it takes: the SDK detects the
// conformance when the component is created and answers the host's `get_extension` query with the matching table.

// MARK: - Children

/// A component that contains child components (Hub's HUBComponentWithChildren).
///
/// The host sets ``childDelegate`` right after creating the component. To show nested components, call
/// ``HubChildDelegate/createChild(at:)`` for the child models you want (typically in
/// `configureView(with:containerSize:)`), then place them with ``HubView/child(_:in:)`` when drawing.
///
/// # Implementation requirements
/// Store the delegate in a stored property; it stays valid until the host sets another one or destroys the
/// component. Create children again after each configuration: a new model has new children.
public protocol HubComponentWithChildren: HubComponent {
    var childDelegate: HubChildDelegate? { get set }
}

// MARK: - Images

/// An image the host loaded for a component.
public struct HubLoadedImage {
    public var kind: HubImageKind
    /// The key in `images.custom` for ``HubImageKind/custom`` images.
    public var customID: String?
    /// The URI that was loaded.
    public var uri: String
    /// The pixel size when the host could read it, else zero.
    public var pixelSize: Size
    /// The encoded image data.
    public var bytes: [UInt8]
}

/// A component for which the host loads the model's images (Hub's HUBComponentWithImageHandling).
public protocol HubComponentWithImageHandling: HubComponent {
    /// The size the component wants for an image of `model`; zero means "do not load it".
    func preferredSizeForImage(_ kind: HubImageKind, customID: String?, model: HubModel, containerSize: Size) -> Size

    /// An image of the current model finished loading. `animated` is true when a real UI would fade it in.
    func updateView(forLoadedImage image: HubLoadedImage, animated: Bool)
}

// MARK: - UI state

/// A component whose UI state (a scroll offset, a toggle) survives reuse (Hub's HUBComponentWithRestorableUIState).
///
/// The host asks for ``currentUIState`` before each reuse and saves it under the model's identifier; when the
/// component is configured with that model again, it gets ``restoreUIState(_:)`` right after configuration.
/// Any string encoding works; JSON is recommended (`{"offset":120}`).
public protocol HubComponentWithRestorableUIState: HubComponent {
    /// The state to save, or nil for none (a saved state is removed).
    var currentUIState: String? { get }
    /// Restores a state this component returned from ``currentUIState`` for the model just configured.
    func restoreUIState(_ state: String)
}

// MARK: - Selection

/// A component whose view reacts to highlight and selection (Hub's HUBComponentWithSelectionState). The same
/// state is never sent twice in a row.
public protocol HubComponentWithSelectionState: HubComponent {
    func updateViewForSelectionState(_ state: HubSelectionState)
}

// MARK: - Observers

/// A component that follows the scroll position of the view it is in (Hub's HUBComponentContentOffsetObserver).
public protocol HubComponentContentOffsetObserver: HubComponent {
    func updateViewForChangedContentOffset(_ offset: Point)
}

/// A component that observes its view (Hub's HUBComponentViewObserver).
public protocol HubComponentViewObserver: HubComponent {
    /// The view's size changed (not called for an unchanged size).
    func viewDidResize(to size: Size)
    /// The view is about to appear.
    func viewWillAppear()
}

// MARK: - Actions

/// A component that performs actions itself (Hub's HUBComponentActionPerformer). The host sets
/// ``actionPerformer`` right after creating the component.
public protocol HubComponentActionPerformer: HubComponent {
    var actionPerformer: HubActionPerformer? { get set }
}

/// A component that sees every action performed in its view while it is visible (Hub's HUBComponentActionObserver).
public protocol HubComponentActionObserver: HubComponent {
    func actionPerformed(with context: HubActionContext)
}
