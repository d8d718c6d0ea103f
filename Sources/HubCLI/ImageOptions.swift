import ArgumentParser
import FoundationEssentials
import HubCore

/// `--assets` and `--max-image-bytes`, shared by every command that draws a view's images.
struct ImageOptions: ParsableArguments {
    @Option(
        name: .customLong("assets"),
        help: ArgumentHelp(
            "A folder a view's local image paths may also point into, besides the view's own folder; repeatable.",
            valueName: "dir"))
    var assetFolders: [String] = []

    @Option(
        name: .customLong("max-image-bytes"), parsing: .unconditional,
        help: ArgumentHelp(
            "The largest local image file a view may use, in bytes.", valueName: "bytes"))
    var maxImageBytes: Int = ImageAccess.defaultMaxBytes

    func validate() throws {
        guard maxImageBytes > 0 else { throw ValidationError("--max-image-bytes must be at least 1") }
        for folder in assetFolders {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory else {
                throw ValidationError("--assets \(TerminalText.escaped(folder)): not a folder")
            }
        }
    }

    /// The image policy for a view read from `viewFile`.
    func access(viewFile: URL) -> ImageAccess {
        ImageAccess(
            viewFile: viewFile, assetFolders: assetFolders.map { URL(fileURLWithPath: $0) },
            maxBytes: maxImageBytes)
    }
}
