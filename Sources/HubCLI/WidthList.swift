import ArgumentParser
import FoundationEssentials
import HubCore

/// `--widths 320,375,768`: the container widths stories are drawn at (a story's own widths win).
struct WidthList: ExpressibleByArgument {
    var values: [Double]

    /// Numbers, comma-separated; their range is checked by `problem` (in the command's `validate`), so a width
    /// out of range is named rather than the whole list called invalid.
    init?(argument: String) {
        let parts = argument.split(separator: ",").map { Double($0.trimmingWhitespace()) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
        // Each width once: "375,375" draws (and counts) one image, not two of the same name.
        var seen = Set<Double>()
        values = parts.map { $0! }.filter { seen.insert($0).inserted }
    }

    init(_ values: [Double]) { self.values = values }

    /// "0 is out of range (1 <= x <= 4096)" for the first width that is not a width, else nil.
    var problem: String? {
        values.lazy.compactMap { InputLimits.problem($0, in: InputLimits.containerWidths) }.first
    }

    /// How `--help` shows a default: "375", "320,375,768" (as it is typed), not the struct.
    var defaultValueDescription: String {
        values.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ",")
    }
}
