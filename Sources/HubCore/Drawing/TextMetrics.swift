/// Deterministic text measurement and wrapping, shared by components (through the host) and renderers, so a
/// preferred size computed from text matches what the SVG and HTML outputs draw on every machine.
///
/// The model is a fixed-advance font: each character advances `0.55 × fontSize` (`0.6 ×` for weights ≥ 600),
/// a line is `1.25 × fontSize` high, and lines break greedily at spaces (a word wider than the line is cut).
/// As in a terminal, a wide character (CJK, Hangul, fullwidth forms, emoji) takes two advances and one that draws
/// nothing (a zero-width space or joiner, a soft hyphen) none: `cells`.
public enum TextMetrics {
    /// How many advances `character` takes: 2 for East Asian wide and fullwidth characters and emoji, 0 for
    /// characters that draw nothing, 1 for every other (a character with combining marks is one).
    public static func cells(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        let first = scalars.first!.value
        // A symbol shown as an emoji (a keycap 1️⃣, U+2764 U+FE0F) is as wide as one.
        let emoji = scalars.count > 1 && scalars.contains { $0.value == 0xFE0F }
        if first < 0x1100 { return first == 0xAD ? 0 : emoji ? 2 : 1 }
        switch first {
        case 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFE00...0xFE0F, 0xFEFF: return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F000...0x1FAFF, 0x20000...0x3FFFD:
            return 2
        // Symbols Unicode draws as emoji by default (East Asian Width "W"): ⌚ ⏰ ☔ ⚡ ✅ ❌ ⭐ …
        case 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE, 0x2614...0x2615,
            0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE,
            0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E,
            0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55:
            return 2
        default:
            return emoji ? 2 : 1
        }
    }

    /// The advances `text` takes (see `cells(_:)`): its length for ASCII without carriage returns.
    public static func cells<S: StringProtocol>(_ text: S) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) { return text.utf8.count }
        var total = 0
        for character in text { total += cells(character) }
        return total
    }

    /// Where the first `limit` advances of `text` end, and how many it holds; at least one character, so a wide
    /// one on a one-advance line still moves on.
    static func prefixEnd(_ text: Substring, cells limit: Int) -> (end: Substring.Index, cells: Int) {
        var end = text.startIndex
        var taken = 0
        while end < text.endIndex {
            let width = cells(text[end])
            if taken + width > limit && end > text.startIndex { break }
            taken += width
            end = text.index(after: end)
            if taken >= limit { break }
        }
        return (end, taken)
    }

    public static func advance(for style: TextStyle) -> Double { style.fontSize * (style.weight >= 600 ? 0.6 : 0.55) }
    public static func lineHeight(for style: TextStyle) -> Double { style.fontSize * 1.25 }

    /// The lines `text` is drawn in, wrapped to `maxWidth` (<= 0: no wrapping) and cut to the style's line
    /// limit (the last kept line ends with "…" when text was cut).
    public static func lines(_ text: String, style: TextStyle, maxWidth: Double) -> [String] {
        let advance = advance(for: style)
        let perLine = maxWidth > 0 ? max(1, Int(saturating: (maxWidth / advance).rounded(.down))) : Int.max
        // Most texts are one short line of printable ASCII with single spaces between words: that line as it is.
        if text.utf8.count <= perLine, isOneLine(text) { return [text] }
        var lines: [String] = []
        // Lengths are counted once per word and carried (counting Characters is linear: recounting a long word
        // for every line cut from it made one 1 MB word take a minute), and wrapping stops once the line limit is
        // known to be passed.
        let enough = style.lineLimit > 0 ? style.lineLimit + 1 : Int.max
        wrapping: for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            var currentCount = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = Substring(word)
                var wordCount = cells(word)
                while wordCount > perLine {  // a word longer than a line is cut
                    let (cut, taken) = prefixEnd(word, cells: perLine)
                    if cut == word.endIndex { break }  // one character wider than a line: a line of its own
                    if currentCount > 0 {
                        lines.append(current)
                        current = ""
                        currentCount = 0
                    }
                    lines.append(String(word[..<cut]))
                    word = word[cut...]
                    wordCount -= taken
                    if lines.count >= enough { break wrapping }
                }
                if currentCount == 0 {
                    current = String(word)
                    currentCount = wordCount
                } else if currentCount + 1 + wordCount <= perLine {
                    current += " " + word
                    currentCount += 1 + wordCount
                } else {
                    lines.append(current)
                    current = String(word)
                    currentCount = wordCount
                }
                if lines.count >= enough { break wrapping }
            }
            lines.append(current)
            if lines.count >= enough { break }
        }
        if style.lineLimit > 0, lines.count > style.lineLimit {
            lines = Array(lines.prefix(style.lineLimit))
            var last = lines[lines.count - 1]
            if perLine != Int.max, cells(last) >= perLine {
                let kept = Substring(last)
                last = perLine > 1 ? String(kept[..<prefixEnd(kept, cells: perLine - 1).end]) : ""
            }
            lines[lines.count - 1] = last + "…"
        }
        return lines
    }

    /// Printable ASCII without leading, trailing or doubled spaces: what wrapping would give back unchanged when
    /// it fits on a line (one character per byte).
    private static func isOneLine(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            var previous = UInt8(ascii: " ")
            for byte in bytes {
                guard byte >= 0x20, byte < 0x7F, byte != 0x20 || previous != 0x20 else { return false }
                previous = byte
            }
            return previous != 0x20 || bytes.isEmpty
        } ?? false
    }

    /// The size `text` takes drawn with `style` and wrapped to `maxWidth`.
    public static func measure(_ text: String, style: TextStyle, maxWidth: Double) -> Size {
        // Counting on the UTF-8 bytes gives the same size without building the lines (see measure(utf8:)).
        if let size = text.utf8.withContiguousStorageIfAvailable({ measure(utf8: $0, style: style, maxWidth: maxWidth) }
        ) {
            return size
        }
        return measureByLines(text, style: style, maxWidth: maxWidth)
    }

    /// `measure` computed from `lines` itself: the definition the faster paths must match.
    public static func measureByLines(_ text: String, style: TextStyle, maxWidth: Double) -> Size {
        let lines = lines(text, style: style, maxWidth: maxWidth)
        let widest = lines.map { cells($0) }.max() ?? 0
        let width = Double(widest) * advance(for: style)
        return Size(width: (width * 100).rounded(.up) / 100, height: Double(lines.count) * lineHeight(for: style))
    }

    /// `measure` on UTF-8 bytes (text from a C plugin, or a String's storage), the same result as
    /// `measureByLines` without making strings when the text
    /// is ASCII without carriage returns, where every byte is one character (a "\r\n" pair is one character).
    public static func measure(utf8 bytes: UnsafeBufferPointer<UInt8>, style: TextStyle, maxWidth: Double) -> Size {
        for byte in bytes where byte >= 0x80 || byte == 0x0D {
            return measureByLines(String(decoding: bytes, as: UTF8.self), style: style, maxWidth: maxWidth)
        }
        // `lines` with lengths only: the count of lines, the widest of all but the last kept line, and the
        // length of the last kept one (the line limit may cut it and add "…").
        let perLine = maxWidth > 0 ? max(1, Int(saturating: (maxWidth / advance(for: style)).rounded(.down))) : Int.max
        let limit = style.lineLimit > 0 ? style.lineLimit : Int.max
        var count = 0
        var widestBeforeLast = 0
        var lastKept = 0
        func emit(_ length: Int) {
            if count < limit - 1 { widestBeforeLast = max(widestBeforeLast, length) }
            if count == limit - 1 || limit == Int.max { lastKept = length }
            count += 1
        }
        var current = 0
        var word = 0
        func endWord() {
            guard word > 0 else { return }
            while word > perLine {
                if current > 0 {
                    emit(current)
                    current = 0
                }
                emit(perLine)
                word -= perLine
            }
            if current == 0 {
                current = word
            } else if current + 1 + word <= perLine {
                current += 1 + word
            } else {
                emit(current)
                current = word
            }
            word = 0
        }
        for byte in bytes {
            switch byte {
            case 0x20: endWord()
            case 0x0A:
                endWord()
                emit(current)
                current = 0
            default: word += 1
            }
        }
        endWord()
        emit(current)
        var widest = max(widestBeforeLast, lastKept)
        if count > limit {  // cut: the last kept line ends with "…"
            let last = perLine != Int.max && lastKept >= perLine ? perLine - 1 : lastKept
            widest = max(widestBeforeLast, last + 1)
        }
        let width = Double(widest) * advance(for: style)
        return Size(width: (width * 100).rounded(.up) / 100, height: Double(min(count, limit)) * lineHeight(for: style))
    }
}
