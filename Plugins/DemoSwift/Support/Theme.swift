import HubPluginKit

/// The demo's shared look: spacing, colours and text styles, so the components line up with each other.
enum Theme {
    /// Inner padding of rows, headers and carousels.
    static let padding = 16.0
    /// Space between items inside a component (title and subtitle, carousel items).
    static let spacing = 8.0

    static let background = Color.white
    /// Drawn behind a row or card while it is highlighted.
    static let highlight = Color(rgba: 0xE8F0_FEFF)
    /// Drawn behind a row or card while it is selected.
    static let selected = Color(rgba: 0xCFE0_FCFF)
    static let separator = Color.lightGray
    static let imagePlaceholder = Color(rgba: 0xD1D1_D6FF)

    static let title = TextStyle(fontSize: 16, weight: 600, lineLimit: 2)
    static let subtitle = TextStyle(fontSize: 14, color: .gray, lineLimit: 2)
    static let accessory = TextStyle(fontSize: 14, color: .gray, alignment: .right, lineLimit: 1)

    /// The background colour for a selection state.
    static func fill(for state: HubSelectionState, normal: Color = background) -> Color {
        switch state {
        case .none: return normal
        case .highlighted: return highlight
        case .selected: return selected
        }
    }

    /// The width of a compact (two per row) item in a container: 160 points when two fit with the standard
    /// margins (15 around and between them), else half of what is left.
    static func compactWidth(in container: Size) -> Double {
        let twoAcross = ((container.width - 45) / 2).rounded(.down)
        return max(60, min(160, twoAcross))
    }
}
