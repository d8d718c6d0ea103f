/// How text sits in its frame (the C ABI's `hub_text_alignment`).
public enum TextAlignment: Int, Sendable, Codable {
    case left = 0
    case center = 1
    case right = 2
}

/// How text is drawn and measured (the C ABI's `hub_text_style`).
public struct TextStyle: Hashable, Sendable {
    public typealias Alignment = TextAlignment

    public var fontSize: Double
    /// 100…900, CSS-style.
    public var weight: Int
    public var color: Color
    public var alignment: TextAlignment
    /// 0 means unlimited.
    public var lineLimit: Int

    /// A font size or weight of zero or less means the default (14, 400); a negative line limit means unlimited.
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

    public static let body = TextStyle()
    public static let caption = TextStyle(fontSize: 12, color: .gray)
    public static let title = TextStyle(fontSize: 16, weight: 600)
    public static let largeTitle = TextStyle(fontSize: 28, weight: 700)

    /// This style with some members replaced.
    public func with(
        fontSize: Double? = nil, weight: Int? = nil, color: Color? = nil, alignment: TextAlignment? = nil,
        lineLimit: Int? = nil
    ) -> TextStyle {
        TextStyle(
            fontSize: fontSize ?? self.fontSize, weight: weight ?? self.weight, color: color ?? self.color,
            alignment: alignment ?? self.alignment, lineLimit: lineLimit ?? self.lineLimit)
    }
}
