import FoundationEssentials

/// The bytes of a loaded image and its pixel size when the host could read it (PNG, GIF, JPEG headers).
public struct ImageBytes: Equatable, Sendable {
    public var bytes: [UInt8]
    public var pixelSize: Size
    public init(bytes: [UInt8], pixelSize: Size? = nil) {
        self.bytes = bytes
        self.pixelSize = pixelSize ?? ImageHeader.pixelSize(of: bytes) ?? .zero
    }
}

public struct ImageLoadError: Error, Equatable, CustomStringConvertible {
    public var uri: String
    public var reason: String
    public init(uri: String, reason: String) {
        self.uri = uri
        self.reason = reason
    }
    public var description: String { "\(TerminalText.escaped(uri)): \(reason)" }
}

/// Where image bytes come from: local files the `access` policy allows (inside the view's folder or `--assets`),
/// `data:` URIs, and loaders for other schemes (a plugin's image-loader service). Anything else fails with "no
/// loader for scheme X". Synchronous; `ComponentImageLoader` decides when results are delivered.
public final class ImageSource {
    public typealias Loader = (String) -> Result<ImageBytes, ImageLoadError>
    /// Which local files may be read.
    public var access: ImageAccess
    /// Loaders by lower-case scheme ("https").
    public var schemeLoaders: [String: Loader] = [:]
    /// Asked for any scheme without its own loader (a plugin's image-loader service); nil when there is none.
    public var otherSchemes: Loader?
    /// How many loads ran, by URI (tests check loads are shared).
    public private(set) var loadCount: [String: Int] = [:]

    public init(access: ImageAccess = ImageAccess(viewFile: nil)) { self.access = access }

    /// The scheme of `uri` (RFC 3986: a letter, then letters, digits, "+", "-", "."; then ":"), lower-cased;
    /// nil for a plain path.
    public static func scheme(of uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// Why an image of `scheme` cannot load: hubhost reads files and `data:` URIs itself and fetches nothing (a
    /// script's `{"event": "image", "ok": true}` says when a load ends, not that the bytes exist).
    public static func noLoaderReason(_ scheme: String) -> String {
        "no loader for scheme '\(TerminalText.escaped(scheme))' (hubhost fetches nothing itself: a plugin's "
            + "image-loader service can supply it)"
    }

    public func load(_ uri: String) -> Result<ImageBytes, ImageLoadError> {
        loadCount[uri, default: 0] += 1
        switch Self.scheme(of: uri) {
        case nil, "file"?: return access.readFile(uri).map { ImageBytes(bytes: $0) }
        case "data":
            return Self.decodeDataURI(uri).flatMap { image in
                access.dataProblem(image, uri: uri).map { .failure($0) } ?? .success(image)
            }
        case let scheme?:
            if let loader = schemeLoaders[scheme] ?? otherSchemes { return loader(uri) }
            return .failure(ImageLoadError(uri: uri, reason: Self.noLoaderReason(scheme)))
        }
    }

    /// `data:[<type>][;base64],<data>`.
    public static func decodeDataURI(_ uri: String) -> Result<ImageBytes, ImageLoadError> {
        guard let comma = uri.firstIndex(of: ",") else {
            return .failure(ImageLoadError(uri: String(uri.prefix(40)), reason: "malformed data: URI (no comma)"))
        }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
        let payload = String(uri[uri.index(after: comma)...])
        if header.hasSuffix(";base64") {
            guard let data = Data(base64Encoded: payload, options: .ignoreUnknownCharacters) else {
                return .failure(ImageLoadError(uri: String(uri.prefix(40)), reason: "malformed base64 in data: URI"))
            }
            return .success(ImageBytes(bytes: Array(data)))
        }
        guard let text = PercentDecoding.decode(payload) else {
            return .failure(
                ImageLoadError(uri: String(uri.prefix(40)), reason: "malformed percent-encoding in data: URI"))
        }
        return .success(ImageBytes(bytes: Array(text.utf8)))
    }
}

/// Pixel sizes from image headers, so components learn the size without decoding.
public enum ImageHeader {
    public static func pixelSize(of b: [UInt8]) -> Size? {
        func be32(_ i: Int) -> Double {
            Double(UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3]))
        }
        func be16(_ i: Int) -> Double { Double(UInt16(b[i]) << 8 | UInt16(b[i + 1])) }
        func le16(_ i: Int) -> Double { Double(UInt16(b[i + 1]) << 8 | UInt16(b[i])) }
        // PNG: signature, then the IHDR chunk with width and height.
        if b.count >= 24, b[0] == 0x89, b[1] == 0x50, b[2] == 0x4E, b[3] == 0x47 {
            return Size(width: be32(16), height: be32(20))
        }
        // GIF87a / GIF89a: logical screen size.
        if b.count >= 10, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46 { return Size(width: le16(6), height: le16(8)) }
        // WebP: a RIFF container with a VP8 (lossy), VP8L (lossless) or VP8X (extended) first chunk.
        if b.count >= 30, b[0] == 0x52, b[1] == 0x49, b[2] == 0x46, b[3] == 0x46, b[8] == 0x57, b[9] == 0x45,
            b[10] == 0x42, b[11] == 0x50, b[12] == 0x56, b[13] == 0x50, b[14] == 0x38
        {
            func le24(_ i: Int) -> Double { Double(UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16) }
            switch b[15] {
            case 0x58: return Size(width: le24(24) + 1, height: le24(27) + 1)  // "VP8X": canvas size minus one
            case 0x4C:  // "VP8L": 14 bits each, minus one, after the signature byte
                let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
                return Size(width: Double(bits & 0x3FFF) + 1, height: Double(bits >> 14 & 0x3FFF) + 1)
            case 0x20: return Size(width: Double(Int(le16(26)) & 0x3FFF), height: Double(Int(le16(28)) & 0x3FFF))
            default: return nil
            }
        }
        // BMP: the info header's width and height (a negative height is a top-down image).
        if b.count >= 26, b[0] == 0x42, b[1] == 0x4D {
            func le32(_ i: Int) -> Int32 {
                Int32(
                    bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24)
            }
            return Size(width: Double(le32(18).magnitude), height: Double(le32(22).magnitude))
        }
        // JPEG: walk the segments to a start-of-frame marker.
        if b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 {
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { return nil }
                let marker = b[i + 1]
                if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                    return Size(width: be16(i + 7), height: be16(i + 5))
                }
                i += 2 + Int(be16(i + 2))
            }
        }
        return nil
    }
}
