import CHubPlugin

/// How text is drawn and measured.
public struct TextStyle: Hashable, Sendable {
    /// How lines are aligned in their frame.
    public enum Alignment: Sendable {
        case left, center, right
    }

    /// Points; 0 or less means 14.
    public var fontSize: Double
    /// 100…900, CSS-style (400 regular, 700 bold).
    public var weight: Int
    public var color: Color
    public var alignment: Alignment
    /// The maximum number of lines; 0 means unlimited. Cut text ends with "…".
    public var lineLimit: Int

    public init(
        fontSize: Double = 14, weight: Int = 400, color: Color = .black, alignment: Alignment = .left,
        lineLimit: Int = 0
    ) {
        self.fontSize = fontSize
        self.weight = weight
        self.color = color
        self.alignment = alignment
        self.lineLimit = lineLimit
    }

    /// Regular body text, 14 points.
    public static let body = TextStyle()
    /// Secondary text, 12 points, grey.
    public static let caption = TextStyle(fontSize: 12, color: .gray)
    /// A bold title, 16 points.
    public static let title = TextStyle(fontSize: 16, weight: 600)
    /// A large bold title, 28 points.
    public static let largeTitle = TextStyle(fontSize: 28, weight: 700)

    /// A copy with some fields changed, for one-off variations: `TextStyle.body.with(color: .white)`.
    public func with(
        fontSize: Double? = nil, weight: Int? = nil, color: Color? = nil,
        alignment: Alignment? = nil, lineLimit: Int? = nil
    ) -> TextStyle {
        TextStyle(
            fontSize: fontSize ?? self.fontSize, weight: weight ?? self.weight, color: color ?? self.color,
            alignment: alignment ?? self.alignment, lineLimit: lineLimit ?? self.lineLimit)
    }
}

// MARK: - Internals

extension TextStyle {
    var c: hub_text_style {
        let cAlignment: hub_text_alignment
        switch alignment {
        case .left: cAlignment = HUB_TEXT_LEFT
        case .center: cAlignment = HUB_TEXT_CENTER
        case .right: cAlignment = HUB_TEXT_RIGHT
        }
        return hub_text_style(
            struct_size: structSize(hub_text_style.self), font_size: fontSize,
            weight: UInt32(clamping: weight), color: color.rgba, alignment: cAlignment,
            line_limit: UInt32(clamping: lineLimit))
    }
}
