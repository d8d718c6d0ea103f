import HubPluginKit

/// `demo:row` — a full-width row: title, subtitle and a trailing accessory text.
///
/// Model fields:
/// - `text.title` (up to 2 lines), `text.subtitle` (up to 2 lines), `text.accessory` (1 line, trailing);
/// - `custom.color` ("#RRGGBB"): an optional colour swatch at the leading edge.
///
/// Height: the measured text plus padding, at least 56 points. The row highlights with the selection state.
final class RowComponent: HubComponent, HubComponentWithSelectionState {
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }

    // What configureView bound; reset in prepareViewForReuse.
    private var title = ""
    private var subtitle: String?
    private var accessory: String?
    private var swatch: Color?
    private var selectionState = HubSelectionState.none

    private static let minimumHeight = 56.0
    private static let swatchSize = 24.0

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let layout = Layout(
            width: containerSize.width, accessory: model.accessoryTitle,
            hasSwatch: model.customString("color").flatMap(Color.init(hex:)) != nil)
        let titleHeight = measureText(model.title ?? "", style: Theme.title, maxWidth: layout.textWidth).height
        var height = Theme.padding + titleHeight + Theme.padding
        if let subtitle = model.subtitle {
            height +=
                Theme.spacing / 2 + measureText(subtitle, style: Theme.subtitle, maxWidth: layout.textWidth).height
        }
        return Size(width: containerSize.width, height: max(Self.minimumHeight, height))
    }

    func prepareViewForReuse() {
        title = ""
        subtitle = nil
        accessory = nil
        swatch = nil
        selectionState = .none
    }

    func configureView(with model: HubModel, containerSize: Size) {
        title = model.title ?? ""
        subtitle = model.subtitle
        accessory = model.accessoryTitle
        swatch = model.customString("color").flatMap(Color.init(hex:))
    }

    func updateViewForSelectionState(_ state: HubSelectionState) {
        selectionState = state
    }

    func draw(in view: HubView, size: Size) {
        view.rect(Rect(size: size), fill: Theme.fill(for: selectionState))

        let layout = Layout(width: size.width, accessory: accessory, hasSwatch: swatch != nil)
        if let swatch {
            let y = ((size.height - Self.swatchSize) / 2).rounded(.down)
            view.rect(
                Rect(x: Theme.padding, y: y, width: Self.swatchSize, height: Self.swatchSize), fill: swatch,
                cornerRadius: 4)
        }

        // Title and subtitle as one block, centred vertically.
        let titleHeight = measureText(title, style: Theme.title, maxWidth: layout.textWidth).height
        let subtitleHeight =
            subtitle.map { measureText($0, style: Theme.subtitle, maxWidth: layout.textWidth).height } ?? 0
        let blockHeight = titleHeight + (subtitle == nil ? 0 : Theme.spacing / 2 + subtitleHeight)
        var y = max(Theme.padding, ((size.height - blockHeight) / 2).rounded(.down))
        view.text(
            title, in: Rect(x: layout.textX, y: y, width: layout.textWidth, height: titleHeight), style: Theme.title)
        if let subtitle {
            y += titleHeight + Theme.spacing / 2
            view.text(
                subtitle, in: Rect(x: layout.textX, y: y, width: layout.textWidth, height: subtitleHeight),
                style: Theme.subtitle)
        }

        if let accessory {
            let height = measureText(accessory, style: Theme.accessory, maxWidth: 0).height
            view.text(
                accessory,
                in: Rect(
                    x: size.width - Theme.padding - layout.accessoryWidth,
                    y: ((size.height - height) / 2).rounded(.down),
                    width: layout.accessoryWidth, height: height),
                style: Theme.accessory)
        }

        // A hairline separator at the bottom, inset like a table view's.
        view.rect(
            Rect(x: layout.textX, y: size.height - 1, width: size.width - layout.textX, height: 1),
            fill: Theme.separator)
    }

    /// Where the texts go for a row of `width`: the same computation for sizing and drawing, so they agree.
    private struct Layout {
        var textX: Double
        var textWidth: Double
        var accessoryWidth: Double

        init(width: Double, accessory: String?, hasSwatch: Bool) {
            textX = Theme.padding + (hasSwatch ? RowComponent.swatchSize + Theme.padding : 0)
            // The accessory keeps its natural width, up to a third of the row.
            accessoryWidth =
                accessory.map { min(measureText($0, style: Theme.accessory, maxWidth: 0).width, width / 3) } ?? 0
            let gap = accessoryWidth > 0 ? Theme.spacing : 0
            textWidth = max(0, width - textX - Theme.padding - accessoryWidth - gap)
        }
    }
}
