import FoundationEssentials
import HubCore

/// Naming a component's source in outputs: the plugin id for a factory owner, "fallback" otherwise.
public struct SourceNaming {
    /// The plugin id for an owner. The default reads the id from hubhost's owner ids ("com.x.rows@1.2.0#3").
    public var pluginID: (Owner) -> String

    public init(pluginID: @escaping (Owner) -> String = SourceNaming.idBeforeVersion) { self.pluginID = pluginID }

    private let recent = RecentNames()

    /// `pluginID(owner)`, remembered for the last few owners: a view names the same few plugins on every node, and
    /// the lookup behind `pluginID` walks the host's plugin list.
    public func id(of owner: Owner) -> String {
        for entry in recent.entries where entry.owner == owner.id { return entry.name }
        let name = pluginID(owner)
        if recent.entries.count == RecentNames.limit { recent.entries.removeFirst() }
        recent.entries.append((owner.id, name))
        return name
    }

    private final class RecentNames {
        static let limit = 8
        var entries: [(owner: String, name: String)] = []
    }

    public static func idBeforeVersion(_ owner: Owner) -> String {
        if let at = owner.id.firstIndex(of: "@") { return String(owner.id[..<at]) }
        return owner.id
    }
}

/// Turns image URIs into something a standalone SVG or HTML page can show: `data:` URIs as they are, local files
/// that `access` allows (inside the view's folder or `--assets`) read and inlined as `data:` URIs. Remote URIs are
/// not fetched (output stays deterministic and offline), and refused ones are not read: their placeholder colour
/// is drawn.
public final class ImageResolver {
    public let access: ImageAccess
    private var cache: [String: String?] = [:]

    /// The pixels all the images one drawing inlines may decode to together (four images at the per-image limit):
    /// each image under `ImageAccess.maxPixels` is no bomb, but twenty of them took 4 GB in a PNG render.
    public static let maxTotalPixels = 4 * ImageAccess.maxPixels
    private var inlinedPixels = 0.0
    /// Whether a drawing in this process drew an image as its placeholder for that total: said on stderr, and the
    /// command ends with problems (1).
    nonisolated(unsafe) public private(set) static var overBudgetSeen = false
    /// Whether a drawing in this process drew an image as its placeholder because librsvg could not draw it
    /// (the command ends with problems, 1).
    nonisolated(unsafe) public private(set) static var unsafeSVGSeen = false
    private var saidOverBudget = false

    /// URIs drawn as their placeholders whatever they hold: images not loaded at the moment drawn (`hubhost
    /// events` with loads pending or failed).
    public let unshown: Set<String>
    /// The bytes a plugin's image-loader service supplied for a remote URI (`http:`, `https:`…), which hubhost
    /// never fetches itself: nil draws the placeholder.
    public let supplied: (String) -> [UInt8]?
    /// The drawing goes to librsvg (a PNG): an SVG image is drawn alone in a child process first (once per URI:
    /// `resolve` keeps what `load` said), and drawn as its placeholder when librsvg crashes or hangs on it (a font
    /// size of 1e9 aborted the whole render), as is an image too large for librsvg to read inline.
    public let forPNG: Bool
    /// Whether this resolver drew an image as its placeholder because librsvg could not draw it.
    public private(set) var placedUndrawableSVG = false

    public init(
        access: ImageAccess = ImageAccess(viewFile: nil), unshown: Set<String> = [],
        supplied: @escaping (String) -> [UInt8]? = { _ in nil }, forPNG: Bool = false
    ) {
        self.access = access
        self.unshown = unshown
        self.supplied = supplied
        self.forPNG = forPNG
    }

    /// A URI to put in `href`, or nil to draw the placeholder.
    public func resolve(_ uri: String) -> String? {
        if !unshown.isEmpty, unshown.contains(uri) { return nil }
        if let cached = cache[uri] { return cached }
        let resolved = load(uri)
        cache[uri] = resolved
        return resolved
    }

    /// Only image bytes are written into an output, as a `data:` URI of the type their signature says: a file that
    /// is not an image, or a `data:` URI that is not one (`data:text/html`…), is drawn as its placeholder, as
    /// the warnings say, and none of its bytes leave the machine in the output.
    private func load(_ uri: String) -> String? {
        let bytes: [UInt8]
        switch access.check(uri) {
        case .success(.data):
            guard case .success(let image) = ImageSource.decodeDataURI(uri) else { return nil }
            bytes = image.bytes
        case .success(.file):
            guard case .success(let read) = access.readFile(uri) else { return nil }
            bytes = read
        case .success(.remote):
            guard let loaded = supplied(uri),
                access.pixelProblem(ImageBytes(bytes: loaded), uri: uri) == nil
            else { return nil }
            bytes = loaded
        case .failure: return nil
        }
        guard !bytes.isEmpty, let type = ImageAccess.mediaType(head: Array(bytes.prefix(512))) else { return nil }
        let size = ImageBytes(bytes: bytes).pixelSize
        if forPNG, let why = Self.whyLibrsvgCannotDraw(bytes, type: type) {
            StandardError.writeLine(
                "hubhost: image \(TerminalText.quoted(uri))\(why); its placeholder is drawn in the PNG")
            Self.unsafeSVGSeen = true
            placedUndrawableSVG = true
            return nil
        }
        let pixels = max(0, size.width) * max(0, size.height)
        guard inlinedPixels + pixels <= Double(Self.maxTotalPixels) else {
            Self.overBudgetSeen = true
            if !saidOverBudget {
                saidOverBudget = true
                StandardError.writeLine(
                    "hubhost: the images of this drawing decode to more than \(Self.maxTotalPixels / 1_000_000) "
                        + "megapixels together; \(TerminalText.quoted(uri)) and any that would pass that total are drawn "
                        + "as their placeholders")
            }
            return nil
        }
        inlinedPixels += pixels
        return "data:\(type);base64,\(Data(bytes).base64EncodedString())"
    }

    /// Why librsvg would fail the whole PNG on an image of `type` (" is …" or ": …", to follow the image's name), or
    /// nil.
    private static func whyLibrsvgCannotDraw(_ bytes: [UInt8], type: String) -> String? {
        // librsvg reads the drawing with libxml2, which refuses an attribute over 10,000,000 bytes: one image that
        // large inlined made the whole PNG fail (exit 2, naming nothing).
        if (bytes.count + 2) / 3 * 4 + type.count + 13 > 10_000_000 {
            return " is \(bytes.count) bytes: too large for librsvg to read inside a drawing (about 7.4 MB at most)"
        }
        guard type == "image/svg+xml" else { return nil }
        return PNGImage.trySVGImageApart(bytes).map { ": " + $0 }
    }
}
