/// Component and view models back to Hub JSON, in the schema `ViewModelDecoder` reads: what the preview's inspector
/// shows, and how an edit made in the page becomes a view again (encode, change, decode: indexes and parents stay
/// right).
extension ComponentModel {
    public var hubJSON: JSONValue {
        var object = JSONObject()
        object["id"] = .string(identifier)
        object["component"] = .object(
            JSONObject([("id", .string(componentIdentifier.description)), ("category", .string(componentCategory))]))
        if let groupIdentifier { object["group"] = .string(groupIdentifier) }
        var text = JSONObject()
        if let title { text["title"] = .string(title) }
        if let subtitle { text["subtitle"] = .string(subtitle) }
        if let accessoryTitle { text["accessory"] = .string(accessoryTitle) }
        if let descriptionText { text["description"] = .string(descriptionText) }
        if !text.isEmpty { object["text"] = .object(text) }
        var images = JSONObject()
        if let mainImage { images["main"] = mainImage.hubJSON }
        if let backgroundImage { images["background"] = backgroundImage.hubJSON }
        if !customImages.isEmpty {
            images["custom"] = .object(
                JSONObject(customImages.sorted { $0.key < $1.key }.map { ($0.key, $0.value.hubJSON) }))
        }
        if !images.isEmpty { object["images"] = .object(images) }
        if let target {
            var t = JSONObject()
            if let uri = target.uri { t["uri"] = .string(uri) }
            if !target.actions.isEmpty { t["actions"] = .array(target.actions.map { .string($0.description) }) }
            if let view = target.initialViewModel { t["view"] = .object(view) }
            if let custom = target.custom { t["custom"] = .object(custom) }
            object["target"] = .object(t)
        }
        if let metadata { object["metadata"] = .object(metadata) }
        if let logging { object["logging"] = .object(logging) }
        if let custom { object["custom"] = .object(custom) }
        if !children.isEmpty { object["children"] = .array(children.map(\.hubJSON)) }
        return .object(object)
    }
}

extension ImageData {
    var hubJSON: JSONValue {
        var object = JSONObject()
        if let uri { object["uri"] = .string(uri) }
        if let placeholder { object["placeholder"] = .string(placeholder) }
        if let local { object["local"] = .string(local) }
        if let custom { object["custom"] = .object(custom) }
        return .object(object)
    }
}

extension ViewModel {
    public var hubJSON: JSONValue {
        var object = JSONObject()
        if let identifier { object["id"] = .string(identifier) }
        if let title { object["title"] = .string(title) }
        if let header { object["header"] = header.hubJSON }
        object["body"] = .array(body.map(\.hubJSON))
        if !overlays.isEmpty { object["overlays"] = .array(overlays.map(\.hubJSON)) }
        if let custom { object["custom"] = .object(custom) }
        return .object(object)
    }
}
