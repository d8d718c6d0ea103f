import FoundationEssentials
import HubCore

/// Checks every number a plugin hands the host where it crosses the boundary: NaN, infinities, negative or absurd
/// values would otherwise poison layout or trap in the host ("Double value cannot be converted to Int"). A bad
/// value is replaced by a safe one and reported once per plugin, call and kind of value, naming them.
///
/// # Thread safety
/// Main thread only, as every plugin call is.
public enum BoundaryValues {
    /// Larger coordinates and sizes than any view needs (a 100k-component view is a few million points tall).
    static let maxCoordinate = 1e9
    static let fontSizes = 0.5...1000.0
    static let maxStrokeWidth = 1e4
    static let maxLineLimit = 100_000

    /// Where reports go; stderr by default.
    nonisolated(unsafe) static var report: (String) -> Void = { line in
        StandardError.writeLine(line)
    }
    nonisolated(unsafe) private static var reported: Set<String> = []

    /// Whether a value a plugin handed over was replaced in this process, or a call it made from a thread of its
    /// own was refused: a plugin's bug, reported on stderr, so a command ends with "done, with problems" (1)
    /// rather than 0.
    public static var replacedAny: Bool { !reported.isEmpty || offThreadCall.withLock { $0 } != nil }

    /// The first refused call from a plugin's own thread (any thread writes it, once).
    static let offThreadCall = Locked<String?>(nil)

    /// How many refusals were made so far (repeats included), and the last one's words without the plugin: for a
    /// check to say why a call it made came to nothing.
    nonisolated(unsafe) private(set) static var refusals = 0
    nonisolated(unsafe) private(set) static var lastRefusal: String?

    /// What was replaced so far, one line each, sorted.
    static var replacedLines: [String] { reported.sorted() + (offThreadCall.withLock { $0 }.map { [$0] } ?? []) }

    /// Reports `problem` once for the plugin and call in progress. Out of line, with the words made only here,
    /// so the checks that call it stay a few instructions where every value a plugin draws passes them.
    @inline(never)
    static func refuse(_ problem: @autoclosure () -> String, record: PluginRecord? = nil, call: String? = nil) {
        let who: String
        if let record {
            who = "\(record.displayName)" + (call.map { " in \($0)" } ?? "")
        } else {
            who = CallRecorder.currentCallDescription ?? "a plugin"
        }
        let text = problem()
        refusals += 1
        lastRefusal = text
        let line = "hubhost: \(who): \(text)"
        guard reported.count < 1000, reported.insert(line).inserted else { return }
        report(line)
    }

    /// A coordinate (x, y): finite and within ±`maxCoordinate`.
    @inline(__always)
    static func coordinate(_ value: Double, _ what: StaticString) -> Double {
        if value.isFinite && abs(value) <= maxCoordinate { return value }
        refuse("\(what) \(value) is not a finite coordinate within ±\(Int(maxCoordinate)); used 0")
        return 0
    }

    /// A length (width, height): finite, non-negative, at most `maxCoordinate`.
    @inline(__always)
    static func length(_ value: Double, _ what: StaticString) -> Double {
        if value.isFinite && value >= 0 && value <= maxCoordinate { return value }
        let used = value.isFinite && value > maxCoordinate ? maxCoordinate : 0
        refuse("\(what) \(value) is not a length from 0 to \(Int(maxCoordinate)); used \(Int(used))")
        return used
    }

    @inline(__always)
    static func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> Rect {
        Rect(
            x: coordinate(x, "frame x"), y: coordinate(y, "frame y"), width: length(width, "frame width"),
            height: length(height, "frame height"))
    }

    static func fontSize(_ value: Double) -> Double {
        if fontSizes.contains(value) { return value }
        if value.isFinite && value <= 0 { return 14 }  // the header's default, not a slip
        let used = value.isFinite && value > fontSizes.upperBound ? fontSizes.upperBound : 14
        refuse("font size \(value) is outside \(fontSizes.lowerBound)…\(Int(fontSizes.upperBound)); used \(used)")
        return used
    }

    static func weight(_ value: UInt32) -> Int {
        if value == 0 { return 400 }  // the header's default
        if value <= 1000 { return Int(value) }
        refuse("font weight \(value) is outside 1…1000; used 400")
        return 400
    }

    static func lineLimit(_ value: UInt32) -> Int {
        if value <= UInt32(maxLineLimit) { return Int(value) }
        refuse("line limit \(value) is outside 0…\(maxLineLimit); used 0 (unlimited)")
        return 0
    }

    static func strokeWidth(_ value: Double, _ what: StaticString) -> Double {
        if value.isFinite && value >= 0 && value <= maxStrokeWidth { return value }
        refuse("\(what) \(value) is outside 0…\(Int(maxStrokeWidth)); used 0")
        return 0
    }

    /// A maximum text width for `measure_text`: 0 or less means unbounded, as the header says; NaN and
    /// infinities are unbounded too, but reported.
    static func maxWidth(_ value: Double) -> Double {
        if value.isFinite { return min(max(value, 0), maxCoordinate) }
        refuse("measure_text max width \(value) is not finite; measured unbounded")
        return 0
    }

    /// A layout manager's margin: finite within ±`maxCoordinate`, or HUB_MARGIN_NEW_ROW (DBL_MAX).
    /// Checked after the call returns, so the plugin and call are named by the caller.
    static func margin(_ value: Double, record: PluginRecord?, call: String) -> Double {
        if value == .greatestFiniteMagnitude || (value.isFinite && abs(value) <= maxCoordinate) { return value }
        refuse(
            "margin \(value) is neither finite within ±\(Int(maxCoordinate)) nor HUB_MARGIN_NEW_ROW; used 0",
            record: record, call: call)
        return 0
    }

    /// A timer delay: finite and from 0 to a day.
    static func seconds(_ value: Double, record: PluginRecord, call: String) -> Double {
        if value.isFinite && value >= 0 && value <= 86_400 { return value }
        let used: Double = value.isFinite && value > 86_400 ? 86_400 : 0
        refuse("delay \(value) s is outside 0…86400; used \(used)", record: record, call: call)
        return used
    }

    /// A count or index a plugin gives (children, rows): non-negative and below `limit`.
    static func index(_ value: Int, below limit: Int, _ what: StaticString) -> Int? {
        if value >= 0 && value < limit { return value }
        refuse("\(what) \(value) is outside 0..<\(limit); ignored")
        return nil
    }
}
