import ArgumentParser
import HubCore

/// `--width` and `--height`, shared by every command that lays out a view.
struct ViewportOptions: ParsableArguments {
    @Option(help: "Viewport width in points.")
    var width: Double = 375

    @Option(help: "Viewport height in points.")
    var height: Double = 667

    /// The viewport as a size.
    var size: Size { Size(width: width, height: height) }

    func validate() throws {
        guard width > 0, height > 0, width.isFinite, height.isFinite else {
            throw ValidationError("--width and --height must be positive")
        }
    }
}
