import Testing

@testable import HubCore

/// Most decoded models set none of the rarely set fields and are built without them; a model that sets just
/// one of them must still keep it.
@Suite struct RareFieldTests {
    @Test(arguments: [
        (#""group": "g""#, "group"),
        (#""text": {"accessory": "a"}"#, "accessory"),
        (#""text": {"description": "d"}"#, "description"),
        (#""images": {"main": {"uri": "https://x/m.png"}}"#, "main image"),
        (#""images": {"background": {"placeholder": "p"}}"#, "background image"),
        (#""images": {"custom": {"k": {"local": "l.png"}}}"#, "custom image"),
        (#""target": {"uri": "spotify:x"}"#, "target"),
        (#""metadata": {"m": 1}"#, "metadata"),
        (#""logging": {"l": 2}"#, "logging"),
    ])
    func aModelWithOneRareFieldKeepsIt(json: String, field: String) throws {
        let text =
            #"[{"id": "only", "component": {"id": "a:b"}, "text": {"title": "t"}}, {"id": "rare", "#
            + json + "}]"
        let body = try ViewModelDecoder().decode(text).viewModel.body
        #expect(body.count == 2)
        #expect(body[0].hasExtras == false)
        let model = body[1]
        #expect(model.hasExtras, "\(field)")
        let kept: Bool
        switch field {
        case "group": kept = model.groupIdentifier == "g"
        case "accessory": kept = model.accessoryTitle == "a"
        case "description": kept = model.descriptionText == "d"
        case "main image": kept = model.mainImage?.uri == "https://x/m.png"
        case "background image": kept = model.backgroundImage?.placeholder == "p"
        case "custom image": kept = model.customImages["k"]?.local == "l.png"
        case "target": kept = model.target?.uri == "spotify:x"
        case "metadata": kept = model.metadata?["m"] == .number(1)
        default: kept = model.logging?["l"] == .number(2)
        }
        #expect(kept, "\(field) was lost")
    }
}

/// Body and overlay entries are read into one builder, emptied between entries: nothing an entry sets may reach
/// the entries after it.
@Suite struct ReusedEntryBuilderTests {
    @Test func anEntrySetsNothingOfTheEntryBefore() throws {
        let everything = """
            {"id": "full", "group": "g", "component": {"id": "a:b", "category": "card"},
             "text": {"title": "t", "subtitle": "s", "accessory": "a", "description": "d"},
             "images": {"main": {"uri": "https://x/m.png"}, "background": {"placeholder": "p"},
                        "custom": {"k": {"local": "l.png"}}},
             "target": {"uri": "spotify:x", "actions": ["ns:act"], "view": {"id": "v"}, "custom": {"c": 1}},
             "metadata": {"m": 1}, "logging": {"l": 2}, "custom": {"x": true},
             "children": [{"id": "child", "component": {"id": "a:c"}}]}
            """
        let bare = #"{"id": "bare"}"#
        for list in ["body", "overlays"] {
            let after = try ViewModelDecoder().decode("{\"\(list)\": [\(everything), \(bare), \(bare)]}").viewModel
            let alone = try ViewModelDecoder().decode("{\"\(list)\": [{\"id\": \"x\"}, \(bare)]}").viewModel
            let models = list == "body" ? after.body : after.overlays
            let reference = list == "body" ? alone.body[1] : alone.overlays[1]
            #expect(models.count == 2, "\(list)")
            #expect(models[0].customImages["k"]?.local == "l.png" && models[0].children.count == 1, "\(list)")
            // The repeated id merges into the second entry, which must still equal a bare entry of its own.
            #expect(models[1] == reference, "\(list)")
            #expect(models[1].hasExtras == false && models[1].children.isEmpty, "\(list)")
        }
    }
}
