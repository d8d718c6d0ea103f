import ArgumentParser
import HubCore

/// `--width` and `--height`, shared by every command that lays out a view.
struct ViewportOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Viewport width in points (at most 100000).")
    var width: Double = 375

    @Option(parsing: .unconditional, help: "Viewport height in points (at most 100000).")
    var height: Double = 667

    /// The viewport as a size.
    var size: Size { Size(width: width, height: height) }

    func validate() throws {
        let range = 0...InputLimits.viewportSide
        if let problem = InputLimits.problem(width, in: range, excludingLowerBound: true) {
            throw ValidationError("--width: \(problem)")
        }
        if let problem = InputLimits.problem(height, in: range, excludingLowerBound: true) {
            throw ValidationError("--height: \(problem)")
        }
    }
}
