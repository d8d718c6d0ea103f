import HubCore
import Testing

/// `TextMetrics.measure(utf8:)` (what the C bridge's `measure_text` uses) and `measure(_:)` (which counts on a
/// String's UTF-8 storage) must give exactly the size of the lines the renderers draw (`measureByLines`).
struct TextMetricsUTF8Tests {
    static func measureBytes(_ text: String, _ style: TextStyle, _ maxWidth: Double) -> Size {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer {
            TextMetrics.measure(utf8: UnsafeBufferPointer($0), style: style, maxWidth: maxWidth)
        }
    }

    static let styles = [
        TextStyle(fontSize: 20, weight: 700, lineLimit: 2), TextStyle(fontSize: 12, weight: 600, lineLimit: 1),
        TextStyle(fontSize: 13), TextStyle(fontSize: 10, lineLimit: 3),
    ]
    static let widths: [Double] = [0, -5, 1, 7, 30, 55.5, 120, 343, 1000]

    @Test(arguments: [
        "", " ", "  ", "a", "Item 12345", "hello world", "  leading and trailing  ", "a\nb", "\n", "\n\n",
        "one\n\ntwo three", "averyveryveryverylongwordthatmustbecut and more", "x y z w v u t s r q p",
        "tab\there", "ünïcödé wörds här", "emoji 👍🏽 text", "cr\r\nlf", "lone\rcr", "é\u{301} combining",
        String(repeating: "word ", count: 40), String(repeating: "abcdefghij", count: 12),
    ])
    func agreesWithStringMeasure(_ text: String) {
        for style in Self.styles {
            for width in Self.widths {
                let reference = TextMetrics.measureByLines(text, style: style, maxWidth: width)
                #expect(
                    Self.measureBytes(text, style, width) == reference,
                    "\(text.debugDescription) at \(width), line limit \(style.lineLimit)")
                #expect(TextMetrics.measure(text, style: style, maxWidth: width) == reference)
            }
        }
    }

    @Test func agreesOnGeneratedASCII() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return seed
        }
        let alphabet = Array("ab cd\n  efg h".utf8)
        for _ in 0..<2000 {
            let length = Int(next() % 60)
            let text = String(
                decoding: (0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }, as: UTF8.self)
            let style = Self.styles[Int(next() % UInt64(Self.styles.count))]
            let width = Self.widths[Int(next() % UInt64(Self.widths.count))]
            let reference = TextMetrics.measureByLines(text, style: style, maxWidth: width)
            #expect(
                Self.measureBytes(text, style, width) == reference,
                "\(text.debugDescription) at \(width), line limit \(style.lineLimit)")
            #expect(TextMetrics.measure(text, style: style, maxWidth: width) == reference)
        }
    }
}

/// Wide and invisible characters, measured as a terminal lays them out: CJK, Hangul and emoji take two advances,
/// a zero-width space or soft hyphen none, so a CJK title is not measured half as wide as it is drawn.
struct TextMetricsCellTests {
    @Test func wideAndInvisibleCharacters() {
        #expect(TextMetrics.cells("中文标题") == 8)
        #expect(TextMetrics.cells("한국어") == 6)
        #expect(TextMetrics.cells("👨‍👩‍👧‍👦🇯🇵") == 4)
        #expect(TextMetrics.cells("❤️") == 2)
        #expect(TextMetrics.cells("✅⭐⚡") == 6)
        #expect(TextMetrics.cells("1️⃣") == 2)
        #expect(TextMetrics.cells("\u{FE0F}\u{202E}\u{2028}") == 0)
        #expect(TextMetrics.cells("zero\u{200B}width\u{00AD}") == 9)
        #expect(TextMetrics.cells("é\u{301}x") == 2)
        #expect(TextMetrics.cells("cr\r\nlf") == 5)
        let style = TextStyle(fontSize: 20)
        #expect(
            TextMetrics.measure("中中", style: style, maxWidth: 0).width
                == TextMetrics.measure("xxxx", style: style, maxWidth: 0).width)
    }

    /// A word of wide characters is cut at the line's advances, never in the middle of a character, and a line of
    /// one advance still takes one wide character (wrapping always moves on).
    @Test func wideWordsAreCutByAdvances() {
        let style = TextStyle(fontSize: 10)
        let advance = TextMetrics.advance(for: style)
        #expect(TextMetrics.lines("中文标题测试", style: style, maxWidth: advance * 5) == ["中文", "标题", "测试"])
        #expect(TextMetrics.lines("中文", style: style, maxWidth: advance) == ["中", "文"])
        #expect(
            TextMetrics.lines("中文标题测试", style: TextStyle(fontSize: 10, lineLimit: 1), maxWidth: advance * 5)
                == ["中文…"])
    }
}
