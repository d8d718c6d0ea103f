/// A colour as 0xRRGGBBAA (the C ABI's `uint32_t` colours).
public struct Color: Hashable, Sendable, Codable, CustomStringConvertible {
    public var rgba: UInt32

    public init(rgba: UInt32) { self.rgba = rgba }

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        rgba = UInt32(red) << 24 | UInt32(green) << 16 | UInt32(blue) << 8 | UInt32(alpha)
    }

    /// "#RRGGBB" or "#RRGGBBAA" (the "#" is optional); nil for anything else.
    public init?(hex: String) {
        var digits = Substring(hex)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
            let value = UInt32(digits, radix: 16)
        else { return nil }
        rgba = digits.count == 6 ? value << 8 | 0xFF : value
    }

    public var red: UInt8 { UInt8(truncatingIfNeeded: rgba >> 24) }
    public var green: UInt8 { UInt8(truncatingIfNeeded: rgba >> 16) }
    public var blue: UInt8 { UInt8(truncatingIfNeeded: rgba >> 8) }
    public var alpha: UInt8 { UInt8(truncatingIfNeeded: rgba) }
    /// Alpha from 0 to 1.
    public var opacity: Double { Double(rgba & 0xFF) / 255 }
    public var isVisible: Bool { rgba & 0xFF != 0 }

    public func withAlpha(_ alpha: UInt8) -> Color { Color(rgba: rgba & 0xFFFF_FF00 | UInt32(alpha)) }

    /// "#rrggbb" (alpha is written separately by renderers).
    public var hexRGB: String {
        let hex = String(rgba >> 8, radix: 16)
        return "#" + String(repeating: "0", count: max(0, 6 - hex.count)) + hex
    }

    /// "#rrggbbaa".
    public var description: String {
        let hex = String(rgba, radix: 16)
        return "#" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    public static let clear = Color(rgba: 0x0000_0000)
    public static let black = Color(rgba: 0x0000_00FF)
    public static let white = Color(rgba: 0xFFFF_FFFF)
    public static let gray = Color(rgba: 0x8E8E_93FF)
    public static let lightGray = Color(rgba: 0xE5E5_EAFF)
    public static let darkGray = Color(rgba: 0x3A3A_3CFF)
    public static let red = Color(rgba: 0xFF3B_30FF)
    public static let green = Color(rgba: 0x1DB9_54FF)
    public static let blue = Color(rgba: 0x007A_FFFF)
}
