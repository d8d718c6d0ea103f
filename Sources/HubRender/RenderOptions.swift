import Foundation
import HubCore

/// Naming a component's source in outputs: the plugin id for a factory owner, "fallback" otherwise.
public struct SourceNaming {
    /// The plugin id for an owner. The default reads the id from hubhost's owner ids ("com.x.rows@1.2.0#3").
    public var pluginID: (Owner) -> String

    public init(pluginID: @escaping (Owner) -> String = SourceNaming.idBeforeVersion) { self.pluginID = pluginID }

    public static func idBeforeVersion(_ owner: Owner) -> String {
        if let at = owner.id.firstIndex(of: "@") { return String(owner.id[..<at]) }
        return owner.id
    }
}

/// Turns image URIs into something a standalone SVG or HTML page can show: `data:` URIs as they are, files
/// (`file:` URIs, absolute or relative paths, resolved against the view's folder) read and inlined as `data:` URIs.
/// Remote URIs are not fetched (output stays deterministic and offline); their placeholder colour is drawn.
public final class ImageResolver {
    public let baseDirectory: URL?
    private var cache: [String: String?] = [:]

    public init(baseDirectory: URL?) { self.baseDirectory = baseDirectory }

    /// A URI to put in `href`, or nil to draw the placeholder.
    public func resolve(_ uri: String) -> String? {
        if let cached = cache[uri] { return cached }
        let resolved = load(uri)
        cache[uri] = resolved
        return resolved
    }

    private func load(_ uri: String) -> String? {
        if uri.hasPrefix("data:") { return uri }
        let path: String
        if uri.hasPrefix("file://") {
            path = URL(string: uri)?.path ?? String(uri.dropFirst(7))
        } else if uri.hasPrefix("file:") {
            path = String(uri.dropFirst(5))
        } else if uri.contains("://") {
            return nil
        } else {
            path = uri
        }
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path)
            : (baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).appendingPathComponent(path)
        guard let data = try? Data(contentsOf: url), !data.isEmpty else { return nil }
        return "data:\(Self.mimeType(for: url.pathExtension));base64,\(data.base64EncodedString())"
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
