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

    public init(access: ImageAccess = ImageAccess(viewFile: nil)) { self.access = access }

    /// A URI to put in `href`, or nil to draw the placeholder.
    public func resolve(_ uri: String) -> String? {
        if let cached = cache[uri] { return cached }
        let resolved = load(uri)
        cache[uri] = resolved
        return resolved
    }

    private func load(_ uri: String) -> String? {
        switch access.check(uri) {
        case .success(.data): return uri
        case .success(.file(let path)):
            guard case .success(let bytes) = access.readFile(uri), !bytes.isEmpty else { return nil }
            let type = Self.mimeType(for: PathText.fileExtension(path))
            return "data:\(type);base64,\(Data(bytes).base64EncodedString())"
        case .success(.remote), .failure: return nil
        }
    }

    static func mimeType(for pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "svg": return "image/svg+xml"
        case "webp": return "image/webp"
        default: return "application/octet-stream"
        }
    }
}
