/// A layout trait (Hub's HUBComponentLayoutTrait): an extensible string describing how a component wants to be
/// laid out. The layout manager turns traits into margins.
public struct LayoutTrait: Hashable, Sendable, Comparable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: LayoutTrait, b: LayoutTrait) -> Bool { a.rawValue < b.rawValue }

    /// Does not fill the width.
    public static let compactWidth = LayoutTrait("compactWidth")
    /// Fills the width, no horizontal margins.
    public static let fullWidth = LayoutTrait("fullWidth")
    /// No vertical margin between two stackable components.
    public static let stackable = LayoutTrait("stackable")
    /// Its row is centred.
    public static let centered = LayoutTrait("centered")
    /// No vertical margin above it, whatever comes before.
    public static let alwaysStackUpwards = LayoutTrait("alwaysStackUpwards")

    public static let standard: [LayoutTrait] = [.compactWidth, .fullWidth, .stackable, .centered, .alwaysStackUpwards]

    /// Parses a comma-separated list ("compactWidth, stackable"); empty entries are ignored.
    public static func parseList(_ list: String) -> Set<LayoutTrait> {
        var traits = Set<LayoutTrait>()
        for entry in list.split(separator: ",") {
            let name = entry.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            if !name.isEmpty { traits.insert(LayoutTrait(String(name))) }
        }
        return traits
    }
}

extension Set where Element == LayoutTrait {
    /// Sorted names, for stable output.
    public var sortedNames: [String] { map(\.rawValue).sorted() }

    /// Calls `body` with each name in `sortedNames` order, making no array for the usual zero to two traits (the
    /// writers do this once per component).
    @inlinable
    public func forEachSortedName(_ body: (String) -> Void) {
        if count <= 1 {
            for trait in self { body(trait.rawValue) }
        } else if count == 2 {
            let first = self[startIndex].rawValue
            let second = self[index(after: startIndex)].rawValue
            if first < second {
                body(first)
                body(second)
            } else {
                body(second)
                body(first)
            }
        } else {
            sortedNames.forEach(body)
        }
    }
}
