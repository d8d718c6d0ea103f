/// The ranges numbers from views, event scripts and command-line options must fall in. Anything outside is an
/// error naming the JSON path, script line or option, never a trap later on (a viewport of 1e300 used to crash a
/// `Double` to `Int` conversion deep in text layout).
public enum InputLimits {
    /// The longest viewport side, in points (a 100k-point page is far beyond any screen).
    public static let viewportSide = 100_000.0
    /// The largest absolute coordinate or scroll offset, in points.
    public static let coordinate = 1e9
    /// The longest time one script step or option may name, in seconds (about 11.5 days).
    public static let seconds = 1e6
    /// The container widths a view is drawn at (`--widths`, the preview's widths field), in points.
    public static let containerWidths: ClosedRange<Double> = 1...4096
    /// The largest layout margin, in points.
    public static let margin = 10_000.0
    /// The deepest index path and the largest index in one.
    public static let indexPathDepth = 64
    public static let index = 1_000_000_000

    /// nil when `value` is finite and within `range`, else why not: "1e+300 is out of range (0 < x <= 100000)".
    public static func problem(_ value: Double, in range: ClosedRange<Double>, excludingLowerBound: Bool = false)
        -> String?
    {
        guard value.isFinite else { return "\(value) is not a finite number" }
        let low = excludingLowerBound ? value > range.lowerBound : value >= range.lowerBound
        if low && value <= range.upperBound { return nil }
        let lower = excludingLowerBound ? "\(format(range.lowerBound)) < x" : "\(format(range.lowerBound)) <= x"
        return "\(format(value)) is out of range (\(lower) <= \(format(range.upperBound)))"
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
