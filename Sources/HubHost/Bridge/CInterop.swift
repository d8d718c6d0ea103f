import CHubPlugin
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Small helpers for crossing the C boundary.
enum CInterop {
    /// The text a plugin wrote into an error buffer the host handed it: at most the buffer's length (a plugin may
    /// fill it without a terminating NUL, and `String(cString:)` read past it and crashed the host), UTF-8 repaired,
    /// control characters escaped, cut to 300 characters.
    static func errorText(_ buffer: [CChar]) -> String {
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        let text = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return TerminalText.escaped(text, limit: 300)
    }

    /// Writes `message` into a caller-owned error buffer, truncated and always NUL-terminated.
    static func writeError(_ message: String, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) {
        guard let buffer, capacity > 0 else { return }
        let bytes = Array(message.utf8.prefix(capacity - 1))
        for (i, byte) in bytes.enumerated() { buffer[i] = CChar(bitPattern: byte) }
        buffer[bytes.count] = 0
    }

    /// Reads a C string the plugin passed (borrowed), nil for NULL.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

    /// True when a struct whose first field says `structSize` contains the member at `keyPath`
    /// (the header's HUB_HAS_MEMBER).
    static func covers<T, U>(_ structSize: UInt32, _ keyPath: KeyPath<T, U>) -> Bool {
        guard let offset = MemoryLayout<T>.offset(of: keyPath) else { return false }
        return Int(structSize) >= offset + MemoryLayout<U>.size
    }

    /// Why a plugin's table of one of the kinds whose every member ABI 1.0 already had (component and action
    /// factories and classes, action handlers) is malformed: its `struct_size` is smaller than the type, so the
    /// plugin set it wrong (a smaller size is never an older plugin). Nil when it is whole. When a later minor adds
    /// members to such a type, this must compare with the 1.0 size instead.
    static func shortTableProblem<T>(_ table: UnsafePointer<T>, _ typeName: StaticString) -> String? {
        let declared = Int(UnsafeRawPointer(table).load(as: UInt32.self))
        guard declared < MemoryLayout<T>.size else { return nil }
        return "its \(typeName) has struct_size \(declared), smaller than the \(MemoryLayout<T>.size) bytes of "
            + "\(typeName) (set struct_size to sizeof(\(typeName)))"
    }

    /// A copy of a plugin's size-prefixed table (its first field is `struct_size`), with the members its size
    /// does not cover zeroed (NULL functions): read once, then called without per-call size checks.
    static func copyTable<T>(_ table: UnsafePointer<T>) -> T {
        let declared = Int(UnsafeRawPointer(table).load(as: UInt32.self))
        let copy = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { copy.deallocate() }
        copy.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
        copy.copyMemory(from: table, byteCount: min(declared, MemoryLayout<T>.size))
        return copy.load(as: T.self)
    }

    /// Calls `body` with `strings` as an array of C strings valid for the call.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies = strings.map { UnsafePointer(strdup($0)) }
        defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    /// The opaque handle a plugin gets for `model`: an unretained pointer to it. The caller keeps the model alive
    /// for as long as the plugin may use the handle (the header's lifetime rules).
    static func handle(_ model: ComponentModel) -> OpaquePointer {
        OpaquePointer(Unmanaged.passUnretained(model).toOpaque())
    }

    /// `body` on the model behind `handle`, not retained for the call: the plugin's call that holds the handle
    /// keeps the model alive (the header's lifetime rules), and a retain and release per model read were a
    /// twentieth of a plugin component's cost.
    @inline(__always)
    static func withModel<R>(_ handle: OpaquePointer?, _ body: (ComponentModel) -> R?) -> R? {
        guard let handle else { return nil }
        return Unmanaged<ComponentModel>.fromOpaque(UnsafeRawPointer(handle))._withUnsafeGuaranteedRef(body)
    }

    static func model(_ handle: OpaquePointer?) -> ComponentModel? {
        guard let handle else { return nil }
        return Unmanaged<ComponentModel>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    static func size(_ s: Size) -> hub_size { hub_size(width: s.width, height: s.height) }
    /// A size from a plugin: finite, non-negative and not absurd (`BoundaryValues` reports anything else).
    static func size(_ s: hub_size) -> Size {
        Size(width: BoundaryValues.length(s.width, "width"), height: BoundaryValues.length(s.height, "height"))
    }
    static func rect(_ r: hub_rect) -> Rect { BoundaryValues.rect(r.x, r.y, r.width, r.height) }

    static func textStyle(_ style: UnsafePointer<hub_text_style>?) -> TextStyle {
        guard let style else { return TextStyle() }
        // The whole struct is read only when its size says it is all there; else only the bytes it covers.
        let declared = UnsafeRawPointer(style).load(as: UInt32.self)
        let s = Int(declared) >= MemoryLayout<hub_text_style>.size ? style.pointee : copyTable(style)
        if Int(s.struct_size) >= MemoryLayout<hub_text_style>.size {  // every member there (the usual case)
            return TextStyle(
                fontSize: BoundaryValues.fontSize(s.font_size), weight: BoundaryValues.weight(s.weight),
                color: Color(rgba: s.color), alignment: TextAlignment(rawValue: Int(s.alignment.rawValue)) ?? .left,
                lineLimit: BoundaryValues.lineLimit(s.line_limit))
        }
        func has<U>(_ keyPath: KeyPath<hub_text_style, U>) -> Bool { covers(s.struct_size, keyPath) }
        return TextStyle(
            fontSize: has(\.font_size) ? BoundaryValues.fontSize(s.font_size) : 14,
            weight: has(\.weight) ? BoundaryValues.weight(s.weight) : 400,
            color: has(\.color) ? Color(rgba: s.color) : .black,
            alignment: has(\.alignment) ? TextAlignment(rawValue: Int(s.alignment.rawValue)) ?? .left : .left,
            lineLimit: has(\.line_limit) ? BoundaryValues.lineLimit(s.line_limit) : 0)
    }

    static func rectStyle(_ style: UnsafePointer<hub_rect_style>?) -> RectStyle {
        guard let style else { return RectStyle() }
        let declared = UnsafeRawPointer(style).load(as: UInt32.self)
        let s = Int(declared) >= MemoryLayout<hub_rect_style>.size ? style.pointee : copyTable(style)
        if Int(s.struct_size) >= MemoryLayout<hub_rect_style>.size {  // every member there (the usual case)
            return RectStyle(
                fill: Color(rgba: s.fill_color), stroke: Color(rgba: s.stroke_color),
                strokeWidth: BoundaryValues.strokeWidth(s.stroke_width, "stroke width"),
                cornerRadius: BoundaryValues.strokeWidth(s.corner_radius, "corner radius"))
        }
        func has<U>(_ keyPath: KeyPath<hub_rect_style, U>) -> Bool { covers(s.struct_size, keyPath) }
        return RectStyle(
            fill: has(\.fill_color) ? Color(rgba: s.fill_color) : .clear,
            stroke: has(\.stroke_color) ? Color(rgba: s.stroke_color) : .clear,
            strokeWidth: has(\.stroke_width) ? BoundaryValues.strokeWidth(s.stroke_width, "stroke width") : 0,
            cornerRadius: has(\.corner_radius) ? BoundaryValues.strokeWidth(s.corner_radius, "corner radius") : 0)
    }

    /// Parses optional JSON object text from a plugin; anything but an object gives nil.
    static func jsonObject(_ text: UnsafePointer<CChar>?) -> JSONObject? {
        guard let text = string(text), let value = try? JSONValue.parse(text) else { return nil }
        return value.objectValue
    }
}

/// C strings handed to plugins for one model, kept in `ComponentModel.bridgeStorage` so they live exactly as
/// long as the model (the header promises "valid as long as `model` is").
///
/// Plugins read the same few fields of every model they see, so the lookup must cost next to nothing: each
/// `hub_model_field` has a fixed slot in tail-allocated storage (one allocation per model). The rarer strings
/// (dictionaries as JSON, image URIs, custom keys) sit in a short list, matched by kind and, for a plugin-given
/// key, with `strcmp`, so a hit never converts the plugin's key to a Swift string.
final class ModelCStrings: ManagedBuffer<ModelCStrings.Header, UnsafeMutablePointer<CChar>?> {
    struct Header {
        /// Bit `i` set: slot `i` was made (it may hold NULL: the model has no such value).
        var made: UInt32 = 0
        /// Plugin instances configured with the model (they may keep its handle and strings until they leave it).
        var holders: Int32 = 0
        /// The first string outside the fixed slots, held inline: most models that have one have only one (a
        /// custom value), and an array for it was an allocation per model.
        var firstOther: Other?
        var moreOthers: [Other] = []
        /// Bytes of the inline arena in use (see `copy`).
        var arenaUsed = 0
    }

    /// A string outside the fixed slots: `kind` says what it is, `index` which one (a dictionary, an image
    /// kind), `key` the plugin's key when there is one.
    struct Other {
        enum Kind: UInt8 { case custom, customImage, json, image }
        var kind: Kind
        var index: UInt8
        var key: String
        var value: UnsafeMutablePointer<CChar>?
    }

    static let slotCount = 11  // HUB_MODEL_ID … HUB_MODEL_TARGET_URI
    /// Elements after the slots that hold short strings inline (64 bytes): a model's title or colour fits, and a
    /// malloc and free per string per call were a tenth of a plugin component's cost.
    static let arenaWords = 8
    static let arenaBytes = arenaWords * MemoryLayout<UnsafeMutablePointer<CChar>?>.stride

    static func of(_ model: ComponentModel) -> ModelCStrings {
        if let existing = model.bridgeStorage { return unsafeDowncast(existing, to: ModelCStrings.self) }
        let storage = spares.popLast() ?? makeStorage()
        model.bridgeStorage = storage
        return storage
    }

    /// The strings a plugin reads `model`'s fields into: `of(model)`, except for the model a sizing call borrows
    /// while nothing else holds strings of it (see `borrowing(_:_:)`).
    static func forReading(_ model: ComponentModel) -> ModelCStrings {
        if model.bridgeStorage == nil, ObjectIdentifier(model) == borrowedModel { return scratch }
        return of(model)
    }

    private static func makeStorage() -> ModelCStrings {
        let made = unsafeDowncast(
            ModelCStrings.create(minimumCapacity: slotCount + arenaWords) { _ in Header() }, to: ModelCStrings.self)
        made.withUnsafeMutablePointerToElements { $0.initialize(repeating: nil, count: slotCount + arenaWords) }
        return made
    }

    /// The model the outermost sizing call borrows, while it runs. Its strings go to `scratch`, emptied when the
    /// call returns: they are valid for the call only (the header's `preferred_view_size`), and storage attached
    /// to the model and dropped again cost a fifth of a plugin component's sizing.
    @exclusivity(unchecked) private static var borrowedModel: ObjectIdentifier?
    private static let scratch = makeStorage()

    /// Emptied storage of models whose strings were dropped, handed to the next model that needs some: a render
    /// or a scroll makes and drops a storage per model per call, and the allocation and release cost as much as
    /// the strings. (Main thread only, like every model call.)
    @exclusivity(unchecked) private static var spares: [ModelCStrings] = []
    private static let spareLimit = 32

    /// The string of `field`, made on first use (nil stays nil).
    func field(_ field: hub_model_field, of model: ComponentModel) -> UnsafePointer<CChar>? {
        let slot = Int(field.rawValue)
        guard slot < Self.slotCount else { return nil }
        let bit = UInt32(1) << UInt32(slot)
        if header.made & bit != 0 { return withUnsafeMutablePointerToElements { UnsafePointer($0[slot]) } }
        // A closure, not the method itself: a method as a value retains its object for each call.
        let made = HostTable.withModelString(model, field) { copy($0) }
        header.made |= bit
        withUnsafeMutablePointerToElements { $0[slot] = made }
        return made.map { UnsafePointer($0) }
    }

    func json(_ which: hub_model_dictionary, _ make: () -> String?) -> UnsafePointer<CChar>? {
        guard which.rawValue < 4 else { return nil }  // HUB_MODEL_CUSTOM … HUB_MODEL_TARGET_CUSTOM
        return other(.json, UInt8(which.rawValue), nil) { _ in make() }
    }

    func image(_ kind: ImageData.Kind, _ make: () -> String?) -> UnsafePointer<CChar>? {
        other(.image, UInt8(kind.rawValue), nil) { _ in make() }
    }

    /// `custom[key]` (`.custom`) or the custom image `key` (`.customImage`), made from `make(key)` on first use.
    func keyed(_ kind: Other.Kind, _ key: UnsafePointer<CChar>, _ make: (String) -> String?) -> UnsafePointer<CChar>? {
        other(kind, 0, key, make)
    }

    private func other(
        _ kind: Other.Kind, _ index: UInt8, _ key: UnsafePointer<CChar>?,
        _ make: (String) -> String?
    ) -> UnsafePointer<CChar>? {
        func matches(_ entry: Other) -> Bool {
            guard entry.kind == kind, entry.index == index else { return false }
            return key.map { key in entry.key.withCString { strcmp($0, key) } == 0 } ?? true
        }
        if let first = header.firstOther {
            if matches(first) { return first.value.map { UnsafePointer($0) } }
            for entry in header.moreOthers where matches(entry) { return entry.value.map { UnsafePointer($0) } }
        }
        let keyString = key.map(Self.keyString) ?? ""
        let value = make(keyString).map { copy($0) }
        let entry = Other(kind: kind, index: index, key: keyString, value: value)
        if header.firstOther == nil { header.firstOther = entry } else { header.moreOthers.append(entry) }
        return value.map { UnsafePointer($0) }
    }

    /// `text` as a C string this storage owns: in the inline arena when it fits, else malloc'd (freed with the
    /// strings). Copied straight from its UTF-8: `strdup` of a Swift string first makes a temporary array of it.
    private func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        // Read in place (a native or small string, i.e. any string a decoded model holds); a mutable copy for
        // `withUTF8` retained and released the string for nothing.
        if let made = text.utf8.withContiguousStorageIfAvailable({ copy(utf8: $0) }) { return made }
        var text = text
        return text.withUTF8 { copy(utf8: $0) }
    }

    private func copy(utf8: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<CChar> {
        let destination: UnsafeMutablePointer<CChar>
        if utf8.count < Self.arenaBytes - header.arenaUsed {
            destination = arena + header.arenaUsed
            header.arenaUsed += utf8.count + 1
        } else {
            destination = .allocate(capacity: utf8.count + 1)
        }
        if let base = utf8.baseAddress {
            UnsafeMutableRawPointer(destination).copyMemory(from: base, byteCount: utf8.count)
        }
        destination[utf8.count] = 0
        return destination
    }

    /// The inline arena's first byte (its bytes live as long as the storage).
    private var arena: UnsafeMutablePointer<CChar> {
        withUnsafeMutablePointerToElements {
            UnsafeMutableRawPointer($0 + Self.slotCount).assumingMemoryBound(to: CChar.self)
        }
    }

    /// Frees `string` unless it lives in the arena.
    private func release(_ string: UnsafeMutablePointer<CChar>?) {
        guard let string else { return }
        let offset = string - arena
        if offset < 0 || offset >= Self.arenaBytes { string.deallocate() }
    }

    /// The plugin's key as a Swift string. Plugins ask every model for the same few keys, usually from one string
    /// constant, so the last key made is kept and reused while the plugin's bytes match it.
    private static func keyString(_ key: UnsafePointer<CChar>) -> String {
        if let last = lastKey, strcmp(last.bytes, key) == 0 { return last.string }
        let string = String(cString: key)
        lastKey.map { free($0.bytes) }
        lastKey = (strdup(key)!, string)
        return string
    }
    @exclusivity(unchecked) private static var lastKey: (bytes: UnsafeMutablePointer<CChar>, string: String)?

    // MARK: Releasing strings no plugin can still use
    //
    // Strings must stay valid as long as the model is valid for a plugin: while an instance is configured with
    // it or with an ancestor (handles of children come from the parent), and during a call that borrows it
    // (sizing, actions). Once none of these holds, the strings are freed and made again if a plugin asks later,
    // so scrolling or rendering 100k models keeps only the strings of the models on screen.

    /// Calls into plugin code that borrow a model in progress; releases wait until the outermost returns.
    /// (Main thread only, so no dynamic exclusivity checks: they cost more than the counting.)
    @exclusivity(unchecked) private static var borrowDepth = 0
    @exclusivity(unchecked) private static var pendingReleases: [ComponentModel] = []

    /// Runs a plugin call that borrows a model: no model's strings are freed until it returns.
    @inline(__always)
    static func borrowing<R>(_ body: () -> R) -> R {
        borrowDepth += 1
        defer {
            borrowDepth -= 1
            if borrowDepth == 0, !pendingReleases.isEmpty { flushReleases() }
        }
        return body()
    }

    /// Runs a sizing call that borrows `model` (see `borrowedModel`); inside another borrowing call, as
    /// `borrowing(_:)`.
    @inline(__always)
    static func borrowing<R>(_ model: ComponentModel, _ body: () -> R) -> R {
        guard borrowDepth == 0 else { return borrowing(body) }
        borrowedModel = ObjectIdentifier(model)
        defer {
            borrowedModel = nil
            scratch.freeStrings()
        }
        return borrowing(body)
    }

    /// An instance was configured with `model`.
    static func hold(_ model: ComponentModel) { of(model).header.holders += 1 }

    /// An instance configured with `model` moved on (another model, reuse, destroy).
    static func unhold(_ model: ComponentModel) {
        do {  // the reference ends here, so a release below finds the storage unshared and reuses it
            guard let storage = model.bridgeStorage else { return }
            unsafeDowncast(storage, to: ModelCStrings.self).header.holders -= 1
        }
        releaseIfUnused(model)
    }

    /// Frees `model`'s strings (and its unheld descendants') when no instance holds it or an ancestor.
    static func releaseIfUnused(_ model: ComponentModel) {
        guard model.bridgeStorage != nil else { return }
        if borrowDepth > 0 {
            pendingReleases.append(model)
            return
        }
        if isHeld(model) { return }
        var ancestor = model.parent
        while let current = ancestor {
            if isHeld(current) { return }
            ancestor = current.parent
        }
        drop(model)
    }

    private static func isHeld(_ model: ComponentModel) -> Bool {
        guard let storage = model.bridgeStorage else { return false }
        return unsafeDowncast(storage, to: ModelCStrings.self).header.holders > 0
    }

    private static func drop(_ model: ComponentModel) {
        if isHeld(model) { return }  // a held descendant keeps its own strings (and its descendants')
        if var storage = model.bridgeStorage.map({ unsafeDowncast($0, to: ModelCStrings.self) }) {
            model.bridgeStorage = nil
            // Kept for reuse only when nothing else refers to it; otherwise its deinit frees the strings.
            if spares.count < spareLimit, isKnownUniquelyReferenced(&storage) {
                storage.freeStrings()
                spares.append(storage)
            }
        }
        for child in model.children { drop(child) }
    }

    private static func flushReleases() {
        while let model = pendingReleases.popLast() { releaseIfUnused(model) }
    }

    /// Frees every string made and leaves the storage as new.
    private func freeStrings() {
        var made = header.made
        withUnsafeMutablePointerToElements { slots in
            while made != 0 {
                let i = made.trailingZeroBitCount
                release(slots[i])
                slots[i] = nil
                made &= made - 1
            }
        }
        // Field by field: most models have no other strings, and a new header would release and store each part.
        header.made = 0
        header.holders = 0
        header.arenaUsed = 0
        if let first = header.firstOther {
            release(first.value)
            header.firstOther = nil
            if !header.moreOthers.isEmpty {
                for entry in header.moreOthers { release(entry.value) }
                // Its buffer stays for the next model a spare storage serves (a tile reads two other strings).
                // (Asked only when there is something to remove: emptying an empty array took the generic
                // replace path, a twentieth of the bridge's time.)
                header.moreOthers.removeAll(keepingCapacity: true)
            }
        }
    }

    deinit { freeStrings() }
}
