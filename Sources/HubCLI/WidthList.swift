import ArgumentParser
import FoundationEssentials
import HubCore

/// `--widths 320,375,768`: the container widths stories are drawn at (a story's own widths win).
struct WidthList: ExpressibleByArgument {
    var values: [Double]

    init?(argument: String) {
        let parts = argument.split(separator: ",").map { Double($0.trimmingWhitespace()) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil && $0!.isFinite && $0! >= 1 && $0! <= 4096 }) else {
            return nil
        }
        // Each width once: "375,375" draws (and counts) one image, not two of the same name.
        var seen = Set<Double>()
        values = parts.map { $0! }.filter { seen.insert($0).inserted }
    }

    init(_ values: [Double]) { self.values = values }

    /// How `--help` shows a default: "375", "320,375,768" (as it is typed), not the struct.
    var defaultValueDescription: String {
        values.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ",")
    }
}
