/// The host's fallback components (Hub has no built-in table; its demo maps `card` to an image component and
/// everything else to a row). They draw the model's texts so an unresolved component is still visible.
public final class DefaultFallbackHandler: ComponentFallbackHandler {
    public init() {}
    public func createFallbackComponent(forCategory category: String) -> Component {
        category == "card" ? FallbackCardComponent() : FallbackRowComponent()
    }
}

/// A full-width row: title and subtitle, 56 points high (72 with a subtitle).
public final class FallbackRowComponent: Component {
    private var model: ComponentModel?
    public init() {}
    public var layoutTraits: Set<LayoutTrait> { [.fullWidth, .stackable] }
    public func loadView() {}
    public func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        Size(width: containerSize.width, height: model.subtitle == nil ? 56 : 72)
    }
    public func prepareViewForReuse() { model = nil }
    public func configureView(with model: ComponentModel, containerSize: Size) { self.model = model }
    public func drawView(into view: ViewBuilder, size: Size) {
        view.rect(
            Rect(x: 0, y: 0, width: size.width, height: size.height),
            RectStyle(fill: Color(rgba: 0xF4F4_F4FF), stroke: Color(rgba: 0xD0D0_D0FF), strokeWidth: 1))
        view.text(
            Rect(x: 16, y: 10, width: max(0, size.width - 32), height: 20), model?.title ?? model?.identifier ?? "",
            TextStyle(fontSize: 16, weight: 600, lineLimit: 1))
        if let subtitle = model?.subtitle {
            view.text(
                Rect(x: 16, y: 36, width: max(0, size.width - 32), height: 18), subtitle,
                TextStyle(fontSize: 13, color: Color(rgba: 0x6666_66FF), lineLimit: 1))
        }
    }
}

/// A compact card: an image area and a title below it, 120×150.
public final class FallbackCardComponent: Component {
    private var model: ComponentModel?
    public init() {}
    public var layoutTraits: Set<LayoutTrait> { [.compactWidth] }
    public func loadView() {}
    public func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        Size(width: 120, height: 150)
    }
    public func prepareViewForReuse() { model = nil }
    public func configureView(with model: ComponentModel, containerSize: Size) { self.model = model }
    public func drawView(into view: ViewBuilder, size: Size) {
        view.image(Rect(x: 0, y: 0, width: size.width, height: size.width), uri: model?.mainImage?.uri)
        view.text(
            Rect(x: 0, y: size.width + 6, width: size.width, height: max(0, size.height - size.width - 6)),
            model?.title ?? model?.identifier ?? "", TextStyle(fontSize: 13, weight: 600, lineLimit: 2))
    }
}
