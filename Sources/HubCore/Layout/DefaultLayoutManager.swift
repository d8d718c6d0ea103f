/// Hub's default layout manager (HUBDefaultComponentLayoutManager) with one configurable margin `m`:
/// - edges: top/bottom 0 for `stackable`, else m; left/right 0 for `fullWidth`, else m;
/// - vertical: 0 when the component `alwaysStackUpwards` or both are `stackable`, else m (the header counts as
///   the preceding component for the first row);
/// - horizontal: 0 for `fullWidth`; a new row when exactly one of the two is `centered`; else m;
/// - row offset: centres a row whose components are all `centered`.
public final class DefaultLayoutManager: LayoutManager {
    public let margin: Double

    /// Hub's demo and hubhost use 15.
    public init(margin: Double = 15) { self.margin = margin }

    public func marginBetweenComponent(withTraits traits: Set<LayoutTrait>, andContentEdge edge: ContentEdge) -> Double
    {
        switch edge {
        case .top, .bottom: return traits.contains(.stackable) ? 0 : margin
        case .left, .right: return traits.contains(.fullWidth) ? 0 : margin
        }
    }

    public func verticalMarginBetweenComponent(
        withTraits traits: Set<LayoutTrait>,
        andHeaderWithTraits headerTraits: Set<LayoutTrait>
    ) -> Double {
        verticalMarginForComponent(withTraits: traits, precedingTraits: headerTraits)
    }

    public func horizontalMarginForComponent(
        withTraits traits: Set<LayoutTrait>,
        precedingTraits: Set<LayoutTrait>
    ) -> Double {
        if traits.contains(.fullWidth) { return 0 }
        // Centred components group together: mixing them with others forces a new row.
        if traits.contains(.centered) != precedingTraits.contains(.centered) { return .greatestFiniteMagnitude }
        return margin
    }

    public func verticalMarginForComponent(
        withTraits traits: Set<LayoutTrait>,
        precedingTraits: Set<LayoutTrait>
    ) -> Double {
        if traits.contains(.alwaysStackUpwards) { return 0 }
        if traits.contains(.stackable) && precedingTraits.contains(.stackable) { return 0 }
        return margin
    }

    public func horizontalOffsetForComponents(
        withTraits row: [Set<LayoutTrait>], firstComponentLeadingOffset: Double,
        lastComponentTrailingOffset: Double
    ) -> Double {
        guard !row.isEmpty, row.allSatisfy({ $0.contains(.centered) }) else { return 0 }
        return ((firstComponentLeadingOffset + lastComponentTrailingOffset) / 2 - firstComponentLeadingOffset)
            .rounded(.down)
    }
}
