/// A JSON syntax error at a byte offset.
public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// The JSON parser of hubhost and its plugin SDK: a small pull scanner over UTF-8 bytes, with line and column in
/// every error. The view-model decoder walks documents with it and builds models directly, without an
/// intermediate tree (JSONSerialization plus a JSONValue tree cost ~4× the time and far more
/// memory at 100k components; see RenderBench). Generic values (custom data) are read as `JSONValue`.
/// Object key order is kept.
public struct JSONScanner {
    public enum Kind { case object, array, string, number, bool, null }

    private let bytes: [UInt8]
    public private(set) var position = 0
    /// Set when a number beyond a double's range was read (1e999: infinity); a reader that reports it clears it.
    public var readNumberOutOfRange = false
    /// Set when a string held `\u0000` or a lone surrogate (`\ud800`), read as U+FFFD: U+0000 would end the text
    /// where a plugin reads it as a C string, and a lone surrogate is no character. A reader that reports it clears it.
    public var readReplacedCharacter = false
    /// Nesting limit, so hostile input cannot overflow the stack.
    private var depth = 0
    public static let maxDepth = 512

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = Self.byteOrderMarkLength(bytes)
    }

    /// A UTF-8 byte order mark at the start (editors on Windows write one) is skipped, as RFC 8259 lets a parser
    /// do; it used to be "unexpected byte 0xef".
    private static func byteOrderMarkLength(_ bytes: [UInt8]) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// A scanner that also numbers the keys a reader's schema knows: `nextKeySymbol` returns a key's index in
    /// `keySymbols`, so a schema reader switches on a number and no key string is made, retained or compared.
    public init(_ bytes: [UInt8], keySymbols: [String]) {
        self.bytes = bytes
        position = Self.byteOrderMarkLength(bytes)
        for (index, key) in keySymbols.enumerated() { symbolTable[key] = index }
        // The initial entries stand for the empty key.
        let empty = RecentKey(symbol: symbolTable[""] ?? Self.otherKey)
        recentKeys = [RecentKey](repeating: empty, count: recentKeys.count)
    }

    /// A scanner over `bytes` that starts at `position` (to read one value again, such as a key for an error path).
    public init(_ bytes: [UInt8], position: Int) {
        self.bytes = bytes
        self.position = min(max(position, 0), bytes.count)
    }

    /// Where the key `nextKey` or `nextKeySymbol` read last begins (its opening quote), so a reader can name it
    /// later without keeping the string.
    public private(set) var lastKeyOffset = 0

    /// Object keys seen lately, by their bytes: a document repeats the same few keys on every object, and a hit
    /// costs a comparison instead of validating and building a string.
    private var recentKeys = [RecentKey](repeating: RecentKey(), count: 64)
    /// Symbol by key, for `nextKeySymbol`; read when a key enters `recentKeys` (or is too long for it).
    private var symbolTable: [String: Int] = [:]
    /// What `nextKeySymbol` returns for a key that is not one of the symbols: -1, below every symbol.
    public static let otherKey = -1

    private struct RecentKey {
        /// Bytes 0–7 and 8–14 of a key of at most 15 bytes, with its length in the top byte of `high`.
        var low: UInt64 = 0
        var high: UInt64 = 0
        var key = ""
        var symbol = JSONScanner.otherKey
    }

    // MARK: Errors

    public func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        let offset = min(offset ?? position, bytes.count)
        var line = 1
        var column = 1
        for b in bytes[0..<offset] {
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    private func describeByte() -> String {
        guard position < bytes.count else { return "end of input" }
        let b = bytes[position]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        let hex = String(b, radix: 16)
        return "byte 0x" + (hex.count < 2 ? "0" : "") + hex
    }

    // MARK: Structure

    /// Inlined in the scanner's own loops: between tokens there is usually no whitespace or one space, and a
    /// call per token was a fifteenth of decoding a view.
    @inline(__always)
    public mutating func skipWhitespace() {
        if position < bytes.count, bytes[position] > 0x20 { return }
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    public var isAtEnd: Bool {
        mutating get {
            skipWhitespace()
            return position >= bytes.count
        }
    }

    public mutating func peekKind() throws -> Kind {
        skipWhitespace()
        guard position < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("unexpected \(describeByte()), expected a value")
        }
    }

    @inline(__always)
    private mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw unexpected(what()) }
        position += 1
    }

    @inline(never)
    private func unexpected(_ what: String) -> JSONSyntaxError { error("expected \(what), found \(describeByte())") }

    /// The next value's kind, or nil at the end of the input (no error made).
    @inline(__always)
    private mutating func nextByte() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    /// Reads a string when one comes next; otherwise returns nil and consumes nothing (one call where a schema
    /// reader would peek and then read).
    public mutating func readStringIfString() throws -> String? {
        guard nextByte() == UInt8(ascii: "\"") else { return nil }
        return try readString()
    }

    /// Reads an object as `readObject` does when one comes next and returns true; otherwise returns false and
    /// consumes nothing.
    public mutating func readObjectIfObject(_ body: (inout JSONScanner, String) throws -> Void) throws -> Bool {
        guard nextByte() == UInt8(ascii: "{") else { return false }
        try readObject(body)
        return true
    }

    /// Reads an array as `readArray` does when one comes next and returns true; otherwise returns false and
    /// consumes nothing.
    public mutating func readArrayIfArray(_ body: (inout JSONScanner, Int) throws -> Void) throws -> Bool {
        guard nextByte() == UInt8(ascii: "[") else { return false }
        try readArray(body)
        return true
    }

    /// Reads an object, calling `body` with each key while the scanner sits on the key's value; `body` must
    /// consume the value.
    public mutating func readObject(_ body: (inout JSONScanner, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{'")
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a key string, found \(describeByte())")
            }
            let key = try readKey()
            try expect(UInt8(ascii: ":"), "':'")
            try body(&self, key)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input, expected ',' or '}'") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return
            }
            throw error("expected ',' or '}', found \(describeByte())")
        }
    }

    /// Opens an object when one comes next: consumes its `{` and returns true (then call `nextKey` until it
    /// returns nil); otherwise returns false and consumes nothing. The pull form of `readObject`, for readers
    /// that inline their per-key code instead of calling a closure per key.
    public mutating func enterObjectIfObject() throws -> Bool {
        guard nextByte() == UInt8(ascii: "{") else { return false }
        position += 1
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        return true
    }

    /// The next key of the object `enterObjectIfObject` opened, with the scanner on its value (which the caller
    /// must consume), or nil after the closing `}`. `isFirst` starts true and is kept by the caller.
    public mutating func nextKey(isFirst: inout Bool) throws -> String? {
        guard try moveToNextKey(isFirst: &isFirst) else { return nil }
        let key = try readKey()
        try expect(UInt8(ascii: ":"), "':'")
        return key
    }

    /// `nextKey` for a scanner made with key symbols: the key's index in them, or `otherKey` (the key is then at
    /// `lastKeyOffset`, to read again if needed).
    public mutating func nextKeySymbol(isFirst: inout Bool) throws -> Int? {
        guard try moveToNextKey(isFirst: &isFirst) else { return nil }
        let symbol: Int
        if let slot = keySlot() {
            symbol = recentKeys[slot].symbol
        } else {
            symbol = symbolTable[try readString()] ?? Self.otherKey
        }
        try expect(UInt8(ascii: ":"), "':'")
        return symbol
    }

    /// Moves onto the next key's opening quote (recording it as `lastKeyOffset`) and returns true, or past the
    /// object's closing `}` and returns false.
    @inline(__always)
    private mutating func moveToNextKey(isFirst: inout Bool) throws -> Bool {
        skipWhitespace()
        guard position < bytes.count else {
            throw error(
                isFirst ? "expected a key string, found end of input" : "unexpected end of input, expected ',' or '}'")
        }
        if isFirst {
            isFirst = false
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                depth -= 1
                return false
            }
        } else if bytes[position] == UInt8(ascii: ",") {
            position += 1
            skipWhitespace()
        } else if bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return false
        } else {
            throw error("expected ',' or '}', found \(describeByte())")
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw error("expected a key string, found \(describeByte())")
        }
        lastKeyOffset = position
        return true
    }

    /// Reads an array, calling `body` with each index while the scanner sits on the element.
    public mutating func readArray(_ body: (inout JSONScanner, Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "'['")
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return
        }
        var index = 0
        while true {
            try body(&self, index)
            index += 1
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input, expected ',' or ']'") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return
            }
            throw error("expected ',' or ']', found \(describeByte())")
        }
    }

    // MARK: Scalars

    public mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""), "'\"'")
        let start = position
        // Fast path: no escapes. Plain bytes are skipped a word at a time; the byte loop decides at the first stop.
        while position + 8 <= bytes.count {
            let stops = Self.stringStops(word(at: position))
            if stops != 0 {
                position += Self.firstStop(stops)
                break
            }
            position += 8
        }
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let s = bytes.withUnsafeBufferPointer { String(decoding: $0[start..<position], as: UTF8.self) }
                position += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw error("control character in a string") }
            position += 1
        }
        var out = [UInt8](bytes[start..<min(position, bytes.count)])
        while position < bytes.count {
            let b = bytes[position]
            position += 1
            switch b {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let e = bytes[position]
                position += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800..<0xDC00).contains(scalar), position + 1 < bytes.count,
                        bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try readHex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                    }
                    if scalar == 0 || (0xD800..<0xE000).contains(scalar) {
                        readReplacedCharacter = true
                        out.append(contentsOf: [0xEF, 0xBF, 0xBD])  // U+FFFD
                    } else {
                        out.append(
                            contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
                    }
                default: throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'", at: position - 2)
                }
            default:
                if b < 0x20 { throw error("control character in a string", at: position - 1) }
                out.append(b)
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    // MARK: Eight bytes at a time

    /// The bytes at `offset` to `offset + 8` as a little-endian word (byte 0 lowest); the caller checked the range.
    @inline(__always)
    private func word(at offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }

    /// A word with the high bit set in each byte of `word` that ends a plain run of string bytes (a quote, a
    /// backslash or a control character); exact up to the first such byte, which is all callers look at.
    @inline(__always)
    private static func stringStops(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        return ((quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | (word &- ones &* 0x20) & ~word)
            & highs
    }

    /// The index of the first byte `stringStops` marked (stops must not be 0).
    @inline(__always)
    private static func firstStop(_ stops: UInt64) -> Int { stops.trailingZeroBitCount >> 3 }

    /// The low `count` bytes of `word` (count 0–7).
    @inline(__always)
    private static func lowBytes(_ word: UInt64, _ count: Int) -> UInt64 {
        count == 0 ? 0 : word & (UInt64.max >> UInt64(64 - 8 * count))
    }

    /// An object key: a short key without escapes from `recentKeys`, any other as `readString` reads it.
    private mutating func readKey() throws -> String { try keySlot().map { recentKeys[$0].key } ?? readString() }

    /// The `recentKeys` slot of the key at the scanner (a short key without escapes), entered there if new, with
    /// the scanner moved past it; nil, with the scanner unmoved, for any other key (16 bytes or more, or escaped),
    /// which the caller reads with `readString`. Where 16 bytes follow the quote, the key is found a word at a time.
    private mutating func keySlot() -> Int? {
        let start = position + 1  // after the opening quote, which the caller checked
        if start + 16 <= bytes.count {
            let first = word(at: start)
            let low: UInt64
            let high: UInt64
            let length: Int
            let stops = Self.stringStops(first)
            if stops != 0 {
                length = Self.firstStop(stops)
                low = Self.lowBytes(first, length)
                high = 0
            } else {
                let second = word(at: start + 8)
                let secondStops = Self.stringStops(second)
                guard secondStops != 0 else { return nil }
                length = 8 + Self.firstStop(secondStops)
                low = first
                high = Self.lowBytes(second, length - 8)
            }
            // A backslash or control character before the closing quote: the general reader decides.
            guard bytes[start + length] == UInt8(ascii: "\"") else { return nil }
            return cachedKeySlot(low: low, high: high, start: start, end: start + length)
        }
        var end = start
        var low: UInt64 = 0
        var high: UInt64 = 0
        while end < bytes.count, end - start < 16 {
            let b = bytes[end]
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") || b < 0x20 { return nil }
            let offset = end - start
            if offset < 8 { low |= UInt64(b) << (8 * offset) } else { high |= UInt64(b) << (8 * (offset - 8)) }
            end += 1
        }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\""), end - start < 16 else { return nil }
        return cachedKeySlot(low: low, high: high, start: start, end: end)
    }

    /// The slot of the key of bytes `start..<end` (fewer than 16, packed into `low` and `high`), which holds it
    /// already when it was seen lately; the scanner moves past its closing quote.
    @inline(__always)
    private mutating func cachedKeySlot(low: UInt64, high: UInt64, start: Int, end: Int) -> Int {
        let length = end - start
        let high = high | UInt64(length) << 56
        let slot = Int(truncatingIfNeeded: (low &* 0x9E37_79B9_7F4A_7C15 ^ high &* 0xC2B2_AE3D_27D4_EB4F) >> 58)
        position = end + 1
        // The initial entries (length 0, key "") are right for the empty key.
        if recentKeys[slot].low == low, recentKeys[slot].high == high { return slot }
        let key = bytes.withUnsafeBufferPointer { String(decoding: $0[start..<end], as: UTF8.self) }
        recentKeys[slot] = RecentKey(low: low, high: high, key: key, symbol: symbolTable[key] ?? Self.otherKey)
        return slot
    }

    private mutating func readHex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            v = v << 4 | d
            position += 1
        }
        return v
    }

    public mutating func readNumber() throws -> Double {
        skipWhitespace()
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        var digits = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
            digits += 1
        }
        guard digits > 0 else { throw error("invalid number", at: start) }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            var fraction = 0
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
                fraction += 1
            }
            guard fraction > 0 else { throw error("invalid number", at: start) }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            var exponent = 0
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
                exponent += 1
            }
            guard exponent > 0 else { throw error("invalid number", at: start) }
        }
        if isInteger, digits <= 15 {
            var v = 0
            var i = start
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            while i < position {
                v = v * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                i += 1
            }
            return Double(negative ? -v : v)
        }
        let text = bytes.withUnsafeBufferPointer { String(decoding: $0[start..<position], as: UTF8.self) }
        guard let value = Double(text) else { throw error("invalid number", at: start) }
        if !value.isFinite { readNumberOutOfRange = true }
        return value
    }

    /// An integer exactly, as `Int64` (a nanosecond time does not fit a Double's 53 bits); a fraction, an
    /// exponent or a value out of range is an error.
    public mutating func readInteger() throws -> Int64 {
        skipWhitespace()
        let start = position
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var magnitude: UInt64 = 0
        var digits = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { throw error("integer out of range", at: start) }
            magnitude = sum
            position += 1
            digits += 1
        }
        guard digits > 0 else { throw error("expected an integer, found \(describeByte())", at: start) }
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            throw error("expected an integer, found a fraction", at: start)
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw error("integer out of range", at: start) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw error("integer out of range", at: start) }
        return Int64(magnitude)
    }

    /// `true` or `false`.
    public mutating func readBool() throws -> Bool {
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "t") {
            try readLiteral("true")
            return true
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "f") else {
            throw error("expected true or false, found \(describeByte())")
        }
        try readLiteral("false")
        return false
    }

    /// Reads `null` when it comes next: true when it did (the value is absent), false when another value follows.
    public mutating func readNull() throws -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "n") else { return false }
        try readLiteral("null")
        return true
    }

    private mutating func readLiteral(_ word: String) throws {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
            throw error("unexpected \(describeByte()), expected a value")
        }
        position += utf8.count
    }

    public mutating func readValue() throws -> JSONValue {
        switch try peekKind() {
        case .object:
            var object = JSONObject()
            try readObject { scanner, key in object[key] = try scanner.readValue() }
            return .object(object)
        case .array:
            var array: [JSONValue] = []
            try readArray { scanner, _ in array.append(try scanner.readValue()) }
            return .array(array)
        case .string: return .string(try readString())
        case .number: return .number(try readNumber())
        case .bool:
            if bytes[position] == UInt8(ascii: "t") {
                try readLiteral("true")
                return .bool(true)
            }
            try readLiteral("false")
            return .bool(false)
        case .null:
            try readLiteral("null")
            return .null
        }
    }
}
