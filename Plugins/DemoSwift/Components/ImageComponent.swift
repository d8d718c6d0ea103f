import HubPluginKit

/// `demo:image` — a compact square image.
///
/// Model fields: `images.main` (the image); `text.title` is drawn only while the image is not loaded, as its
/// alternative text.
///
/// It adopts image handling, so the host loads the main image at the square's size and tells the component
/// when it arrived.
final class ImageComponent: HubComponent, HubComponentWithImageHandling {
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }

    private var imageURI: String?
    private var alternativeText = ""
    /// Set when the host delivered the image for the current model.
    private var imageLoaded = false

    private static let alternativeStyle = TextStyle(fontSize: 12, color: .darkGray, alignment: .center, lineLimit: 2)

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let side = Theme.compactWidth(in: containerSize)
        return Size(width: side, height: side)
    }

    func prepareViewForReuse() {
        imageURI = nil
        alternativeText = ""
        imageLoaded = false
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
        if image.kind == .main && image.uri == imageURI { imageLoaded = true }
    }

    func draw(in view: HubView, size: Size) {
        let frame = Rect(size: size)
        view.image(imageURI, in: frame, contentMode: .aspectFill, placeholder: Theme.imagePlaceholder)
        if !imageLoaded && !alternativeText.isEmpty {
            let height = measureText(alternativeText, style: Self.alternativeStyle, maxWidth: size.width - 16).height
            view.text(alternativeText, in: Rect(x: 8, y: ((size.height - height) / 2).rounded(.down),
                                                width: size.width - 16, height: height),
                      style: Self.alternativeStyle)
        }
    }
}
