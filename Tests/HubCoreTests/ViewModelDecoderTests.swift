import Testing

@testable import HubCore

@Suite struct ViewModelDecoderTests {
    func decode(_ json: String, file: String = "home.json", maxIssues: Int = 100) throws -> DecodeResult {
        try ViewModelDecoder(file: file, maxIssues: maxIssues).decode(json)
    }

    @Test func decodesEveryKeyOfTheSchema() throws {
        let json = """
            {"id": "home", "title": "Home", "custom": {"theme": "dark"},
             "header": {"component": {"id": "demo:header", "category": "header"}, "text": {"title": "Hi"}},
             "body": [{
                "id": "a", "group": "g1",
                "component": {"id": "demo:card", "category": "card"},
                "text": {"title": "T", "subtitle": "S", "accessory": "A", "description": "D"},
                "images": {"main": {"uri": "https://x/y.png", "placeholder": "album"},
                           "background": {"local": "bg", "custom": {"tint": 1}},
                           "custom": {"avatar": {"uri": "file:a.png"}, "bad": 3}},
                "target": {"uri": "spotify:album:1", "actions": ["demo:play", "demo:play", "demo:like"],
                           "view": {"title": "Album"}, "custom": {"k": true}},
                "metadata": {"m": 1}, "logging": {"l": "x"}, "custom": {"c": [1, 2]},
                "children": [{"id": "c0", "component": {"id": "demo:row"}}, {"text": {"title": "no id"}}]
             }],
             "overlays": [{"id": "o", "component": {"id": "demo:badge"}}]}
            """
        let result = try decode(json)
        let vm = result.viewModel
        #expect(vm.identifier == "home")
        #expect(vm.title == "Home")
        #expect(vm.custom?["theme"] == .string("dark"))
        #expect(vm.header?.identifier == "header")
        #expect(vm.header?.type == .header)
        #expect(vm.header?.componentIdentifier == ComponentIdentifier(namespace: "demo", name: "header"))
        let a = try #require(vm.body.first)
        #expect(a.identifier == "a" && a.groupIdentifier == "g1" && a.componentCategory == "card")
        #expect(a.componentIdentifier.description == "demo:card")
        #expect([a.title, a.subtitle, a.accessoryTitle, a.descriptionText] == ["T", "S", "A", "D"])
        #expect(a.mainImage == ImageData(kind: .main, uri: "https://x/y.png", placeholder: "album"))
        #expect(a.backgroundImage?.local == "bg")
        #expect(a.backgroundImage?.custom?["tint"] == .number(1))
        #expect(a.customImages["avatar"]?.uri == "file:a.png")
        #expect(a.customImages["avatar"]?.identifier == "avatar")
        #expect(a.customImages["bad"] == nil)
        #expect(a.target?.uri == "spotify:album:1")
        #expect(a.target?.actions.map(\.description) == ["demo:play", "demo:like"])
        #expect(a.target?.initialViewModel?["title"] == .string("Album"))
        #expect(a.target?.custom?["k"] == .bool(true))
        #expect(a.metadata?["m"] == .number(1) && a.logging?["l"] == .string("x"))
        #expect(a.custom?["c"] == .array([.number(1), .number(2)]))
        #expect(a.children.map(\.identifier) == ["c0", "UnknownComponent:0"])
        #expect(a.children[1].indexPath == [0, 1])
        #expect(a.children[1].parent === a)
        #expect(a.children[0].componentIdentifier.description == "demo:row")
        // A child without a component id gets Hub's defaults.
        #expect(a.children[1].componentIdentifier.description == "default:row")
        #expect(vm.overlays.first?.type == .overlay)
        // Only the non-object custom image is reported.
        #expect(
            result.issues.map(\.description) == ["home.json: $.body[0].images.custom.bad: expected an object, found 3"])
    }

    @Test func reportsWrongTypesWithTheirPathAndGoesOn() throws {
        let json = """
            {"body": [
              {"id": "0"}, {"id": "1"}, {"id": "2"},
              {"id": "3", "component": {"id": 42}, "text": {"title": ["x"], "subtitle": "ok"}},
              {"id": "4", "metadata": "nope", "children": {"a": 1}, "target": {"actions": "demo:x"}},
              "just a string"
            ], "title": 7, "overlays": {}}
            """
        let result = try decode(json)
        #expect(
            result.issues.map(\.description) == [
                "home.json: $.body[3].component.id: expected a string, found 42",
                "home.json: $.body[3].text.title: expected a string, found an array",
                "home.json: $.body[4].metadata: expected an object, found \"nope\"",
                "home.json: $.body[4].children: expected an array, found an object",
                "home.json: $.body[4].target.actions: expected an array, found \"demo:x\"",
                "home.json: $.body[5]: expected an object, found \"just a string\"",
                "home.json: $.title: expected a string, found 7",
                "home.json: $.overlays: expected an array, found an object",
            ])
        // What was valid is kept.
        #expect(result.viewModel.body.map(\.identifier) == ["0", "1", "2", "3", "4"])
        #expect(result.viewModel.body[3].subtitle == "ok")
        #expect(result.viewModel.body[3].componentIdentifier.description == "default:row")
    }

    /// A path names its keys as the document spells them, read again from the bytes when an issue is reported:
    /// escaped keys, keys that need quoting, keys past the 16-byte word reads, and whitespace around them.
    /// A number beyond a double's range reaches plugins as null (JSON has no infinity): said, with where it is.
    @Test func numbersOutOfRangeInCustomDataAreReported() throws {
        let result = try decode(#"{"body": [{"custom": {"height": 1e999, "list": [1, -1e400], "ok": 1e308}}]}"#)
        #expect(
            result.issues.map(\.description).sorted() == [
                "home.json: $.body[0].custom: height is a number out of range (beyond ±1.8e308): read as null",
                "home.json: $.body[0].custom: list[1] is a number out of range (beyond ±1.8e308): read as null",
            ])
        // Where a string was expected, said as what it was (it read "found inf").
        let id = try decode(#"{"body": [{"id": 1e400}]}"#)
        #expect(
            id.issues.map(\.description) == [
                "home.json: $.body[0].id: expected a string, found a number out of range (beyond ±1.8e308)"
            ])
    }

    @Test func pathKeysAreReadBackFromTheDocument() throws {
        let json = #"""
            { "body" : [ {"id": "a", "te\u0078t": {"title": 1},
              "images": {"custom": {"my \"big\" image": 2, "a-key-longer-than-sixteen-bytes": {"uri": 3}}}},
              {"id": "b", "target":{ "uri" :4}} ] }
            """#
        let result = try decode(json)
        #expect(
            result.issues.map(\.description) == [
                "home.json: $.body[0].text.title: expected a string, found 1",
                #"home.json: $.body[0].images.custom["my \"big\" image"]: expected an object, found 2"#,
                #"home.json: $.body[0].images.custom["a-key-longer-than-sixteen-bytes"].uri: expected a string, found 3"#,
                "home.json: $.body[1].target.uri: expected a string, found 4",
            ])
    }

    @Test func invalidActionIdentifiersAreReportedAndDropped() throws {
        let result = try decode(#"[{"id": "x", "target": {"actions": ["noColon", "a:b:c", "ns:play", 5]}}]"#)
        #expect(
            result.issues.map(\.description) == [
                #"home.json: $[0].target.actions[0]: "noColon" is not an action identifier ("namespace:name")"#,
                #"home.json: $[0].target.actions[1]: "a:b:c" is not an action identifier ("namespace:name")"#,
                "home.json: $[0].target.actions[3]: expected a string, found 5",
            ])
        #expect(result.viewModel.body[0].target?.actions == [ComponentIdentifier(namespace: "ns", name: "play")])
    }

    @Test func anIdUsedTwiceMergesAsInHubAndIsNotedNotReported() throws {
        let result = try decode(
            #"{"body": [{"id": "a", "text": {"title": "one"}}, {"id": "b"}, {"id": "a", "text": {"subtitle": "two"}}]}"#
        )
        #expect(result.issues.isEmpty)
        #expect(result.viewModel.body.map(\.identifier) == ["a", "b"])
        #expect(result.viewModel.body[0].title == "one" && result.viewModel.body[0].subtitle == "two")
        #expect(
            result.notes.map(\.description) == [
                #"home.json: $.body[2]: id "a" is also an earlier entry's: the two are merged into one model, as Hub's builders do"#
            ])
        // Past the limit they are counted, so a caller can say how many more there were.
        let many = "{\"body\": [" + Array(repeating: #"{"id": "same"}"#, count: 106).joined(separator: ",") + "]}"
        let merged = try ViewModelDecoder(file: "many.json", maxIssues: 100).decode(bytes: Array(many.utf8))
        #expect(merged.notes.count == 100 && merged.suppressedNoteCount == 5)
    }

    /// Many entries of one id, each with a child, merge into one model whose children are all of theirs, in order,
    /// with their index paths. Each merge rebuilt the model and its children so far: 20,000 such entries (1.2 MB)
    /// took minutes, overlays too.
    @Test func manyEntriesOfOneIdMergeTheirChildrenInOrder() throws {
        let count = 20_000
        let entries = (0..<count).map {
            #"{"id": "same", "text": {"title": "t\#($0)"}, "children": [{"id": "k\#($0)"}]}"#
        }
        let list = "[" + entries.joined(separator: ",") + "]"
        let result = try ViewModelDecoder(file: "dup.json", maxIssues: 10).decode(
            bytes: Array(#"{"body": \#(list), "overlays": \#(list)}"#.utf8))
        for models in [result.viewModel.body, result.viewModel.overlays] {
            #expect(models.count == 1 && models[0].title == "t\(count - 1)")
            let children = models[0].children
            #expect(children.count == count)
            #expect(children.enumerated().allSatisfy { $1.identifier == "k\($0)" && $1.indexPath == [0, $0] })
        }
        #expect(result.notes.count == 10 && result.suppressedNoteCount == 2 * (count - 1) - 10)
    }

    @Test func invalidURIsAreReported() throws {
        let result = try decode(#"[{"images": {"main": {"uri": "not a uri"}}, "target": {"uri": "a b"}}]"#)
        #expect(result.issues.map(\.path) == ["$[0].images.main.uri", "$[0].target.uri"])
        #expect(result.viewModel.body[0].mainImage == nil)
        // A touched target exists even when empty (Hub).
        #expect(result.viewModel.body[0].target == Target())
    }

    @Test func rootArrayIsTheBody() throws {
        let result = try decode(#"[{"id": "a"}, 3, {"id": "b"}]"#)
        #expect(result.viewModel.body.map(\.identifier) == ["a", "b"])
        #expect(result.viewModel.body.map(\.index) == [0, 1])
        #expect(result.issues.map(\.description) == ["home.json: $[1]: expected an object, found 3"])
    }

    @Test func otherRootsAndBrokenJSONFail() throws {
        #expect(throws: DecodeFailure.self) { try decode("42") }
        do {
            _ = try decode("{\"body\": [\n  {\"id\": \"a\",}\n]}")
            Issue.record("expected a failure")
        } catch let failure as DecodeFailure {
            #expect(
                failure.description == "home.json: not valid JSON: line 2, column 14: expected a key string, found '}'")
        }
        do {
            _ = try decode("\"text\"")
            Issue.record("expected a failure")
        } catch let failure as DecodeFailure {
            #expect(
                failure.description
                    == "home.json: $: expected an object (a view) or an array (its body), found \"text\"")
        }
        #expect(throws: DecodeFailure.self) { try decode("{} {}") }
        #expect(throws: DecodeFailure.self) { try decode("[1, 2") }
    }

    @Test func lenientComponentIdentifiers() throws {
        let result = try decode(
            #"[{"component": {"id": "row"}}, {"component": {"id": "a:b:c"}}, {"component": {"id": ":x"}}, {}]"#)
        #expect(
            result.viewModel.body.map(\.componentIdentifier.description) == ["default:row", "a:b", ":x", "default:row"])
        #expect(
            result.viewModel.body.map(\.identifier) == [
                "UnknownComponent:0", "UnknownComponent:1",
                "UnknownComponent:2", "UnknownComponent:3",
            ])
        #expect(result.issues.isEmpty)
    }

    @Test func sameIdEntriesMergeAdditively() throws {
        let json = """
            [{"id": "a", "text": {"title": "first", "subtitle": "kept"}, "custom": {"x": 1, "y": 1},
              "target": {"actions": ["n:one"]}, "children": [{"id": "c", "text": {"title": "c1"}}]},
             {"id": "b"},
             {"id": "a", "text": {"title": "second"}, "custom": {"y": 2, "z": 3}, "component": {"id": "demo:row"},
              "target": {"actions": ["n:two", "n:one"]}, "children": [{"id": "c", "text": {"subtitle": "c2"}}, {"id": "d"}]}]
            """
        let vm = try decode(json).viewModel
        #expect(vm.body.map(\.identifier) == ["a", "b"])
        let a = vm.body[0]
        #expect(a.title == "second" && a.subtitle == "kept")
        #expect(a.custom == JSONObject([("x", .number(1)), ("y", .number(2)), ("z", .number(3))]))
        #expect(a.componentIdentifier.description == "demo:row")
        #expect(a.target?.actions.map(\.description) == ["n:one", "n:two"])
        #expect(a.children.map(\.identifier) == ["c", "d"])
        #expect(a.children[0].title == "c1" && a.children[0].subtitle == "c2")
    }

    @Test func nullIsAbsentAndUnknownKeysAreIgnored() throws {
        let result = try decode(
            #"{"title": null, "extra": {"deep": [1]}, "body": [{"id": "a", "text": null, "whatever": 1}]}"#)
        #expect(result.issues.isEmpty)
        #expect(result.viewModel.title == nil)
        #expect(result.viewModel.body.count == 1)
    }

    @Test func issuesAreBounded() throws {
        let body = (0..<30).map { _ in #"{"group": 1}"# }.joined(separator: ",")
        let result = try decode("[\(body)]", maxIssues: 10)
        #expect(result.issues.count == 10)
        #expect(result.suppressedIssueCount == 20)
        #expect(result.totalIssueCount == 30)
        #expect(result.viewModel.body.count == 30)
    }

    @Test func stringsWithEscapesAndUnicode() throws {
        let result = try decode(
            #"[{"id": "a\"b", "text": {"title": "caf\u00e9 \ud83c\udfb5 \n tab\t", "subtitle": "日本"}}]"#)
        let model = result.viewModel.body[0]
        #expect(model.identifier == "a\"b")
        #expect(model.title == "café 🎵 \n tab\t")
        #expect(model.subtitle == "日本")
    }

    @Test func pathsQuoteUnusualKeys() throws {
        let result = try decode(#"[{"images": {"custom": {"my key": {"uri": 1}}}}]"#)
        #expect(result.issues.map(\.path) == [#"$[0].images.custom["my key"].uri"#])
    }

    @Test func numbersParse() throws {
        let result = try decode(#"[{"custom": {"a": -12, "b": 1.5e2, "c": 0.25, "d": 12345678901234567890}}]"#)
        let custom = try #require(result.viewModel.body[0].custom)
        #expect(custom["a"] == .number(-12) && custom["b"] == .number(150) && custom["c"] == .number(0.25))
        #expect(custom["d"] == .number(1.234_567_890_123_456_789e19))
    }
}
