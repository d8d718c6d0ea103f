import CHubPlugin

/// The edges of a view's content area.
public enum HubContentEdge: Sendable {
    case top, right, bottom, left

    init(_ edge: hub_content_edge) {
        switch edge {
        case HUB_EDGE_TOP: self = .top
        case HUB_EDGE_RIGHT: self = .right
        case HUB_EDGE_BOTTOM: self = .bottom
        default: self = .left
        }
    }
}

/// Special margin values.
public enum HubMargin {
    /// Returned by ``HubLayoutManager/horizontalMargin(for:preceding:)`` to force a component onto a new row
    /// (Hub's CGFLOAT_MAX).
    public static let newRow = HUB_MARGIN_NEW_ROW
}

/// The one source of margins for a layout (Hub's HUBComponentLayoutManager). Register it with
/// ``HubRegistrar/registerLayoutManager(_:id:)``; views use it when hubhost runs with `--layout-manager ID`.
///
/// # Implementation requirements
/// Every method is pure: the same traits give the same margins, and nothing else influences them (the host
/// caches results). Margins are finite and non-negative, except ``HubMargin/newRow``.
///
/// - Important: Called on the host's main thread.
public protocol HubLayoutManager: AnyObject {
    /// The margin between a component with `traits` and the content edge `edge`.
    func marginToContentEdge(_ edge: HubContentEdge, for traits: Set<LayoutTrait>) -> Double
    /// The vertical margin between a first-row component with `traits` and the header above it.
    func verticalMarginToHeader(for traits: Set<LayoutTrait>, headerTraits: Set<LayoutTrait>) -> Double
    /// The whole horizontal gap between a component and the one before it on its row.
    func horizontalMargin(for traits: Set<LayoutTrait>, preceding: Set<LayoutTrait>) -> Double
    /// The whole vertical gap between a component and a component in the row above it.
    func verticalMargin(for traits: Set<LayoutTrait>, preceding: Set<LayoutTrait>) -> Double
    /// An x-shift for a whole row (its components' traits in order), given the free space before the first and
    /// after the last component. The default is 0 (no shift).
    func horizontalOffset(forRow row: [Set<LayoutTrait>], leading: Double, trailing: Double) -> Double
}

extension HubLayoutManager {
    public func horizontalOffset(forRow row: [Set<LayoutTrait>], leading: Double, trailing: Double) -> Double { 0 }
}
