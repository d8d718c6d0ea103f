public struct RectStyle: Hashable, Sendable {
    public var fill: Color
    public var stroke: Color
    public var strokeWidth: Double
    public var cornerRadius: Double
    public init(fill: Color = .clear, stroke: Color = .clear, strokeWidth: Double = 0, cornerRadius: Double = 0) {
        self.fill = fill
        self.stroke = stroke
        self.strokeWidth = strokeWidth
        self.cornerRadius = cornerRadius
    }
}

public enum ContentMode: Int, Sendable, Codable {
    case scaleToFill = 0
    case aspectFit = 1
    case aspectFill = 2
}

/// One drawing instruction, in the component's own coordinates.
public enum DrawItem: Hashable, Sendable {
    case rect(Rect, RectStyle)
    case text(Rect, String, TextStyle)
    case image(Rect, uri: String?, mode: ContentMode, placeholder: Color)
    /// The child component created for child index `index`, drawn at `frame`.
    case child(Rect, index: Int)
}

/// Collects what a component draws (its display list). The host owns it and hands it to `drawView`.
public final class ViewBuilder {
    public private(set) var items: [DrawItem] = []
    public init() {}
    public func rect(_ frame: Rect, _ style: RectStyle) { items.append(.rect(frame, style)) }
    public func text(_ frame: Rect, _ string: String, _ style: TextStyle) { items.append(.text(frame, string, style)) }
    public func image(
        _ frame: Rect, uri: String?, mode: ContentMode = .aspectFill, placeholder: Color = Color(rgba: 0xDDDD_DDFF)
    ) {
        items.append(.image(frame, uri: uri, mode: mode, placeholder: placeholder))
    }
    public func child(_ frame: Rect, index: Int) { items.append(.child(frame, index: index)) }
    public func removeAll() { items.removeAll(keepingCapacity: true) }
}
