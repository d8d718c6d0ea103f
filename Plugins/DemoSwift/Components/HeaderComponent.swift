import HubPluginKit

/// `demo:header` — a full-width header: a big title over a background image.
///
/// Model fields:
/// - `images.background` (or `images.main` when there is no background): drawn to fill the header;
/// - `text.title` (large, up to 2 lines) and `text.subtitle` (1 line), bottom-left over a dark scrim;
/// - `custom.height`: the height in points (default: 60% of the width, between 180 and 320).
final class HeaderComponent: HubComponent {
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }

    private var title = ""
    private var subtitle: String?
    private var imageURI: String?

    private static let titleStyle = TextStyle(fontSize: 28, weight: 700, color: .white, lineLimit: 2)
    private static let subtitleStyle = TextStyle(fontSize: 14, color: Color.white.withAlpha(0xCC), lineLimit: 1)
    /// Darkens the bottom of the image so white text stays readable on any picture.
    private static let scrim = Color.black.withAlpha(0x66)

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let height = model.customNumber("height") ?? min(320, max(180, (containerSize.width * 0.6).rounded()))
        return Size(width: containerSize.width, height: height)
    }

    func prepareViewForReuse() {
        title = ""
        subtitle = nil
        imageURI = nil
    }

    func configureView(with model: HubModel, containerSize: Size) {
        title = model.title ?? ""
        subtitle = model.subtitle
        imageURI = model.backgroundImageURI ?? model.mainImageURI
    }

    func draw(in view: HubView, size: Size) {
        view.image(imageURI, in: Rect(size: size), contentMode: .aspectFill, placeholder: .darkGray)

        // Lay the texts out from the bottom up.
        let width = size.width - 2 * Theme.padding
        let subtitleHeight = subtitle.map { measureText($0, style: Self.subtitleStyle, maxWidth: width).height } ?? 0
        let titleHeight = measureText(title, style: Self.titleStyle, maxWidth: width).height
        let subtitleY = size.height - Theme.padding - subtitleHeight
        let titleY = subtitleY - (subtitle == nil ? 0 : Theme.spacing / 2) - titleHeight

        let scrimY = max(0, titleY - Theme.padding)
        view.rect(Rect(x: 0, y: scrimY, width: size.width, height: size.height - scrimY), fill: Self.scrim)
        view.text(
            title, in: Rect(x: Theme.padding, y: titleY, width: width, height: titleHeight), style: Self.titleStyle)
        if let subtitle {
            view.text(
                subtitle, in: Rect(x: Theme.padding, y: subtitleY, width: width, height: subtitleHeight),
                style: Self.subtitleStyle)
        }
    }
}
