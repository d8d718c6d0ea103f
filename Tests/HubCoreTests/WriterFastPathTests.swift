import Foundation
import Testing

@testable import HubCore

/// The fast paths the 100k-component writers and decoder take (issue 14) must give exactly what the general
/// code gives: numbers, printability, wrapping, and same-id merging at scale.
struct WriterFastPathTests {
    static func written(_ body: (inout ByteWriter) -> Void) -> String { ByteWriter.string(body) }

    /// What `write(number:)` wrote before its fast paths: an integer without a fraction, else Swift's shortest
    /// round-trip digits.
    static func generalNumber(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int(n)) }
        return String(n)
    }

    @Test func hundredthsAreTheShortestDigitsOfTheDouble() {
        var cents: [Int] = [0, 1, -1, 5, 10, 50, 99, 100, 101, 110, 2740, -2740, 12_345, 999_999, -5]
        cents += [1_000_000_000_000, 123_456_789_012_345, -999_999_999_999_999, 1_000_000_000_000_000]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { cents.append(Int.random(in: -10_000_000...10_000_000, using: &generator)) }
        for _ in 0..<2_000 { cents.append(Int.random(in: -(1 << 50)...(1 << 50), using: &generator)) }
        for value in cents {
            let fast = Self.written { $0.write(hundredths: value) }
            #expect(fast == Self.generalNumber(Double(value) / 100), "\(value)")
        }
    }

    /// Numbers (JSON) and compact numbers (text) take the hundredths path for two-decimal values only: others,
    /// like 0.1 + 0.2 or a third, keep all their digits.
    @Test func numbersMatchTheGeneralDigits() {
        var values: [Double] = [0, -0.0, 15, 15.5, -3.25, 27.4, 0.01, -0.05, 0.1 + 0.2, 1.0 / 3, 43.125, 1e-7]
        values += [
            99_999_999_999.99, 1e13 - 0.01, 1e13 + 0.5, 1e15, 1e16, 123_456.789, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            values.append(Double(Int.random(in: -100_000_000...100_000_000, using: &generator)) / 100)
            values.append(Double.random(in: -1e6...1e6, using: &generator))
            values.append(Double(Int.random(in: -100_000...100_000, using: &generator)) / 8)
        }
        for value in values {
            #expect(Self.written { $0.write(number: value) } == Self.generalNumber(value), "\(value)")
            #expect(Self.written { $0.write(compact: value) } == value.compact, "\(value)")
        }
    }

    @Test func compactNumbersMatchDoubleCompact() {
        for value in [0, -0.0, 15, 15.5, -3.25, 1e15, 1e16, 0.1, .nan, .infinity, -.infinity, 123_456.789] {
            #expect(Self.written { $0.write(compact: value) } == value.compact, "\(value)")
        }
    }

    /// Runs of every length up to past the word copies, landing at every offset of a small buffer (so some are
    /// flushed first), come out whole and in order.
    @Test func byteRunsOfEveryLengthAreCopiedWhole() {
        let source = (0..<64).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        var expected: [UInt8] = []
        var out: [UInt8] = []
        source.withUnsafeBufferPointer { all in
            ByteWriter.stream(capacity: 37, to: { out.append(contentsOf: $0) }) { w in
                for length in 0...40 {
                    for start in [0, 1, 7, 24 - min(length, 24)] {
                        let run = UnsafeBufferPointer(rebasing: all[start..<(start + length)])
                        w.bytes(run)
                        expected += run
                        w.byte(UInt8(ascii: "|"))
                        expected.append(UInt8(ascii: "|"))
                    }
                }
            }
        }
        #expect(out == expected)
    }

    /// The JSON string escape, whose plain text is found a word at a time, against the scalar-by-scalar escape of
    /// `JSONValue` (without its quotes): every escaped character at every offset of strings 0–20 bytes long, and
    /// multi-byte text.
    @Test func jsonStringsEscapeAsTheReference() {
        func reference(_ text: String) -> String {
            var quoted = ""
            JSONValue.writeEscaped(text, to: &quoted)
            return String(quoted.dropFirst().dropLast())
        }
        var texts = ["", "é", "plain text of thirty-one bytes.", "naïve café ✓ 🎧"]
        for length in 0...20 {
            for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é"] {
                for offset in 0...length {
                    var text = String(repeating: "x", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: offset))
                    texts.append(text)
                }
            }
        }
        for text in texts {
            #expect(Self.written { $0.writeJSONStringContents(text) } == reference(text), "\(text.debugDescription)")
        }
    }

    /// The definition `isPrintable` had before its vectorized pass.
    static func referencePrintable(_ text: String) -> Bool {
        var previousWasE2 = false
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || byte == 0xC2 { return false }
            if previousWasE2 && (byte == 0x80 || byte == 0x81) { return false }
            previousWasE2 = byte == 0xE2
        }
        return true
    }

    @Test(arguments: [
        "", "plain", "Item 12345", "a\tb", "line\nbreak", "del\u{7F}", "c1 \u{85} next", "nbsp\u{A0}", "→ arrow",
        "375×667", "ls\u{2028}ps\u{2029}", "lrm\u{200E}", "rlo\u{202E}x", "iso\u{2066}", "ünïcödé", "emoji 👍🏽",
        "\u{E2}\u{80}", "€ sign", "\u{1B}[31mred", String(repeating: "long text ", count: 300),
    ])
    func printabilityMatchesTheByteRule(_ text: String) {
        #expect(TerminalText.isPrintable(text) == Self.referencePrintable(text))
    }

    @Test func oneLineTextsWrapAsTheGeneralRuleDoes() {
        let style = TextStyle(fontSize: 13)
        for text in ["", "a", "Item 1", "a  b", " a", "a ", "two words", "tab\tinside", "é accent", "x y z"] {
            let lines = TextMetrics.lines(text, style: style, maxWidth: 1000)
            let words = text.split(separator: " ").joined(separator: " ")
            #expect(lines == [words], "\(text)")
        }
        // Too long for one line: wrapped, not returned whole.
        #expect(TextMetrics.lines("aaaa bbbb", style: style, maxWidth: TextMetrics.advance(for: style) * 5).count == 2)
    }

    /// A word of a million characters (a view from a server) is cut into lines once, up to the line limit.
    @Test func aHugeWordIsCutToTheLineLimit() {
        let style = TextStyle(fontSize: 10, lineLimit: 2)
        let width = TextMetrics.advance(for: style) * 8
        let lines = TextMetrics.lines(String(repeating: "é", count: 1 << 20), style: style, maxWidth: width)
        #expect(lines == [String(repeating: "é", count: 8), String(repeating: "é", count: 7) + "…"])
        let words = String(repeating: "word ", count: 1 << 18)
        #expect(TextMetrics.lines(words, style: style, maxWidth: width) == ["word", "word…"])
        #expect(TextMetrics.measureByLines(words, style: style, maxWidth: width).height == 2 * 12.5)
        let unlimited = TextStyle(fontSize: 10)
        #expect(TextMetrics.lines(String(repeating: "a", count: 80), style: unlimited, maxWidth: width).count == 10)
    }

    /// Same ids far apart merge into the first entry's position, across every growth of the id table.
    @Test func sameIDsMergeAcrossThousandsOfModels() throws {
        let count = 5_000
        var entries = (0..<count).map { #"{"id": "m\#($0)", "text": {"title": "first \#($0)"}}"# }
        for i in stride(from: 0, to: count, by: 7) {
            entries.append(#"{"id": "m\#(i)", "text": {"subtitle": "again"}}"#)
        }
        let result = try ViewModelDecoder().decode("[" + entries.joined(separator: ",") + "]")
        let body = result.viewModel.body
        #expect(body.count == count)
        for (index, model) in body.enumerated() {
            #expect(model.identifier == "m\(index)")
            #expect(model.index == index)
            #expect(model.title == "first \(index)")
            #expect(model.subtitle == (index % 7 == 0 ? "again" : nil))
        }
    }
}
