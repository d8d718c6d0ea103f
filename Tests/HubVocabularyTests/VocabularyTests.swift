import HubVocabulary
import Testing

/// The vocabulary the host and the SDK share: one JSON parser, one colour, one set of traits.
@Suite struct VocabularyTests {
    @Test func jsonKeepsKeyOrderAndRoundTrips() throws {
        let value = try JSONValue.parse(#" {"z": 1, "a": [true, null, "x\ny"], "m": {"k": -2.5}} "#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value["a"]?[0]?.boolValue == true)
        #expect(value["a"]?[2]?.stringValue == "x\ny")
        #expect(value["m"]?["k"]?.numberValue == -2.5)
        #expect(value["a"]?[9] == nil)
        #expect(value.jsonText == #"{"z":1,"a":[true,null,"x\ny"],"m":{"k":-2.5}}"#)
        #expect(try JSONValue.parse(value.jsonText) == value)
    }

    @Test func objectsSmallAndLargeKeepOrderFindKeysAndCompareByContent() {
        // Past eight keys an object also indexes its keys; both forms must read, replace and remove alike.
        for size in [3, 8, 9, 40] {
            var object = JSONObject()
            for i in 0..<size { object["k\(i)"] = .number(Double(i)) }
            object["k1"] = .string("replaced")  // keeps its place
            #expect(object.count == size)
            #expect(object.keys == (0..<size).map { "k\($0)" })
            #expect(object["k1"] == .string("replaced"))
            #expect(object["k\(size - 1)"] == .number(Double(size - 1)))
            #expect(object["missing"] == nil)
            object["k0"] = nil
            #expect(object.keys.first == "k1" && object.count == size - 1 && object["k0"] == nil)
            #expect(object["k\(size - 1)"] == .number(Double(size - 1)), "found after a removal")
            #expect(Array(object.map(\.key)) == object.keys)

            // Equal content compares equal and hashes alike however it was built; order matters, as in output.
            var rebuilt = JSONObject()
            for (key, value) in object { rebuilt[key] = value }
            #expect(rebuilt == object && rebuilt.hashValue == object.hashValue)
            var reordered = JSONObject()
            for (key, value) in object.reversed() { reordered[key] = value }
            #expect(size < 3 || reordered != object)
        }
        // An object that grew past the index and shrank back equals one built small.
        var grown = JSONObject((0..<12).map { ("k\($0)", .bool(true)) })
        for i in 2..<12 { grown["k\(i)"] = nil }
        #expect(grown == JSONObject([("k0", .bool(true)), ("k1", .bool(true))]))
    }

    @Test(arguments: [
        ("{\"a\": }", "line 1, column 7"),
        ("[1,\n 2,\n x]", "line 3, column 2"),
        ("{} {}", "unexpected data after the JSON value"),
        ("\"\\u12\"", "line 1, column"),
    ])
    func jsonErrorsSayWhere(text: String, expected: String) {
        #expect(JSONValue(parsing: text) == nil)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
        do {
            _ = try JSONValue.parse(text)
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONValue(parsing: deep) == nil)
    }

    @Test func controlCharactersAreEscapedWhenWritten() {
        #expect(JSONValue.string("a\u{1}b").jsonText == #""a\u0001b""#)
    }

    @Test func colours() {
        #expect(Color(hex: "#FF2D55") == Color(rgba: 0xFF2D_55FF))
        #expect(Color(hex: "34C75980")?.alpha == 0x80)
        #expect(Color(hex: "#12345") == nil)
        #expect(Color(hex: "#GG0000") == nil)
        #expect(Color(rgba: 0x0102_03FF).hexRGB == "#010203")
        #expect(Color(rgba: 0x0000_0080).opacity == Double(0x80) / 255)
        #expect(Color(red: 1, green: 2, blue: 3).description == "#010203ff")
    }

    @Test func traitListsAreTrimmedAndDeduplicated() {
        #expect(LayoutTrait.parseList(" compactWidth,stackable , ,\tstackable") == [.compactWidth, .stackable])
        #expect(LayoutTrait(rawValue: "fullWidth") == .fullWidth)
        #expect(Set<LayoutTrait>([.stackable, .centered]).sortedNames == ["centered", "stackable"])
    }

    @Test func textStyleDefaultsReplaceNonsense() {
        let style = TextStyle(fontSize: -3, weight: 0, lineLimit: -1)
        #expect(style.fontSize == 14 && style.weight == 400 && style.lineLimit == 0)
        #expect(TextStyle.title.with(color: .red).color == .red)
        #expect(TextStyle.Alignment.center == TextAlignment.center)
    }

    @Test func geometry() {
        let r = Rect(size: Size(width: 10, height: 4)).insetBy(dx: 2, dy: 3)
        #expect(r == Rect(x: 2, y: 3, width: 6, height: 0))
        #expect(Rect(x: 0, y: 0, width: 10, height: 10).contains(Point(x: 9.9, y: 0)))
        #expect(!Rect(x: 0, y: 0, width: 10, height: 10).contains(Point(x: 10, y: 0)))
        #expect(Size(width: 15, height: 2.5).description == "15×2.5")
    }
}

/// Object keys come from a small cache of recent keys (issue 14): a key must always read as its own bytes,
/// whatever was cached before it.
@Suite struct JSONKeyCacheTests {
    @Test func keysReadAsTheirBytesWhateverCameBefore() throws {
        var keys = ["", "a", "id", "text", "title", "exactly15bytes!", "sixteen-bytes-ok", "seventeen-bytes-k"]
        keys += ["é", "ключ", "k\\u0065y", "quote\\\"d", "tab\\t", "💡"]
        keys += (0..<300).map { "key\($0)" }
        var text = "["
        for round in 0..<3 {
            for (index, key) in keys.enumerated() {
                if round > 0 || index > 0 { text += "," }
                text += "{\"\(key)\": \(index)}"
            }
        }
        text += "]"
        let parsed = try JSONValue.parse(text)
        let decodedKeys = keys.map { key in (try? JSONValue.parse("\"\(key)\""))?.stringValue ?? "?" }
        for round in 0..<3 {
            for (index, key) in decodedKeys.enumerated() {
                let object = parsed[round * keys.count + index]?.objectValue
                #expect(object?.keys == [key], "round \(round), key \(key)")
                #expect(object?[key]?.numberValue == Double(index))
            }
        }
    }
}
