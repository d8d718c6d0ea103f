import HubPluginKit

/// `demo:card` — a compact card: a square image with a title (and optional subtitle) below it.
///
/// Model fields:
/// - `images.main`: the square image;
/// - `text.title` (1 line), `text.subtitle` (1 line);
/// - `custom.color` ("#RRGGBB"): the card's background colour (default white).
///
/// Size: 160×200 when two cards fit side by side, else narrower (see `Theme.compactWidth`). The card
/// highlights with the selection state.
final class CardComponent: HubComponent, HubComponentWithSelectionState {
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }

    private var title = ""
    private var subtitle: String?
    private var imageURI: String?
    private var background = Theme.background
    private var selectionState = HubSelectionState.none

    private static let titleStyle = TextStyle(fontSize: 14, weight: 600, lineLimit: 1)
    private static let subtitleStyle = TextStyle(fontSize: 12, color: .gray, lineLimit: 1)
    /// The text area under the image: two lines of text and some padding.
    private static let textAreaHeight = 40.0

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let width = Theme.compactWidth(in: containerSize)
        return Size(width: width, height: width + Self.textAreaHeight)
    }

    func prepareViewForReuse() {
        title = ""
        subtitle = nil
        imageURI = nil
        background = Theme.background
        selectionState = .none
    }

    func configureView(with model: HubModel, containerSize: Size) {
        title = model.title ?? ""
        subtitle = model.subtitle
        imageURI = model.mainImageURI
        background = model.customString("color").flatMap(Color.init(hex:)) ?? Theme.background
    }

    func updateViewForSelectionState(_ state: HubSelectionState) {
        selectionState = state
    }

    func draw(in view: HubView, size: Size) {
        view.rect(
            Rect(size: size), fill: Theme.fill(for: selectionState, normal: background), stroke: Theme.separator,
            strokeWidth: 1, cornerRadius: 6)
        // The image is square and as wide as the card; the texts share what is left below it.
        let side = min(size.width, max(0, size.height - Self.textAreaHeight))
        view.image(imageURI, in: Rect(x: 0, y: 0, width: size.width, height: side), placeholder: Theme.imagePlaceholder)

        let textWidth = size.width - 2 * Theme.spacing
        let titleHeight = measureText(title, style: Self.titleStyle, maxWidth: textWidth).height
        view.text(
            title, in: Rect(x: Theme.spacing, y: side + 4, width: textWidth, height: titleHeight),
            style: Self.titleStyle)
        if let subtitle {
            let height = measureText(subtitle, style: Self.subtitleStyle, maxWidth: textWidth).height
            view.text(
                subtitle, in: Rect(x: Theme.spacing, y: side + 4 + titleHeight, width: textWidth, height: height),
                style: Self.subtitleStyle)
        }
    }
}
