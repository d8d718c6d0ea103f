/// Output built as bytes in one fixed buffer that goes to a sink each time it fills, as a streaming encoder
/// writes: no `String` grows, no indentation string is made per line, and untrusted text is escaped a buffer at
/// a time with a copy when nothing needs escaping (the usual case).
///
/// Made by `ByteWriter.stream(to:_:)`, which flushes and frees it when the body returns; pass it `inout`.
public struct ByteWriter {
    // Visible to the inlinable writes below: the writers call them per byte and per token, across modules.
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline var count = 0
    @usableFromInline let capacity: Int
    private let sink: (UnsafeRawBufferPointer) -> Void

    private init(capacity: Int, sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.capacity = capacity
        self.base = .allocate(capacity: capacity)
        self.sink = sink
    }

    /// Runs `body` with a writer whose bytes reach `sink` in chunks of about `capacity` bytes (and once more at
    /// the end), on the caller's thread. The chunk is only valid during the sink's call.
    ///
    /// Why not a thread of its own for the sink: measured on a render of 100k components to a file, it did not
    /// shorten the wall time and cost 3–12% more CPU (each buffer's cache lines go to the other core and back).
    public static func stream<R>(
        capacity: Int = 64 << 10, to sink: (UnsafeRawBufferPointer) -> Void, _ body: (inout ByteWriter) throws -> R
    ) rethrows -> R {
        try withoutActuallyEscaping(sink) { sink in
            var writer = ByteWriter(capacity: capacity, sink: sink)
            defer {
                writer.flush()
                writer.base.deallocate()
            }
            return try body(&writer)
        }
    }

    /// Everything `body` writes, as one array (small outputs: pieces kept to be copied later).
    public static func bytes(_ body: (inout ByteWriter) throws -> Void) rethrows -> [UInt8] {
        var bytes: [UInt8] = []
        try stream(to: { bytes.append(contentsOf: $0) }, body)
        return bytes
    }

    /// Everything `body` writes, as one string (small outputs and tests).
    public static func string(_ body: (inout ByteWriter) throws -> Void) rethrows -> String {
        String(decoding: try bytes(body), as: UTF8.self)
    }

    public mutating func flush() {
        guard count > 0 else { return }
        sink(UnsafeRawBufferPointer(start: base, count: count))
        count = 0
    }

    @inlinable @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > capacity { flush() }
    }

    @inlinable @inline(__always)
    public mutating func byte(_ b: UInt8) {
        if count == capacity { flush() }
        base[count] = b
        count += 1
    }

    /// Bytes copied in (a run longer than the buffer goes to the sink directly). Short runs, the usual token,
    /// are copied as two words that may overlap (4–16 bytes) or byte by byte: a `memmove` call costs more than
    /// the copy.
    @inlinable
    public mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        let n = bytes.count
        if n > capacity { return writeThrough(bytes) }
        reserve(n)
        let from = UnsafeRawPointer(start)
        let to = UnsafeMutableRawPointer(base + count)
        if n >= 8 && n <= 16 {
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        } else if n < 4 {
            for i in 0..<n { base[count &+ i] = start[i] }
        } else {
            (base + count).update(from: start, count: n)
        }
        count += n
    }

    @usableFromInline
    mutating func writeThrough(_ bytes: UnsafeBufferPointer<UInt8>) {
        flush()
        sink(UnsafeRawBufferPointer(bytes))
    }

    /// Our own literal text (markup, key names), as it is.
    @inlinable @inline(__always)
    public mutating func write(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `text` as it is (only for text that needs no escaping in the output's syntax). Copied by the string's own
    /// bulk copy: no closure per string (most are small ids and names). Disfavoured so that a literal takes the
    /// `StaticString` overload (a literal's default type is String, so it would otherwise be measured and copied
    /// as a String: the writers pass several literals per component).
    @inlinable @_disfavoredOverload
    public mutating func write(_ text: String) {
        let n = text.utf8.count
        guard n <= capacity else { return withUTF8(text) { bytes($0) } }
        reserve(n)
        let (_, written) = UnsafeMutableBufferPointer(start: base + count, count: n).initialize(from: text.utf8)
        count += written
    }

    /// Makes room for `n` bytes now, so that nothing written within them is flushed before `written(since:)`
    /// (`n` must be at most the capacity).
    @inlinable
    public mutating func reserveContiguous(_ n: Int) {
        precondition(n <= capacity, "ByteWriter.reserveContiguous: more than the buffer holds")
        reserve(n)
    }

    /// Where the next byte goes, for `written(since:)` and `rewind(to:)` after a `reserveContiguous`.
    @inlinable public var position: Int { count }

    /// The bytes written since `start` (a `position` taken after `reserveContiguous`, within what it reserved).
    @inlinable
    public func written(since start: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + start, count: count - start)
    }

    /// Drops what was written since `start` (a `position` taken after `reserveContiguous`).
    public mutating func rewind(to start: Int) {
        precondition(start <= count, "ByteWriter.rewind: past the bytes written")
        count = start
    }

    /// `n` in decimal.
    @inlinable
    public mutating func write(_ n: Int) {
        reserve(Int64.maxDecimalLength)
        count += Int64(n).writeDecimal(into: base + count)
    }

    /// `n` in its shortest form: an integer without a fraction, `null` when not finite (as JSON has no NaN).
    public mutating func write(number n: Double) {
        guard n.isFinite else { return write("null" as StaticString) }
        write(compact: n)
    }

    /// `n` in hundredths when it is a two-decimal value (frames of text often are: 27.5, 43.25) below 10^13,
    /// whose shortest digits `write(hundredths:)` writes without making a String; nil otherwise.
    @inlinable
    static func exactHundredths(_ n: Double) -> Int? {
        let cents = (n * 100).rounded()
        guard abs(cents) < 1e15, cents / 100 == n else { return nil }
        return Int(cents)
    }

    /// `cents / 100` in its shortest form ("27.4", "-0.05", "12"), as `write(number:)` writes that Double but
    /// without making a String (an SVG has several fractional coordinates per component). Two-decimal values
    /// below 10^13 are 0.002 apart or more, so none shares its Double with a shorter decimal: the digits here
    /// are the shortest round-trip digits Swift prints.
    public mutating func write(hundredths cents: Int) {
        guard cents.magnitude < 1_000_000_000_000_000 else { return write(number: Double(cents) / 100) }
        if cents < 0 { byte(UInt8(ascii: "-")) }
        let magnitude = Int(cents.magnitude)
        write(magnitude / 100)
        let fraction = magnitude % 100
        guard fraction != 0 else { return }
        byte(UInt8(ascii: "."))
        byte(UInt8(ascii: "0") + UInt8(fraction / 10))
        if fraction % 10 != 0 { byte(UInt8(ascii: "0") + UInt8(fraction % 10)) }
    }

    /// `n` as `Double.compact` gives it ("15" rather than "15.0"; "nan" and "inf" as they are).
    @inlinable
    public mutating func write(compact n: Double) {
        if let whole = n.wholeNumber { return write(Int(whole)) }
        if let cents = Self.exactHundredths(n) { return write(hundredths: cents) }
        write(String(n))
    }

    /// A newline and `spaces` spaces (a pretty printer's indentation), written in one piece.
    public mutating func newline(indent spaces: Int) {
        guard spaces < capacity else {
            byte(0x0A)
            for _ in 0..<spaces { byte(0x20) }
            return
        }
        reserve(spaces + 1)
        base[count] = 0x0A
        (base + count + 1).initialize(repeating: 0x20, count: spaces)
        count += spaces + 1
    }

    /// `text` as a JSON string, in quotes: `"`, `\` and control characters escaped (`\n`, `\r`, `\t`, `\u00XX`),
    /// everything else as it is.
    public mutating func writeJSONString(_ text: String) {
        byte(UInt8(ascii: "\""))
        writeJSONStringContents(text)
        byte(UInt8(ascii: "\""))
    }

    /// `text` escaped as inside a JSON string, without the quotes. Text that needs no escaping, the usual case,
    /// is found so a word at a time and copied whole.
    public mutating func writeJSONStringContents(_ text: String) {
        withUTF8(text) { utf8 in
            if !Self.mayNeedJSONEscape(utf8) { return bytes(utf8) }
            var start = 0
            for (i, b) in utf8.enumerated() where b < 0x20 || b == 0x22 || b == 0x5C {
                bytes(UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                switch b {
                case 0x22: write("\\\"")
                case 0x5C: write("\\\\")
                case 0x0A: write("\\n")
                case 0x0D: write("\\r")
                case 0x09: write("\\t")
                default:
                    write("\\u00")
                    byte(Self.hexDigits[Int(b >> 4)])
                    byte(Self.hexDigits[Int(b & 0xF)])
                }
            }
            bytes(UnsafeBufferPointer(rebasing: utf8[start...]))
        }
    }

    /// False when no byte of `utf8` is a quote, a backslash or a control character (true may be wrong only
    /// after the first such byte, which is all the caller needs).
    @usableFromInline
    static func mayNeedJSONEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = utf8.baseAddress else { return false }
        let raw = UnsafeRawPointer(start)
        let ones: UInt64 = 0x0101_0101_0101_0101
        var i = 0
        var stops: UInt64 = 0
        while i + 8 <= utf8.count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            stops |= (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | (word &- ones &* 0x20) & ~word
            i += 8
        }
        if stops & 0x8080_8080_8080_8080 != 0 { return true }
        while i < utf8.count {
            let b = utf8[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return true }
            i += 1
        }
        return false
    }

    /// `first`, `separator` and `second` as one JSON string (`"namespace:name"` without building it).
    public mutating func writeJSONString(_ first: String, _ separator: UInt8, _ second: String) {
        byte(UInt8(ascii: "\""))
        writeJSONStringContents(first)
        byte(separator)
        writeJSONStringContents(second)
        byte(UInt8(ascii: "\""))
    }

    /// `text` escaped for XML and HTML text and attributes: `&`, `<`, `>` and `"` as entities, control characters
    /// other than newline and tab as spaces, and U+FFFE and U+FFFF (which XML 1.0 does not allow either: one in a
    /// title made the whole SVG unreadable) as U+FFFD.
    public mutating func writeXMLEscaped(_ text: String) {
        withUTF8(text) { utf8 in
            var start = 0
            for (i, b) in utf8.enumerated()
            where b == 0x26 || b == 0x3C || b == 0x3E || b == 0x22 || (b < 0x20 && b != 0x0A && b != 0x09)
                || b == 0xEF
            {
                if b == 0xEF {
                    // EF BF BE / EF BF BF: U+FFFE / U+FFFF. Any other character starting with EF is written as is.
                    guard i + 2 < utf8.count, utf8[i + 1] == 0xBF, utf8[i + 2] & 0xFE == 0xBE else { continue }
                    bytes(UnsafeBufferPointer(rebasing: utf8[start..<i]))
                    write("\u{FFFD}")
                    start = i + 3
                    continue
                }
                bytes(UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                switch b {
                case 0x26: write("&amp;")
                case 0x3C: write("&lt;")
                case 0x3E: write("&gt;")
                case 0x22: write("&quot;")
                default: byte(0x20)
                }
            }
            bytes(UnsafeBufferPointer(rebasing: utf8[start...]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    @inlinable @inline(__always)
    func withUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }
}
