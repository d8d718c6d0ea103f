/// A colour as 0xRRGGBBAA.
public struct Color: Hashable, Sendable, Codable, CustomStringConvertible {
    public var rgba: UInt32
    public init(rgba: UInt32) { self.rgba = rgba }
    public static let clear = Color(rgba: 0)
    public static let black = Color(rgba: 0x0000_00FF)
    public static let white = Color(rgba: 0xFFFF_FFFF)
    public var alpha: Double { Double(rgba & 0xFF) / 255 }
    public var isVisible: Bool { rgba & 0xFF != 0 }
    /// "#rrggbb" (alpha is written separately by renderers).
    public var hexRGB: String {
        let hex = String(rgba >> 8, radix: 16)
        return "#" + String(repeating: "0", count: max(0, 6 - hex.count)) + hex
    }
    public var description: String {
        let hex = String(rgba, radix: 16)
        return "#" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }
}

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

public enum TextAlignment: Int, Sendable, Codable {
    case left = 0
    case center = 1
    case right = 2
}

public struct TextStyle: Hashable, Sendable {
    public var fontSize: Double
    public var weight: Int
    public var color: Color
    public var alignment: TextAlignment
    /// 0 means unlimited.
    public var lineLimit: Int
    public init(
        fontSize: Double = 14, weight: Int = 400, color: Color = .black, alignment: TextAlignment = .left,
        lineLimit: Int = 0
    ) {
        self.fontSize = fontSize > 0 ? fontSize : 14
        self.weight = weight > 0 ? weight : 400
        self.color = color
        self.alignment = alignment
        self.lineLimit = max(0, lineLimit)
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
