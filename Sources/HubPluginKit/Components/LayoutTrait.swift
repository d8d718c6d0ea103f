/// A layout trait: how a component wants to be laid out (Hub's HUBComponentLayoutTrait). The host's layout
/// manager turns traits into margins. Traits are extensible strings; a plugin may define its own for its own
/// layout manager.
public struct LayoutTrait: Hashable, Sendable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        rawValue = value
    }

    public var description: String { rawValue }

    /// Takes about half the width, several side by side (cards, images).
    public static let compactWidth: LayoutTrait = "compactWidth"
    /// Takes the whole width of the container (rows, headers, carousels).
    public static let fullWidth: LayoutTrait = "fullWidth"
    /// No margin between two stackable components.
    public static let stackable: LayoutTrait = "stackable"
    /// The row is centred with equal space on both sides.
    public static let centered: LayoutTrait = "centered"
    /// Always starts a new row above instead of sharing one.
    public static let alwaysStackUpwards: LayoutTrait = "alwaysStackUpwards"
}
