import CHubPlugin

/// A component's headless view: what ``HubComponent/draw(in:size:)`` draws into.
///
/// Every call appends one item to the view's display list, in drawing order (later items are drawn on top).
/// Coordinates are the component's own: (0, 0) is its top-left corner, and the size it was given is its whole area.
///
/// - Important: A `HubView` is valid only during the `draw(in:size:)` call it was passed to; do not keep it.
public struct HubView {
    /// How an image fills its frame.
    public enum ContentMode: Sendable {
        case scaleToFill, aspectFit, aspectFill
    }

    let builder: UnsafePointer<hub_view_builder>

    init(_ builder: UnsafePointer<hub_view_builder>) {
        self.builder = builder
    }

    /// Appends a rectangle. A `.clear` fill or stroke is not drawn.
    public func rect(
        _ frame: Rect, fill: Color, stroke: Color = .clear, strokeWidth: Double = 0,
        cornerRadius: Double = 0
    ) {
        var style = hub_rect_style(
            struct_size: structSize(hub_rect_style.self), fill_color: fill.rgba,
            stroke_color: stroke.rgba, stroke_width: strokeWidth, corner_radius: cornerRadius)
        builder.pointee.rect?(builder, frame.c, &style)
    }

    /// Appends text wrapped to `frame.width` and cut to `style.lineLimit` lines, exactly as ``measureText(_:style:maxWidth:)``
    /// measures it.
    public func text(_ text: String, in frame: Rect, style: TextStyle = .body) {
        var cStyle = style.c
        text.withCString { builder.pointee.text?(builder, frame.c, $0, &cStyle) }
    }

    /// Appends an image by URI (for example ``HubModel/mainImageURI``). The host draws the loaded image when it
    /// has one, else `placeholder`. A nil URI draws only the placeholder.
    public func image(
        _ uri: String?, in frame: Rect, contentMode: ContentMode = .aspectFill,
        placeholder: Color = .lightGray
    ) {
        let mode: hub_content_mode
        switch contentMode {
        case .scaleToFill: mode = HUB_CONTENT_SCALE_TO_FILL
        case .aspectFit: mode = HUB_CONTENT_ASPECT_FIT
        case .aspectFill: mode = HUB_CONTENT_ASPECT_FILL
        }
        withOptionalCString(uri) { builder.pointee.image?(builder, frame.c, $0, mode, placeholder.rgba) }
    }

    /// Places the child component created with ``HubChildDelegate/createChild(at:)`` for child `index` at `frame`.
    /// The child draws itself there; an index without a created child is ignored by the host.
    public func child(_ index: Int, in frame: Rect) {
        guard index >= 0 else { return }
        builder.pointee.child?(builder, frame.c, index)
    }
}
