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
