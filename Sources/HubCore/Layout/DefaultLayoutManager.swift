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
        case .top, .bottom: return traits.has(.stackable) ? 0 : margin
        case .left, .right: return traits.has(.fullWidth) ? 0 : margin
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
        if traits.has(.fullWidth) { return 0 }
        // Centred components group together: mixing them with others forces a new row.
        if traits.has(.centered) != precedingTraits.has(.centered) { return .greatestFiniteMagnitude }
        return margin
    }

    public func verticalMarginForComponent(
        withTraits traits: Set<LayoutTrait>,
        precedingTraits: Set<LayoutTrait>
    ) -> Double {
        if traits.has(.alwaysStackUpwards) { return 0 }
        if traits.has(.stackable) && precedingTraits.has(.stackable) { return 0 }
        return margin
    }

    public func horizontalOffsetForComponents(
        withTraits row: [Set<LayoutTrait>], firstComponentLeadingOffset: Double,
        lastComponentTrailingOffset: Double
    ) -> Double {
        guard !row.isEmpty, row.allSatisfy({ $0.has(.centered) }) else { return 0 }
        return ((firstComponentLeadingOffset + lastComponentTrailingOffset) / 2 - firstComponentLeadingOffset)
            .rounded(.down)
    }
}

extension Set where Element == LayoutTrait {
    /// `contains`, by comparing names when the set is small (components have a trait or two): the layout asks
    /// several times per component, and hashing a name costs more than comparing a few.
    @inline(__always)
    func has(_ trait: LayoutTrait) -> Bool {
        if count > 4 { return contains(trait) }
        for member in self where member.rawValue == trait.rawValue { return true }
        return false
    }
}
