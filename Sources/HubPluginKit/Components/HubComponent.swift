/// A component (Hub's HUBComponent): a controller between a ``HubModel`` and a headless view that draws itself
/// into a display list.
///
/// A factory (``HubComponentFactory``) creates components by name; the host drives them:
/// 1. ``layoutTraits`` and ``preferredViewSize(for:containerSize:)`` (instances used only for sizing get nothing else);
/// 2. ``loadView()``, once, before the first configuration;
/// 3. ``configureView(with:containerSize:)`` for each new model (an equal model is not configured again);
/// 4. ``prepareViewForReuse()`` before it shows a different model, then configure again;
/// 5. ``draw(in:size:)`` whenever the host renders it, at its final size.
///
/// Optional abilities (Hub's protocol extensions) are separate protocols: conform to them and the SDK tells the
/// host. See ``HubComponentWithChildren``, ``HubComponentWithImageHandling``,
/// ``HubComponentWithRestorableUIState``, ``HubComponentWithSelectionState``,
/// ``HubComponentContentOffsetObserver``, ``HubComponentViewObserver``, ``HubComponentActionPerformer`` and
/// ``HubComponentActionObserver``.
///
/// # Implementation requirements
/// - ``layoutTraits`` is the same for every instance of the class (the host may use one instance's traits for another).
/// - Components are reused for many models: never assume one model per instance. Reset everything model-specific
///   in ``prepareViewForReuse()`` and hold as little state as possible.
/// - ``preferredViewSize(for:containerSize:)`` returns a finite, non-negative size and depends only on its
///   arguments (the host may cache it). Never hard-code the internal layout from it: ``draw(in:size:)`` lays
///   out for the size it is given, which may differ.
/// - ``draw(in:size:)`` draws only from state set by ``configureView(with:containerSize:)`` (and the extensions).
///
/// - Important: Every method is called on the host's main thread.
public protocol HubComponent: AnyObject {
    /// The layout traits of this component class.
    var layoutTraits: Set<LayoutTrait> { get }

    /// Creates the view state (Hub's -loadView). Called once per displayed instance, before the first
    /// configuration. The default does nothing.
    func loadView()

    /// The size the component prefers for displaying `model` in a container of `containerSize`. The host
    /// respects it as far as the layout traits allow and clamps the width to the container.
    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size

    /// Resets view state (highlights, held models) before the instance shows another model. The default does nothing.
    func prepareViewForReuse()

    /// Binds `model` to the view. `model` stays valid until the next configuration, reuse or destruction.
    func configureView(with model: HubModel, containerSize: Size)

    /// Draws the view at `size` into `view`, in the component's own coordinates.
    func draw(in view: HubView, size: Size)
}

extension HubComponent {
    public func loadView() {}
    public func prepareViewForReuse() {}
}
