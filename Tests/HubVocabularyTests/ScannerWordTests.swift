import HubVocabulary
import Testing

/// The scanner reads keys and strings eight bytes at a time where enough input follows. These cases put each
/// kind of byte that ends a plain run (a quote, an escape, a control character) and a multi-byte character at
/// every offset of keys and strings 0–20 bytes long, at every distance from the end of the input, and check
/// the result against what the JSON says by construction.
@Suite struct ScannerWordTests {
    enum Special: CaseIterable {
        case escapedQuote, escapedBackslash, unicodeEscape, twoByteCharacter, controlCharacter

        /// The JSON text of the special character and what it decodes to (nil: the text is not JSON).
        var json: (text: String, value: String?) {
            switch self {
            case .escapedQuote: return (#"\""#, "\"")
            case .escapedBackslash: return (#"\\"#, "\\")
            case .unicodeEscape: return (#"\u00e9"#, "é")
            case .twoByteCharacter: return ("é", "é")
            case .controlCharacter: return ("\u{01}", nil)
            }
        }
    }

    /// `length` plain letters with `special` at `offset` (none when offset is nil): the JSON text and the value.
    static func text(length: Int, special: Special?, at offset: Int?) -> (json: String, value: String?) {
        var json = ""
        var value: String? = ""
        for i in 0..<length {
            if let special, i == offset {
                json += special.json.text
                value = special.json.value.flatMap { v in value.map { $0 + v } }
            } else {
                let letter = String(UnicodeScalar(UInt8(ascii: "a") + UInt8(i % 26)))
                json += letter
                value = value.map { $0 + letter }
            }
        }
        return (json, value)
    }

    @Test func keysAndStringsAtEveryOffsetAndDistanceFromTheEnd() throws {
        var checked = 0
        for length in 0...20 {
            for special in [nil] + Special.allCases {
                for offset in special == nil ? [nil] : Array(0..<length).map(Optional.some) {
                    let (json, value) = Self.text(length: length, special: special, at: offset)
                    for padding in 0...17 {
                        // The same text as a key (twice, so the second read comes from the key cache) and as a
                        // string value; the padding moves the end of the input.
                        let document =
                            "{\"\(json)\": \"\(json)\", \"n\": {\"\(json)\": 1}}"
                            + String(repeating: " ", count: padding)
                        let parsed = try? JSONValue.parse(document)
                        guard let value else {
                            #expect(parsed == nil, "\(document.debugDescription) should not parse")
                            continue
                        }
                        #expect(parsed?.objectValue?.keys.first == value, "\(document.debugDescription)")
                        #expect(parsed?[value]?.stringValue == value, "\(document.debugDescription)")
                        #expect(parsed?["n"]?.objectValue?.keys.first == value, "\(document.debugDescription)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 15_000)
    }

    @Test func keysThatShareTheirFirstWordsAreToldApart() throws {
        // 15 bytes is the longest cached key; 16 and more are read every time. Keys equal in their first 8 or
        // 15 bytes must still come back as themselves.
        let keys = [
            "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnp", "abcdefghijklmnop",
            "abcdefghijklmnopq", "abcdefghijklmnoq", "", "a",
        ]
        let document = "[" + (keys + keys).map { "{\"\($0)\": \"\($0)\"}" }.joined(separator: ", ") + "]"
        let parsed = try JSONValue.parse(document)
        for (i, key) in (keys + keys).enumerated() {
            #expect(parsed[i]?.objectValue?.keys == [key])
            #expect(parsed[i]?[key]?.stringValue == key)
        }
    }
}

/// `nextKeySymbol` numbers a key by what it says, however it is spelled: cached short keys, escaped keys, keys
/// past the 16-byte cache, the empty key, and keys that are no symbol. Each key comes twice, so the second reads
/// the scanner's key cache.
@Suite struct KeySymbolTests {
    @Test func keysAreNumberedByWhatTheySay() throws {
        let symbols = ["id", "a-key-longer-than-sixteen-bytes", "", "title"]
        let keys = [
            (#""id""#, 0), (#""\u0069d""#, 0), (#""a-key-longer-than-sixteen-bytes""#, 1), (#""""#, 2),
            (#""other""#, JSONScanner.otherKey), (#""titl\u0065""#, 3), (#""title""#, 3),
            (#""i""#, JSONScanner.otherKey),
        ]
        let object =
            "{" + (keys + keys).enumerated().map { "\($0.element.0): \($0.offset)" }.joined(separator: ", ") + "}"
        var scanner = JSONScanner(Array(object.utf8), keySymbols: symbols)
        #expect(try scanner.enterObjectIfObject())
        var isFirst = true
        var read: [Int] = []
        var offsets: [Int] = []
        while let symbol = try scanner.nextKeySymbol(isFirst: &isFirst) {
            read.append(symbol)
            offsets.append(scanner.lastKeyOffset)
            #expect(try scanner.readNumber() == Double(read.count - 1))
        }
        #expect(read == (keys + keys).map(\.1))
        // Each offset is its key's opening quote.
        #expect(offsets.allSatisfy { Array(object.utf8)[$0] == UInt8(ascii: "\"") })
        let atEnd = scanner.isAtEnd
        #expect(atEnd)

        // The string form of the same pull loop reads each key as it says.
        var plain = JSONScanner(Array(object.utf8))
        #expect(try plain.enterObjectIfObject())
        isFirst = true
        var keysRead: [String] = []
        while let key = try plain.nextKey(isFirst: &isFirst) {
            keysRead.append(key)
            _ = try plain.readNumber()
        }
        let said = ["id", "id", "a-key-longer-than-sixteen-bytes", "", "other", "title", "title", "i"]
        #expect(keysRead == said + said)
    }
}
