import CHubPlugin
import Foundation
import HubCore

/// Small helpers for crossing the C boundary.
enum CInterop {
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

    static func model(_ handle: OpaquePointer?) -> ComponentModel? {
        guard let handle else { return nil }
        return Unmanaged<ComponentModel>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    static func size(_ s: Size) -> hub_size { hub_size(width: s.width, height: s.height) }
    static func size(_ s: hub_size) -> Size { Size(width: sanitize(s.width), height: sanitize(s.height)) }
    static func rect(_ r: hub_rect) -> Rect { Rect(x: r.x, y: r.y, width: r.width, height: r.height) }

    /// Plugins must return finite, non-negative sizes; anything else becomes 0 rather than poisoning layout.
    static func sanitize(_ value: Double) -> Double { value.isFinite && value > 0 ? value : 0 }

    static func textStyle(_ style: UnsafePointer<hub_text_style>?) -> TextStyle {
        guard let style else { return TextStyle() }
        let s = style.pointee
        func has<U>(_ keyPath: KeyPath<hub_text_style, U>) -> Bool { covers(s.struct_size, keyPath) }
        return TextStyle(fontSize: has(\.font_size) ? s.font_size : 14,
                         weight: has(\.weight) ? Int(s.weight) : 400,
                         color: has(\.color) ? Color(rgba: s.color) : .black,
                         alignment: has(\.alignment) ? TextAlignment(rawValue: Int(s.alignment.rawValue)) ?? .left : .left,
                         lineLimit: has(\.line_limit) ? Int(s.line_limit) : 0)
    }

    static func rectStyle(_ style: UnsafePointer<hub_rect_style>?) -> RectStyle {
        guard let style else { return RectStyle() }
        let s = style.pointee
        func has<U>(_ keyPath: KeyPath<hub_rect_style, U>) -> Bool { covers(s.struct_size, keyPath) }
        return RectStyle(fill: has(\.fill_color) ? Color(rgba: s.fill_color) : .clear,
                         stroke: has(\.stroke_color) ? Color(rgba: s.stroke_color) : .clear,
                         strokeWidth: has(\.stroke_width) ? s.stroke_width : 0,
                         cornerRadius: has(\.corner_radius) ? s.corner_radius : 0)
    }

    /// Parses optional JSON object text from a plugin; anything but an object gives nil.
    static func jsonObject(_ text: UnsafePointer<CChar>?) -> JSONObject? {
        guard let text = string(text), let value = try? JSONValue.parse(text) else { return nil }
        return value.objectValue
    }
}

/// C strings handed to plugins for one model, kept in `ComponentModel.bridgeStorage` so they live exactly as
/// long as the model (the header promises "valid as long as `model` is").
final class ModelCStrings {
    private var strings: [String: UnsafeMutablePointer<CChar>?] = [:]

    static func of(_ model: ComponentModel) -> ModelCStrings {
        if let existing = model.bridgeStorage as? ModelCStrings { return existing }
        let storage = ModelCStrings()
        model.bridgeStorage = storage
        return storage
    }

    /// The cached C string for `key`, made from `make()` on first use (nil stays nil).
    func string(_ key: String, _ make: () -> String?) -> UnsafePointer<CChar>? {
        if let cached = strings[key] { return cached.map { UnsafePointer($0) } }
        let made = make().map { strdup($0) }
        strings[key] = .some(made.flatMap { $0 })
        return made.flatMap { $0 }.map { UnsafePointer($0) }
    }

    deinit { for case let pointer? in strings.values { free(pointer) } }
}
