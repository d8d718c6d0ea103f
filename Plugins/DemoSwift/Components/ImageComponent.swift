import HubPluginKit

/// `demo:image` — a compact square image.
///
/// Model fields: `images.main` (the image); `text.title` is its alternative text, drawn only when the model has
/// no image at all.
///
/// It adopts image handling: the host loads the main image at the square's size and tells the component when
/// it arrived. A loaded image much wider or taller than square is fitted (letterboxed) instead of cropped.
final class ImageComponent: HubComponent, HubComponentWithImageHandling {
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }

    private var imageURI: String?
    private var alternativeText = ""
    /// How the image fills the square; decided when the image arrives.
    private var contentMode = HubView.ContentMode.aspectFill

    private static let alternativeStyle = TextStyle(fontSize: 12, color: .darkGray, alignment: .center, lineLimit: 2)
    /// Cropping more than this aspect ratio would lose too much of the picture.
    private static let maximumCroppedAspectRatio = 2.0

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let side = Theme.compactWidth(in: containerSize)
        return Size(width: side, height: side)
    }

    func prepareViewForReuse() {
        imageURI = nil
        alternativeText = ""
        contentMode = .aspectFill
    }

    func configureView(with model: HubModel, containerSize: Size) {
        imageURI = model.mainImageURI
        alternativeText = model.title ?? ""
    }

    // MARK: Image handling

    func preferredSizeForImage(_ kind: HubImageKind, customID: String?, model: HubModel, containerSize: Size) -> Size {
        // Only the main image is shown, at the component's own size.
        kind == .main ? preferredViewSize(for: model, containerSize: containerSize) : .zero
    }

    func updateView(forLoadedImage image: HubLoadedImage, animated: Bool) {
        guard image.kind == .main, image.uri == imageURI, image.pixelSize.width > 0, image.pixelSize.height > 0 else {
            return
        }
        let ratio = image.pixelSize.width / image.pixelSize.height
        let elongated = max(ratio, 1 / ratio) > Self.maximumCroppedAspectRatio
        contentMode = elongated ? .aspectFit : .aspectFill
    }

    func draw(in view: HubView, size: Size) {
        view.image(imageURI, in: Rect(size: size), contentMode: contentMode, placeholder: Theme.imagePlaceholder)
        if imageURI == nil && !alternativeText.isEmpty {
            let width = size.width - 2 * Theme.spacing
            let height = measureText(alternativeText, style: Self.alternativeStyle, maxWidth: width).height
            view.text(
                alternativeText,
                in: Rect(
                    x: Theme.spacing, y: ((size.height - height) / 2).rounded(.down),
                    width: width, height: height),
                style: Self.alternativeStyle)
        }
    }
}
