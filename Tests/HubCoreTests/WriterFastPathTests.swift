import Foundation
import Testing

@testable import HubCore

/// The fast paths the 100k-component writers and decoder take (issue 14) must give exactly what the general
/// code gives: numbers, printability, wrapping, and same-id merging at scale.
struct WriterFastPathTests {
    static func written(_ body: (inout ByteWriter) -> Void) -> String { ByteWriter.string(body) }

    @Test func hundredthsAreTheShortestDigitsOfTheDouble() {
        var cents: [Int] = [0, 1, -1, 5, 10, 50, 99, 100, 101, 110, 2740, -2740, 12_345, 999_999, -5]
        cents += [1_000_000_000_000, 123_456_789_012_345, -999_999_999_999_999, 1_000_000_000_000_000]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { cents.append(Int.random(in: -10_000_000...10_000_000, using: &generator)) }
        for _ in 0..<2_000 { cents.append(Int.random(in: -(1 << 50)...(1 << 50), using: &generator)) }
        for value in cents {
            let fast = Self.written { $0.write(hundredths: value) }
            let general = Self.written { $0.write(number: Double(value) / 100) }
            #expect(fast == general, "\(value)")
        }
    }

    @Test func compactNumbersMatchDoubleCompact() {
        for value in [0, -0.0, 15, 15.5, -3.25, 1e15, 1e16, 0.1, .nan, .infinity, -.infinity, 123_456.789] {
            #expect(Self.written { $0.write(compact: value) } == value.compact, "\(value)")
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
