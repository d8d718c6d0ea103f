/// The names plugins register things under (component and action namespaces, layout manager ids, service
/// interface ids and names): text a view model, a command line or another plugin can write, and that messages
/// print. One that could never be named (not UTF-8, control characters) or floods every message that echoes it
/// is refused when registered, saying why, instead of being listed and matched as it is.
public enum RegisteredName {
    /// The longest name, in UTF-8 bytes (Hub's namespaces are a word or a reverse-DNS name).
    public static let maxBytes = 256

    /// Why `name` cannot be registered, or nil. `name` comes from a C string: bytes that were not UTF-8 were
    /// replaced with U+FFFD when it was read.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > maxBytes { return "it is \(name.utf8.count) bytes long (at most \(maxBytes))" }
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0xFFFD: return "it is not UTF-8 text"
            case 0..<0x20, 0x7F...0x9F: return "it holds control characters"
            default: continue
            }
        }
        return nil
    }
}
