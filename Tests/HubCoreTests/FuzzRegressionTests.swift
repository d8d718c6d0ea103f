import Foundation
import HubCore
import Testing

/// Inputs that crashed hubhost once (found by fuzzing and by hand), kept so they never crash it again.
@Suite struct FuzzRegressionTests {
    /// Each used to trap converting a Double to Int (resize of 1e20 and wider: 18 of 2,500 fuzzed scripts).
    @Test(arguments: [
        #"{"event":"resize","width":1e300,"height":736}"#,
        #"{"event":"resize","width":1e20,"height":736}"#,
        #"{"event":"resize","width":375,"height":1e300}"#,
        #"{"event":"scroll","y":1e300}"#,
        #"{"event":"advance","seconds":1e300}"#,
        #"{"event":"tap","point":{"x":1e300,"y":0}}"#,
        #"{"event":"tap","indexPath":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}"#,
    ])
    func outOfRangeNumbersAreRefusedWithLineAndKey(_ line: String) throws {
        #expect(throws: EventScriptError.self) { try EventScript.parse(line, file: "s.jsonl", number: 3) }
        do { _ = try EventScript.parse(line, file: "s.jsonl", number: 3) } catch let error as EventScriptError {
            #expect(error.description.hasPrefix("s.jsonl:3: "))
            #expect(
                error.reason.contains("out of range") || error.reason.contains("more than")
                    || error.reason.contains("non-negative integer"), "\(error)")
        }
    }

    @Test func aResizeAtTheLimitStillApplies() throws {
        let event = try EventScript.parse(#"{"event":"resize","width":100000,"height":1}"#, file: "s", number: 1)
        #expect(event == .resize(Size(width: 100_000, height: 1)))
    }

    /// `render --width 1e300` trapped in text layout; the layout itself must be total too.
    @Test func textLayoutIsTotalForAnyWidth() {
        for width in [Double.infinity, 1e300, .nan, -1e300, .leastNonzeroMagnitude, 0] {
            let lines = TextMetrics.lines("a few words of text", style: TextStyle(), maxWidth: width)
            #expect(!lines.isEmpty)
            _ = TextMetrics.measure("a few words of text", style: TextStyle(), maxWidth: width)
        }
    }

    /// A script with invalid UTF-8 was refused as "the file isn't in the correct format", with no line.
    @Test func invalidUTF8IsLocatedByLineAndByte() {
        let bytes =
            Array(#"{"event":"advance","seconds":1}"#.utf8) + [0x0A] + Array(#"{"event":"scroll","y":1"#.utf8)
            + [0xFF] + Array("}".utf8)
        let lines = EventScript.lines(of: bytes)
        #expect(lines.map(\.number) == [1, 2])
        #expect(lines[0].invalidUTF8At == nil)
        #expect(lines[1].invalidUTF8At == 24)  // 23 bytes of `{"event":"scroll","y":1` come first
    }

    @Test func invalidUTF8InAViewIsRefusedWithLineAndColumn() {
        let bytes = Array("{\"body\":[\n{\"id\":\"a".utf8) + [0xC3] + Array("\"}]}".utf8)
        #expect(throws: DecodeFailure.self) { try ViewModelDecoder(file: "v.json").decode(bytes: bytes) }
        do { _ = try ViewModelDecoder(file: "v.json").decode(bytes: bytes) } catch let failure as DecodeFailure {
            #expect(failure.description == "v.json: not valid JSON: line 2, column 9: invalid UTF-8")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// A view could forge hubhost's own messages with a newline and ANSI escapes in a value it echoes.
    @Test func echoedValuesAreEscapedAndBounded() {
        let forged = "x.png\n\u{1B}[31mhome.json: $.body[7]: fake\u{202E}"
        #expect(TerminalText.escaped(forged) == #"x.png\n\u{1b}[31mhome.json: $.body[7]: fake\u{202e}"#)
        let huge = String(repeating: "a\n", count: 5_000_000)
        let echoed = TerminalText.quoted(huge)
        #expect(echoed.utf8.count < 500 && !echoed.contains("\n"))
        #expect(echoed.hasSuffix("… (9999800 more bytes)\""))
        let error = EventScriptError(file: "s", line: 1, reason: "bad \(forged)")
        #expect(!error.description.contains("\n") && !error.description.contains("\u{1B}"))
    }
}
