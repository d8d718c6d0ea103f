import HubCore

/// Hub's test layout manager: every margin is 0 unless configured for the exact trait set of the component.
final class MockLayoutManager: LayoutManager {
    var edgeMargins: [Set<LayoutTrait>: [ContentEdge: Double]] = [:]
    var headerMargins: [Set<LayoutTrait>: Double] = [:]
    var horizontalMargins: [Set<LayoutTrait>: Double] = [:]
    var verticalMargins: [Set<LayoutTrait>: Double] = [:]
    /// Returned for every non-empty row.
    var rowOffset: Double = 0

    func setEdges(_ traits: Set<LayoutTrait>, _ value: Double, edges: [ContentEdge] = [.top, .right, .bottom, .left]) {
        for edge in edges { edgeMargins[traits, default: [:]][edge] = value }
    }

    func marginBetweenComponent(withTraits traits: Set<LayoutTrait>, andContentEdge edge: ContentEdge) -> Double {
        edgeMargins[traits]?[edge] ?? 0
    }
    func verticalMarginBetweenComponent(
        withTraits traits: Set<LayoutTrait>, andHeaderWithTraits headerTraits: Set<LayoutTrait>
    ) -> Double {
        headerMargins[traits] ?? 0
    }
    func horizontalMarginForComponent(withTraits traits: Set<LayoutTrait>, precedingTraits: Set<LayoutTrait>) -> Double
    {
        horizontalMargins[traits] ?? 0
    }
    func verticalMarginForComponent(withTraits traits: Set<LayoutTrait>, precedingTraits: Set<LayoutTrait>) -> Double {
        verticalMargins[traits] ?? 0
    }
    func horizontalOffsetForComponents(
        withTraits row: [Set<LayoutTrait>], firstComponentLeadingOffset: Double,
        lastComponentTrailingOffset: Double
    ) -> Double {
        row.isEmpty ? 0 : rowOffset
    }
}

// Short trait names for the golden tables.
// swift-format-ignore: AlwaysUseLowerCamelCase
let C: LayoutTrait = .compactWidth
// swift-format-ignore: AlwaysUseLowerCamelCase
let F: LayoutTrait = .fullWidth
// swift-format-ignore: AlwaysUseLowerCamelCase
let S: LayoutTrait = .stackable
// swift-format-ignore: AlwaysUseLowerCamelCase
let Z: LayoutTrait = .centered
// swift-format-ignore: AlwaysUseLowerCamelCase
let U: LayoutTrait = .alwaysStackUpwards

func item(_ traits: Set<LayoutTrait>, _ width: Double, _ height: Double) -> LayoutItem {
    LayoutItem(traits: traits, preferredSize: Size(width: width, height: height))
}

func r(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Rect { Rect(x: x, y: y, width: w, height: h) }
