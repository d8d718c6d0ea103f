/// Content edges (Hub's HUBComponentLayoutContentEdge).
public enum ContentEdge: Int, Sendable {
    case top = 0
    case right = 1
    case bottom = 2
    case left = 3
}

/// The one source of margins for a view (Hub's HUBComponentLayoutManager). Components describe themselves with
/// layout traits; the layout manager turns traits into margins. Implementations must be pure.
public protocol LayoutManager: AnyObject {
    /// The margin between a component and a content edge.
    func marginBetweenComponent(withTraits traits: Set<LayoutTrait>, andContentEdge edge: ContentEdge) -> Double
    /// The vertical margin between a first-row component and the header above it.
    func verticalMarginBetweenComponent(
        withTraits traits: Set<LayoutTrait>,
        andHeaderWithTraits headerTraits: Set<LayoutTrait>
    ) -> Double
    /// The whole horizontal gap to the component on the left; `.greatestFiniteMagnitude` forces a new row.
    func horizontalMarginForComponent(
        withTraits traits: Set<LayoutTrait>,
        precedingTraits: Set<LayoutTrait>
    ) -> Double
    /// The whole vertical gap to a component in the row above.
    func verticalMarginForComponent(withTraits traits: Set<LayoutTrait>, precedingTraits: Set<LayoutTrait>) -> Double
    /// An x-shift applied to a whole row (centring).
    func horizontalOffsetForComponents(
        withTraits row: [Set<LayoutTrait>], firstComponentLeadingOffset: Double,
        lastComponentTrailingOffset: Double
    ) -> Double
}
