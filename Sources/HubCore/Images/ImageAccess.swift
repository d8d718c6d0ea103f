import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Which image URIs a view may use, and the only code that reads a local image file.
///
/// View models come from servers, so an image URI must never make hubhost read the user's disk beyond what the
/// user allowed. Allowed: `data:` URIs; other schemes (`http(s):`…), which hubhost itself never fetches (a
/// plugin's image-loader service may); and local paths (relative, absolute or `file:`) that resolve, after
/// symlinks and `..`, inside the view file's folder or a folder the user gave with `--assets`. A local image must
/// be a regular file (never a device, FIFO or socket: opening one must not block) of at most `maxBytes`, and
/// nothing under `/proc`, `/sys` or `/dev` is ever read.
public struct ImageAccess: Sendable {
    public static let defaultMaxBytes = 10_000_000
    /// The most pixels an image may declare in its header. Decoding one takes width × height × 4 bytes, so a
    /// file of a few hundred kilobytes can ask for gigabytes (a decompression bomb): such an image is refused
    /// before anything decodes it. 50 megapixels is more than an 8K photo.
    public static let maxPixels = 50_000_000

    /// The allowed folders, as real paths (symlinks resolved).
    public let folders: [String]
    public let maxBytes: Int

    /// Allows the folder of `viewFile` (when given) and `assetFolders`.
    public init(viewFile: URL?, assetFolders: [URL] = [], maxBytes: Int = ImageAccess.defaultMaxBytes) {
        let candidates = (viewFile.map { [$0.deletingLastPathComponent()] } ?? []) + assetFolders
        folders = candidates.compactMap { Self.realPath($0.path) }
        self.maxBytes = maxBytes
        baseFolder = viewFile?.deletingLastPathComponent().path
    }

    /// Where relative paths start: the view's folder (else the working directory).
    private let baseFolder: String?

    /// What a URI names, once it is allowed.
    public enum Target: Equatable, Sendable {
        case data
        /// A scheme hubhost does not read itself (`https`, …), lower-cased.
        case remote(scheme: String)
        /// A regular file inside an allowed folder, by real path.
        case file(path: String)
    }

    /// Checks `uri` without reading it; the error says why it is refused.
    public func check(_ uri: String) -> Result<Target, ImageLoadError> {
        switch ImageSource.scheme(of: uri) {
        case "data"?:
            // A malformed data: URI is allowed here; its load fails and the placeholder is drawn.
            if case .success(let image) = ImageSource.decodeDataURI(uri), let problem = dataProblem(image, uri: uri) {
                return .failure(problem)
            }
            return .success(.data)
        case "file"?:
            let path: String
            if uri.hasPrefix("file://") {
                guard let parsed = URL(string: uri),
                    parsed.host == nil || parsed.host == "" || parsed.host == "localhost"
                else { return .failure(refusal(uri, "names a file on another host")) }
                path = parsed.path
            } else {
                path = PercentDecoding.decode(uri.dropFirst(5)) ?? String(uri.dropFirst(5))
            }
            return checkFile(path, uri: uri)
        case let scheme?: return .success(.remote(scheme: scheme))
        // A relative reference is a URI too: "assets/my%20cover.png" names "assets/my cover.png" (a raw space or
        // é is no URI, so an escape is the only way to name such a file).
        case nil: return checkFile(PercentDecoding.decode(uri) ?? uri, uri: uri)
        }
    }

    /// Reads the local file `uri` names, after every check. Only for `.file` targets, and only an image: a file of
    /// any other kind (a key, a config file beside the view) is never handed on, so no output can embed it.
    public func readFile(_ uri: String) -> Result<[UInt8], ImageLoadError> {
        switch check(uri) {
        case .failure(let error): return .failure(error)
        case .success(.file(let path)):
            return read(path, uri: uri).flatMap { bytes in
                guard Self.isDrawable(head: Array(bytes.prefix(512))) else {
                    return .failure(refusal(uri, Self.notAnImage))
                }
                return pixelProblem(ImageBytes(bytes: bytes), uri: uri).map { .failure($0) } ?? .success(bytes)
            }
        case .success: return .failure(refusal(uri, "is not a local file"))
        }
    }

    /// One problem, with its JSON path, for every image URI of `view` this policy refuses: a file it may not read,
    /// and an image refused for what drawing it would cost (too many pixels, a costly SVG), whether it comes as a
    /// `data:` URI or as a file.
    public func problems(in view: ViewModel, file: String?) -> [DecodeIssue] {
        issues(in: view, file: file) { uri in
            switch check(uri) {
            case .failure(let error): return error.reason
            case .success(.file(let path)):
                guard Glibc.access(path, F_OK) == 0, let verdict = fileVerdict(uri, path: path), verdict.costly else {
                    return nil
                }
                return verdict.reason
            default: return nil
            }
        }
    }

    /// What reading the local file `uri` names finds, as drawing reads it: nil when it draws; otherwise why not,
    /// and whether it was refused for its cost (a problem, as for a `data:` URI) rather than being unusable
    /// (unreadable, not an image: a warning, and its placeholder is drawn).
    private func fileVerdict(_ uri: String, path: String) -> (reason: String, costly: Bool)? {
        switch read(path, uri: uri) {
        case .failure(let error): return (error.reason, false)
        case .success(let bytes):
            guard Self.isDrawable(head: Array(bytes.prefix(512))) else {
                return (refusal(uri, Self.notAnImage).reason, false)
            }
            return pixelProblem(ImageBytes(bytes: bytes), uri: uri).map { ($0.reason, true) }
        }
    }

    /// One warning, with its JSON path, for every image of `view` this policy allows that will be drawn as its
    /// placeholder, as for a failed load: a local file that does not exist (a typo, an asset not added yet), a
    /// `data:` URI that is malformed, and bytes that are no image hubhost draws.
    public func placeholderWarnings(in view: ViewModel, file: String?) -> [DecodeIssue] {
        issues(in: view, file: file) { uri in
            switch check(uri) {
            case .success(.file(let path)):
                guard Glibc.access(path, F_OK) == 0 else {
                    return refusal(uri, "does not exist (its placeholder is drawn)").reason
                }
                // Read as drawing reads it, so every reason it would not draw it for (not an image, unreadable) is
                // said; what it costs too much to draw is a problem (`problems`).
                guard let verdict = fileVerdict(uri, path: path), !verdict.costly else { return nil }
                return verdict.reason + " (its placeholder is drawn)"
            case .success(.data):
                switch ImageSource.decodeDataURI(uri) {
                case .failure(let error):
                    return refusal(uri, "is not a valid data: URI: \(error.reason) (its placeholder is drawn)").reason
                case .success(let image):
                    return Self.isDrawable(head: Array(image.bytes.prefix(512)))
                        ? nil : refusal(uri, "\(Self.notAnImage) (its placeholder is drawn)").reason
                }
            default: return nil
            }
        }
    }

    /// The media type of image bytes, by their signature (not by a file's name, which a view chooses).
    public static func mediaType(head: [UInt8]) -> String? {
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF8".utf8)) { return "image/gif" }
        if starts(Array("BM".utf8)) { return "image/bmp" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        // SVG is text: an element named svg near the start (after an XML declaration or a comment).
        return String(decoding: head, as: UTF8.self).contains("<svg") ? "image/svg+xml" : nil
    }

    private static let notAnImage = "holds no image hubhost draws (PNG, JPEG, GIF, WebP, BMP or SVG)"

    /// Whether the first bytes of an image are of a format hubhost draws.
    /// By signature: a JPEG's size may come after 64 KB of metadata, well past the head.
    static func isDrawable(head: [UInt8]) -> Bool { mediaType(head: head) != nil }

    /// An issue at each image URI of `view` for which `verdict` says something (asked once per URI: a data: URI
    /// is decoded to read its header, and a view repeats its images).
    /// One issue per URI, at its first place, saying how many more name it (a large view naming one missing image
    /// in every row printed thousands of lines).
    private func issues(in view: ViewModel, file: String?, _ verdict: (String) -> String?) -> [DecodeIssue] {
        var issues: [DecodeIssue] = []
        var firstIssue: [String: Int] = [:]
        var repeats: [String: Int] = [:]
        var verdicts: [String: String?] = [:]
        func refusal(of uri: String) -> String? {
            if let known = verdicts[uri] { return known }
            let found = verdict(uri)
            verdicts[uri] = found
            return found
        }
        // The path is only spelled out for a model with images or children (nearly none of 100k have any).
        func visit(_ model: ComponentModel, path: @autoclosure () -> String) {
            guard model.hasExtras || !model.children.isEmpty else { return }
            let path = path()
            var images: [(String, ImageData)] = []
            if let main = model.mainImage { images.append(("main", main)) }
            if let background = model.backgroundImage { images.append(("background", background)) }
            for (key, data) in model.customImages.sorted(by: { $0.key < $1.key }) {
                images.append(("custom.\(TerminalText.jsonKey(key))", data))
            }
            for (name, data) in images {
                guard let uri = data.uri, let message = refusal(of: uri) else { continue }
                if firstIssue[uri] != nil {
                    repeats[uri, default: 0] += 1
                    continue
                }
                firstIssue[uri] = issues.count
                issues.append(DecodeIssue(file: file, path: "\(path).images.\(name).uri", message: message))
            }
            for (index, child) in model.children.enumerated() { visit(child, path: "\(path).children[\(index)]") }
        }
        if let header = view.header { visit(header, path: "$.header") }
        for (index, model) in view.body.enumerated() { visit(model, path: "$.body[\(index)]") }
        for (index, model) in view.overlays.enumerated() { visit(model, path: "$.overlays[\(index)]") }
        for (uri, count) in repeats {
            issues[firstIssue[uri]!].message += " (and \(count) more place(s) naming it)"
        }
        return issues
    }

    private func checkFile(_ path: String, uri: String) -> Result<Target, ImageLoadError> {
        guard !path.isEmpty, !path.utf8.contains(0) else { return .failure(refusal(uri, "is not a usable path")) }
        let joined =
            path.hasPrefix("/")
            ? path
            : (baseFolder ?? FileManager.default.currentDirectoryPath) + "/" + path
        // No file has a longer path (the kernel refuses one), and resolving a missing one ancestor by ancestor
        // would take time in proportion to its square: a 200 KB path of "x/x/…" took 5 s.
        guard joined.utf8.count < PATH_MAX else {
            return .failure(refusal(uri, "is a path of \(joined.utf8.count) bytes, longer than any file's can be"))
        }
        guard let real = Self.realPath(joined) ?? Self.missingPath(joined) else {
            return .failure(
                ImageLoadError(
                    uri: uri,
                    reason: "image \(TerminalText.quoted(uri)) cannot be read: "
                        + String(cString: strerror(errno))))
        }
        for system in ["/proc", "/sys", "/dev"] where real == system || real.hasPrefix(system + "/") {
            return .failure(refusal(uri, "is a system file (\(system))"))
        }
        guard folders.contains(where: { real == $0 || real.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
            return .failure(refusal(uri, "is outside the allowed folders (the view's folder and --assets)"))
        }
        var status = stat()
        // A missing file inside the folders is allowed: it is drawn as its placeholder, as a failed load is.
        guard stat(real, &status) == 0 else { return .success(.file(path: real)) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return .failure(refusal(uri, "is not a regular file")) }
        guard status.st_size <= maxBytes else { return .failure(tooLarge(uri, Int(status.st_size))) }
        return .success(.file(path: real))
    }

    /// Why a `data:` URI's image is refused: over `maxBytes` decoded, as a file would be, or over the pixel limit.
    public func dataProblem(_ image: ImageBytes, uri: String) -> ImageLoadError? {
        image.bytes.count > maxBytes ? tooLarge(uri, image.bytes.count) : pixelProblem(image, uri: uri)
    }

    private func tooLarge(_ uri: String, _ size: Int) -> ImageLoadError {
        refusal(uri, "is \(size) bytes, over the limit of \(maxBytes) (--max-image-bytes)")
    }

    private func read(_ path: String, uri: String) -> Result<[UInt8], ImageLoadError> {
        // O_NONBLOCK: a FIFO that slipped past the checks must not block the open.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            return .failure(
                ImageLoadError(
                    uri: uri,
                    reason: "image \(TerminalText.quoted(uri)) cannot be read: "
                        + String(cString: strerror(errno))))
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            return .failure(refusal(uri, "is not a regular file"))
        }
        guard status.st_size <= maxBytes else { return .failure(tooLarge(uri, Int(status.st_size))) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return .success(Array(bytes[..<filled]))
    }

    /// Why `image` is refused for its pixel count (see `maxPixels`), or nil.
    public func pixelProblem(_ image: ImageBytes, uri: String) -> ImageLoadError? {
        if let why = Self.costlySVG(image.bytes) { return refusal(uri, why) }
        let size = image.pixelSize
        guard size.width * size.height > Double(Self.maxPixels) else { return nil }
        return refusal(
            uri,
            "is \(Int(size.width))×\(Int(size.height)) pixels, over the limit of \(Self.maxPixels) (decoding it "
                + "would take \(Int(size.width * size.height * 4 / 1_000_000)) MB)")
    }

    /// The most `<use>` references an SVG image may hold: each may draw a group of others, so a few kilobytes of
    /// nested references draw millions of shapes.
    /// (Counted, not followed: 61 references nested ten wide and six deep drew a million shapes, 7.5 s an image.)
    static let maxSVGReferences = 16

    /// Why an SVG image is not drawn, or nil. Its declared size says nothing of its cost: 644 bytes of blurred
    /// rectangles took 9.5 s and 536 MB to draw into a PNG, 2.3 KB of nested `<use>` 11.6 s, and nothing can stop
    /// the drawing once it started. Filter effects and many references are refused before anything draws it.
    static func costlySVG(_ bytes: [UInt8]) -> String? {
        guard mediaType(head: Array(bytes.prefix(512))) == "image/svg+xml" else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("<filter") || text.contains(":filter") {
            return "is an SVG image with filter effects, which can take minutes to draw; not drawn"
        }
        let references = text.components(separatedBy: "<use").count - 1
        if references > maxSVGReferences {
            return "is an SVG image with \(references) <use> references (more than \(maxSVGReferences)), which can "
                + "take minutes to draw; not drawn"
        }
        return nil
    }

    private func refusal(_ uri: String, _ why: String) -> ImageLoadError {
        ImageLoadError(uri: uri, reason: "image \(TerminalText.quoted(uri)) \(why)")
    }

    /// For a path that does not exist: its deepest existing ancestor resolved, then the rest as written (`..`
    /// folded), so a missing file is still placed inside or outside the allowed folders. nil on other errors.
    /// Every ancestor of a folder that exists exists too, so the deepest is found by doubling then halving: a few
    /// `realpath` calls for a path thousands of folders deep, where one per ancestor took 30 ms per URI.
    static func missingPath(_ path: String) -> String? {
        guard errno == ENOENT else { return nil }
        let normalized = PathText.normalized(path)
        let absolute = normalized.hasPrefix("/")
        let parts = normalized.split(separator: "/")
        func prefix(_ count: Int) -> String {
            let joined = parts[..<count].joined(separator: "/")
            return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
        }
        // prefix(low) resolves (the root, or the working directory, always does); prefix(high) does not. The first
        // missing folder is found from the top, doubling (a typo is near the top: short prefixes, few calls), then
        // by halving between the last two.
        var low = 0
        var high = parts.count
        guard var resolved = realPath(prefix(0)) else { return nil }
        var step = 1
        while low + step < high {
            guard let real = realPath(prefix(low + step)) else {
                high = low + step
                break
            }
            low += step
            resolved = real
            step *= 2
        }
        while high - low > 1 {
            let middle = (low + high) / 2
            if let real = realPath(prefix(middle)) {
                low = middle
                resolved = real
            } else {
                high = middle
            }
        }
        return PathText.normalized(PathText.appending(parts[low...].joined(separator: "/"), to: resolved))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
