/// Text from views, scripts and plugins made safe to print on a terminal or in a log.
///
/// Untrusted strings must not be able to forge hubhost's own messages (a newline and a fake
/// `home.json: $.body[7]: …` line) or drive the terminal (ANSI escapes), nor flood it (a 50 MB URI). So control
/// characters (C0, DEL, C1), Unicode line separators and bidirectional overrides are shown as escapes, and an
/// echoed value is cut to a bounded length, saying how much was left out.
public enum TerminalText {
    /// How many characters of an untrusted value are echoed.
    public static let echoLimit = 200

    /// `value` with control characters escaped, cut after `limit` characters.
    public static func escaped(_ value: String, limit: Int = echoLimit) -> String {
        // Printable ASCII within the limit (the common case, e.g. every id in a trace) has nothing to escape.
        if value.utf8.count <= limit, value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return value }
        var out = ""
        var count = 0
        var consumedBytes = 0
        for scalar in value.unicodeScalars {
            if count >= limit {
                let left = value.utf8.count - consumedBytes
                return out + "… (\(left) more bytes)"
            }
            out += escape(scalar)
            count += 1
            consumedBytes += String(scalar).utf8.count
        }
        return out
    }

    /// `value` escaped and cut as `escaped`, in double quotes.
    public static func quoted(_ value: String, limit: Int = echoLimit) -> String {
        "\"" + escaped(value, limit: limit).replacing("\"", with: "\\\"") + "\""
    }

    /// A whole message (hubhost's own text around untrusted values) with any control character escaped and the
    /// line cut at `limit` characters; the one newline a caller adds stays the only one.
    /// How many characters of one output line are echoed.
    public static let lineLimit = 10 * echoLimit

    public static func line(_ message: String, limit: Int = lineLimit) -> String {
        message.utf8.count <= limit && isPrintable(message) ? message : escaped(message, limit: limit)
    }

    /// True when `escape` leaves every character of `text` as it is. Checked on bytes: a control byte, or the
    /// lead bytes of the escaped C1 controls (0xC2) and of the escaped line, paragraph and direction marks
    /// (0xE2 0x80 / 0xE2 0x81); other non-ASCII text (an arrow, accents) passes.
    public static func isPrintable(_ text: String) -> Bool {
        if let printable = text.utf8.withContiguousStorageIfAvailable(isPrintable) { return printable }
        return Array(text.utf8).withUnsafeBufferPointer(isPrintable)  // a bridged string: one copy, the same rule
    }

    /// `isPrintable` on UTF-8 bytes (a line already in an output buffer), in one pass without a branch per byte
    /// (the compiler vectorizes it): every trace and outline line is checked, and many hold "→" or "×".
    public static func isPrintable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var flags: UInt8 = 0
        var previous: UInt8 = 0
        for byte in bytes {
            let control = byte < 0x20 || byte == 0x7F || byte == 0xC2
            let mark = previous == 0xE2 && (byte & 0xFE) == 0x80
            flags |= (control ? 1 : 0) | (mark ? 1 : 0)
            previous = byte
        }
        return flags == 0
    }

    /// A dictionary key as a step of a JSON path: `name` when it is a plain identifier, else `["…"]`.
    public static func jsonKey(_ key: String) -> String {
        let plain =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_"
                        || scalar == "-")
            }
        return plain ? key : "[\(quoted(key, limit: 60))]"
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return "\\u{" + String(scalar.value, radix: 16) + "}"
        default: return String(scalar)
        }
    }
}
