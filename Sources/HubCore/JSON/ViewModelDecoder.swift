import FoundationEssentials

/// Decodes Hub view models from JSON (hub-framework.md §1): a root object is a view (`id`, `title`, `header`,
/// `body`, `overlays`, `custom`), a root array is its body. Where Hub silently drops a value of the wrong type,
/// the decoder reports it with the file and the JSON path, leaves the value out and goes on, so one run shows
/// every problem (up to `maxIssues`; the rest are counted).
///
/// Same-id entries merge (Hub's get-or-create builders). Entries without an id get `UnknownComponent:<n>`, where
/// n counts such entries in document order (Hub uses a random UUID; a counter keeps output deterministic).
/// `null` counts as absent and is not reported.
public struct ViewModelDecoder {
    /// The most bytes a view file may have (about three million components): a view is read whole, and decoding
    /// takes some thirteen times its size in memory, so a stream such as `/dev/zero` or a server's endless reply
    /// grew without bound (5.7 GB in four seconds).
    public static let maxViewBytes = 256 << 20

    /// Named in every issue.
    public var file: String?
    public var maxIssues: Int
    /// Hub's HUBComponentDefaults (from the fallback handler): the namespace a bare `component.id` name takes, and
    /// the name and category of a model that names none.
    public var defaultNamespace = ComponentDefaults.namespace
    public var defaultName = ComponentDefaults.name
    public var defaultCategory = ComponentDefaults.category

    public init(file: String? = nil, maxIssues: Int = 100) {
        self.file = file
        self.maxIssues = maxIssues
    }

    /// - Throws: `DecodeFailure` when the data is not JSON or its root is neither an object nor an array.
    public func decode(_ data: Data) throws -> DecodeResult { try decode(bytes: [UInt8](data)) }

    public func decode(_ text: String) throws -> DecodeResult { try decode(bytes: Array(text.utf8)) }

    /// - Throws: `FileReadError` (the system's reason) when the file cannot be read.
    public func decode(contentsOf url: URL) throws -> DecodeResult {
        var decoder = self
        if decoder.file == nil { decoder.file = url.lastPathComponent }
        return try decoder.decode(bytes: readWholeFile(url.path, limit: Self.maxViewBytes))
    }

    public func decode(bytes: [UInt8]) throws -> DecodeResult {
        let context = DecodeContext(
            document: bytes, file: file, maxIssues: maxIssues,
            defaults: (defaultNamespace, defaultName, defaultCategory))
        var scanner = JSONScanner(bytes, keySymbols: SchemaKey.symbols)
        do {
            // JSON is UTF-8 (RFC 8259); a file that is not is refused where its first bad byte is, rather than
            // decoded with replacement characters that would reach plugins as if the server had sent them.
            if let bad = UTF8Check.firstInvalidByte(bytes) { throw scanner.error("invalid UTF-8", at: bad) }
            let viewModel = try context.decodeRoot(&scanner)
            if !scanner.isAtEnd { throw scanner.error("unexpected data after the JSON value") }
            return DecodeResult(
                viewModel: viewModel, issues: context.issues, suppressedIssueCount: context.suppressed,
                notes: context.notes, suppressedNoteCount: context.suppressedNotes)
        } catch let error as JSONSyntaxError {
            throw DecodeFailure(issue: DecodeIssue(file: file, path: "", message: "not valid JSON: \(error)"))
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}

/// Every key the schema readers below know. The scanner numbers them, so a reader switches on a small enum,
/// not on strings (a view has several keys per component).
private enum SchemaKey: CaseIterable {
    /// A key the schema does not know.
    case unknown
    case id, title, header, body, overlays, custom
    case component, category, text, subtitle, accessory, description, group, images, target, metadata, logging,
        children
    case main, background, icon, uri, placeholder, local, actions, view

    /// The scanner's key symbols, each a case's name: symbol n is case n + 1, and `JSONScanner.otherKey` (-1) is
    /// `unknown`.
    static let symbols = allCases.dropFirst().map { String(describing: $0) }
    static let bySymbol = Array(allCases)
}

/// The walk over one document: the path, the issues, the id counter.
private final class DecodeContext {
    typealias Defaults = (namespace: String, name: String, category: String)
    /// The bytes being decoded, where the path's keys are read again when an issue names them.
    let document: [UInt8]
    let file: String?
    let maxIssues: Int
    let defaults: Defaults
    let path = JSONPath()
    var issues: [DecodeIssue] = []
    var suppressed = 0
    var suppressedNotes = 0
    var notes: [DecodeIssue] = []
    var unknownCount = 0

    init(document: [UInt8], file: String?, maxIssues: Int, defaults: Defaults) {
        self.document = document
        self.file = file
        self.maxIssues = maxIssues
        self.defaults = defaults
    }

    func report(_ message: String) {
        if issues.count < maxIssues {
            issues.append(DecodeIssue(file: file, path: path.text(in: document), message: message))
        } else {
            suppressed += 1
        }
    }

    func at<T>(_ index: Int, _ body: () throws -> T) rethrows -> T {
        path.push(.index(index))
        defer { path.pop() }
        return try body()
    }

    /// A number beyond a double's range (1e999) reads as infinity, which JSON cannot carry: plugins get null. Said,
    /// with where it is, as a clamped field is; nothing is allocated unless one is found.
    /// Out of line: only text that held `\u0000` or a lone surrogate comes here.
    @inline(never)
    private func reportReplacedCharacters(_ s: inout JSONScanner) {
        s.readReplacedCharacter = false
        report(
            "holds \\u0000 or a lone surrogate (\\ud800-\\udfff), which is no character a plugin can be given "
                + "(U+0000 would end its text): read as U+FFFD")
    }

    private func reportNumbersOutOfRange(in value: JSONValue, at subpath: @autoclosure () -> String) {
        switch value {
        case .number(let n) where !n.isFinite:
            let inside = subpath()
            report(
                (inside.isEmpty ? "" : "\(inside.dropFirst()) is ")
                    + "a number out of range (beyond ±1.8e308): read as null")
        case .object(let object):
            for (key, item) in object {
                reportNumbersOutOfRange(in: item, at: subpath() + "." + TerminalText.jsonKey(key))
            }
        case .array(let items):
            for (index, item) in items.enumerated() { reportNumbersOutOfRange(in: item, at: subpath() + "[\(index)]") }
        default: break
        }
    }

    // MARK: Typed reads: a wrong type is reported, consumed and gives nil.

    private func mismatch(_ s: inout JSONScanner, expected: String) throws {
        let value = try s.readValue()
        if value != .null { report("expected \(expected), found \(value.typeDescription)") }
    }

    func string(_ s: inout JSONScanner) throws -> String? {
        s.readReplacedCharacter = false  // a value skipped before (an unknown key's) is not this one
        if let text = try s.readStringIfString() {
            if s.readReplacedCharacter { reportReplacedCharacters(&s) }
            return text
        }
        try mismatch(&s, expected: "a string")
        return nil
    }

    func object(_ s: inout JSONScanner) throws -> JSONObject? {
        s.readReplacedCharacter = false
        if try s.peekKind() == .object, case .object(let o) = try s.readValue() {
            // Walked only when the scanner met such a number: most custom data holds none.
            if s.readNumberOutOfRange {
                s.readNumberOutOfRange = false
                reportNumbersOutOfRange(in: .object(o), at: "")
            }
            if s.readReplacedCharacter { reportReplacedCharacters(&s) }
            return o
        }
        try mismatch(&s, expected: "an object")
        return nil
    }

    /// Reads a schema object key by key when the value is one; reports and skips it otherwise. Returns whether
    /// it was. Inlined with its body, so a schema object's keys are read by one loop in its reader, not a closure
    /// call per key.
    @discardableResult
    @inline(__always)
    func forEachKey(_ s: inout JSONScanner, _ body: (inout JSONScanner, SchemaKey) throws -> Void) throws -> Bool {
        guard try s.enterObjectIfObject() else {
            try mismatch(&s, expected: "an object")
            return false
        }
        var isFirst = true
        while let symbol = try s.nextKeySymbol(isFirst: &isFirst) {
            path.push(.key(at: s.lastKeyOffset))
            try body(&s, SchemaKey.bySymbol[symbol - JSONScanner.otherKey])
            path.pop()
        }
        return true
    }

    /// `forEachKey` for an object whose keys are names (custom images), not schema keys: each key is read again
    /// from the document (a rare object, so the schema readers' loop need not make strings).
    @discardableResult
    func forEachNamedKey(_ s: inout JSONScanner, _ body: (inout JSONScanner, String) throws -> Void) throws -> Bool {
        try forEachKey(&s) { s, _ in
            var keyReader = JSONScanner(document, position: s.lastKeyOffset)
            try body(&s, try keyReader.readString())
        }
    }

    func forEachElement(_ s: inout JSONScanner, _ body: (inout JSONScanner, Int) throws -> Void) throws {
        if try s.readArrayIfArray({ s, index in try at(index) { try body(&s, index) } }) { return }
        try mismatch(&s, expected: "an array")
    }

    /// A string that must parse as a URL (Hub ignores one that does not).
    func uri(_ s: inout JSONScanner) throws -> String? {
        guard let text = try string(&s) else { return nil }
        guard Self.isValidURI(text) else {
            // Hub reads URIs with NSURL, which refuses these; say how to write them so it does not.
            let hint =
                text.utf8.contains { $0 == 0x20 || $0 >= 0x80 }
                ? " (spaces and characters outside ASCII are written percent-encoded: %20, %C3%A9)"
                : PercentDecoding.decode(text) == nil ? " (a % that starts no escape is written %25)" : ""
            report("\(TerminalText.quoted(text)) is not a valid URI\(hint)")
            return nil
        }
        return text
    }

    /// What NSURL's URLWithString accepts, roughly: printable ASCII without spaces and the characters RFC 3986
    /// excludes, with well-formed percent escapes. (Foundation on Linux accepts spaces, so it cannot decide.)
    static func isValidURI(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty else { return false }
        var i = 0
        while i < utf8.count {
            let b = utf8[i]
            guard b > 0x20, b < 0x7F else { return false }
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: "^"),
                UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
                return false
            case UInt8(ascii: "%"):
                guard i + 2 < utf8.count, utf8[i + 1].isHexDigit, utf8[i + 2].isHexDigit else { return false }
                i += 2
            default: break
            }
            i += 1
        }
        return true
    }

    // MARK: The schema

    func decodeRoot(_ s: inout JSONScanner) throws -> ViewModel {
        switch try s.peekKind() {
        case .object: return try decodeView(&s)
        case .array:
            let body = RootModelListBuilder(type: .body, defaults: defaults)
            // A root array is the body; its paths read `$[i]`, as in the file.
            try decodeRootList(&s, into: body)
            return ViewModel(body: body.finish())
        default:
            let value = try s.readValue()
            throw DecodeFailure(
                issue: DecodeIssue(
                    file: file, path: "$",
                    message: "expected an object (a view) or an array (its body), found \(value.typeDescription)"))
        }
    }

    func decodeView(_ s: inout JSONScanner) throws -> ViewModel {
        var id: String?
        var title: String?
        var custom: JSONObject?
        var header: ComponentModelBuilder?
        let body = RootModelListBuilder(type: .body, defaults: defaults)
        let overlays = RootModelListBuilder(type: .overlay, defaults: defaults)
        try forEachKey(&s) { s, key in
            switch key {
            case .id: if let v = try string(&s) { id = v }
            case .title: if let v = try string(&s) { title = v }
            case .header:
                // The header builder is "header" unless the JSON names it.
                if let decoded = try decodeComponent(&s, defaultID: "header") {
                    if let existing = header { existing.merge(decoded) } else { header = decoded }
                }
            case .body: try decodeRootList(&s, into: body)
            case .overlays: try decodeRootList(&s, into: overlays)
            case .custom: mergeObject(&custom, try object(&s))
            default: _ = try s.readValue()  // unknown keys are allowed, as in Hub
            }
        }
        return ViewModel(
            identifier: id, title: title,
            header: header?.build(type: .header, index: 0, defaults: defaults),
            body: body.finish(), overlays: overlays.finish(), custom: custom)
    }

    /// The builder every body and overlay entry is read into: a root list builds each entry's model at once and
    /// keeps no builder, so one is emptied and reused rather than one made and freed per model.
    private let rootEntry = ComponentModelBuilder(id: "")

    func decodeRootList(_ s: inout JSONScanner, into list: RootModelListBuilder) throws {
        try forEachElement(&s) { s, _ in
            // `add` leaves the builder empty.
            if let builder = try decodeComponent(&s, defaultID: nil, into: rootEntry) {
                if let ids = list.add(builder) {
                    guard notes.count < maxIssues else {
                        suppressedNotes += 1
                        return
                    }
                    notes.append(
                        DecodeIssue(
                            file: file, path: path.text(in: document), message: Self.mergedIDs(ids)))
                }
            } else {
                rootEntry.reset()
            }
        }
    }

    /// Two entries with one id. Ids are compared as Swift compares text, by canonical equivalence, so two spellings
    /// of one text (NFC "é", NFD "e" + U+0301) are one id: then both are shown, code point by code point.
    static func mergedIDs(_ ids: (earlier: String, incoming: String)) -> String {
        let spelling = { (id: String) in
            id.unicodeScalars.prefix(12).map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(
                separator: " ")
        }
        let other =
            ids.earlier.unicodeScalars.elementsEqual(ids.incoming.unicodeScalars)
            ? ""
            : " (\(spelling(ids.earlier)) there, \(spelling(ids.incoming)) here: the same text in another Unicode "
                + "normalization)"
        return
            "id \(TerminalText.quoted(ids.incoming)) is also an earlier entry's\(other): the two are merged into one "
            + "model, as Hub's builders do"
    }

    func decodeList(_ s: inout JSONScanner, add: (ComponentModelBuilder) -> Void) throws {
        try forEachElement(&s) { s, _ in
            if let builder = try decodeComponent(&s, defaultID: nil) { add(builder) }
        }
    }

    /// One component entry, read into `builder` (an empty one) or a new builder; nil (reported) when it is not
    /// an object.
    func decodeComponent(
        _ s: inout JSONScanner, defaultID: String?, into builder: ComponentModelBuilder? = nil
    ) throws -> ComponentModelBuilder? {
        let b = builder ?? ComponentModelBuilder(id: "")
        var id: String?
        let isObject = try forEachKey(&s) { s, key in
            switch key {
            case .id: if let v = try string(&s) { id = v }
            case .component: try decodeComponentField(&s, into: b)
            case .text:
                try forEachKey(&s) { s, key in
                    switch key {
                    case .title: if let v = try string(&s) { b.title = v }
                    case .subtitle: if let v = try string(&s) { b.subtitle = v }
                    case .accessory: if let v = try string(&s) { b.accessory = v }
                    case .description: if let v = try string(&s) { b.descriptionText = v }
                    default: _ = try s.readValue()
                    }
                }
            case .custom: mergeObject(&b.custom, try object(&s))
            case .group: if let v = try string(&s) { b.group = v }
            case .images:
                try forEachKey(&s) { s, key in
                    switch key {
                    case .main:
                        let image = b.mainImage ?? ImageDataBuilder()
                        if try decodeImage(&s, into: image) { b.mainImage = image }
                    case .background:
                        let image = b.backgroundImage ?? ImageDataBuilder()
                        if try decodeImage(&s, into: image) { b.backgroundImage = image }
                    case .custom:
                        try forEachNamedKey(&s) { s, key in
                            let image = ImageDataBuilder()
                            if try decodeImage(&s, into: image) { b.customImage(key).merge(image) }
                        }
                    case .icon: _ = try string(&s)  // needs an icon resolver, which a headless host has not
                    default: _ = try s.readValue()
                    }
                }
            case .target: try decodeTarget(&s, into: b)
            case .metadata: mergeObject(&b.metadata, try object(&s))
            case .logging: mergeObject(&b.logging, try object(&s))
            case .children:
                let children = b.children ?? ComponentModelListBuilder()
                b.children = children
                try decodeList(&s, add: children.add)
            default: _ = try s.readValue()
            }
        }
        guard isObject else { return nil }
        if let id {
            b.id = id
        } else if let defaultID {
            b.id = defaultID
        } else {
            b.id = "UnknownComponent:\(unknownCount)"
            unknownCount += 1
        }
        return b
    }

    /// A component's `component`: its id and category. This and `decodeTarget` are functions of their own because
    /// Swift 6.3's optimizer crashed (CopyPropagation) on their readers inlined into `decodeComponent`'s.
    func decodeComponentField(_ s: inout JSONScanner, into b: ComponentModelBuilder) throws {
        try forEachKey(&s) { s, key in
            switch key {
            case .id:
                // Lenient, as Hub: "ns:name[:…]" sets both, a bare name sets only the name.
                if let v = try string(&s) { splitComponentID(v, into: b) }
            case .category: if let v = try string(&s) { b.category = v }
            default: _ = try s.readValue()
            }
        }
    }

    /// A component's `target`, merged into the one `b` has.
    func decodeTarget(_ s: inout JSONScanner, into b: ComponentModelBuilder) throws {
        let target = b.target ?? TargetBuilder()
        let wasObject = try forEachKey(&s) { s, key in
            switch key {
            case .uri: if let v = try uri(&s) { target.uri = v }
            case .actions: try decodeActions(&s, into: target)
            case .view: if let v = try object(&s) { target.view = v }
            case .custom: mergeObject(&target.custom, try object(&s))
            default: _ = try s.readValue()
            }
        }
        if wasObject { b.target = target }
    }

    /// A target's `actions`: each a strict action identifier.
    func decodeActions(_ s: inout JSONScanner, into target: TargetBuilder) throws {
        try forEachElement(&s) { s, _ in
            guard let v = try string(&s) else { return }
            if let action = ComponentIdentifier(strict: v) {
                target.addAction(action)
            } else {
                report("\"\(v)\" is not an action identifier (\"namespace:name\")")
            }
        }
    }

    /// Component ids split lately: a view names a few components many times, and comparing an id with a recent
    /// one costs less than making two strings from it.
    private var recentSplits: [(id: String, namespace: String?, name: String)] = []
    private var nextSplit = 0
    private static let recentSplitLimit = 8

    /// Sets what "ns:name[:…]" names (a bare name sets only the name).
    func splitComponentID(_ id: String, into b: ComponentModelBuilder) {
        var i = 0
        while i < recentSplits.count {
            if recentSplits[i].id == id {
                if let namespace = recentSplits[i].namespace { b.namespace = namespace }
                b.name = recentSplits[i].name
                return
            }
            i += 1
        }
        let (namespace, name) = Self.split(id)
        if let namespace { b.namespace = namespace }
        b.name = name
        if recentSplits.count < Self.recentSplitLimit {
            recentSplits.append((id, namespace, name))
        } else {
            recentSplits[nextSplit] = (id, namespace, name)
            nextSplit = (nextSplit + 1) % Self.recentSplitLimit
        }
    }

    /// Cuts "ns:name[:…]" at its colons on the bytes (no array of parts, no index alignment per model).
    private static func split(_ id: String) -> (namespace: String?, name: String) {
        let colon = UInt8(ascii: ":")
        let parts: (String?, String)? = id.utf8.withContiguousStorageIfAvailable { bytes in
            guard let first = bytes.firstIndex(of: colon) else { return (nil, id) }
            let rest = bytes[(first + 1)...]
            let end = rest.firstIndex(of: colon) ?? bytes.endIndex
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<first]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<end]), as: UTF8.self)
            )
        }
        if let parts { return parts }
        var copy = id
        copy.makeContiguousUTF8()
        return split(copy)
    }

    /// Returns whether the value was an object (so the image builder counts as touched).
    func decodeImage(_ s: inout JSONScanner, into image: ImageDataBuilder) throws -> Bool {
        try forEachKey(&s) { s, key in
            switch key {
            case .uri: if let v = try uri(&s) { image.uri = v }
            case .placeholder: if let v = try string(&s) { image.placeholder = v }
            case .local: if let v = try string(&s) { image.local = v }
            case .custom: mergeObject(&image.custom, try object(&s))
            default: _ = try s.readValue()
            }
        }
    }
}
