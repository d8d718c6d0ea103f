import HubCore

/// The models the conformance suite configures every component with. Plugins do not ship sample models, so the
/// host makes a spread that exercises what components read: nothing at all, every field, very long and
/// non-Latin text, custom data of each JSON type, images of all three kinds, and children.
public enum SampleModels {
    public static func models(for identifier: ComponentIdentifier, category: String = "row") -> [ComponentModel] {
        let custom = JSONObject([
            ("text", .string("custom text")), ("count", .number(3)), ("flag", .bool(true)),
            ("list", .array([.number(1), .string("two")])),
            ("nested", .object(JSONObject([("key", .string("value"))]))),
        ])
        func child(_ i: Int) -> ComponentModel {
            ComponentModel(
                identifier: "probe.child.\(i)", index: i, indexPath: [1, i], componentIdentifier: identifier,
                componentCategory: category, title: "Child \(i)")
        }
        return [
            ComponentModel(
                identifier: "probe.empty", index: 0, componentIdentifier: identifier, componentCategory: category),
            ComponentModel(
                identifier: "probe.full", index: 1, groupIdentifier: "probe.group",
                componentIdentifier: identifier, componentCategory: category,
                title: "Title", subtitle: "Subtitle", accessoryTitle: "Accessory",
                descriptionText: "A description of the component model.",
                mainImage: ImageData(kind: .main, uri: "https://example.com/main.png", placeholder: "album"),
                backgroundImage: ImageData(kind: .background, uri: "https://example.com/background.png"),
                customImages: ["badge": ImageData(kind: .custom, identifier: "badge", uri: "file:///badge.png")],
                target: Target(uri: "spotify:probe", custom: JSONObject([("k", .string("v"))])),
                metadata: JSONObject([("meta", .string("data"))]),
                logging: JSONObject([("log", .number(1))]),
                custom: custom,
                children: (0..<3).map(child)),
            ComponentModel(
                identifier: "probe.long", index: 2, componentIdentifier: identifier, componentCategory: category,
                title: String(repeating: "Very long title ", count: 40),
                subtitle: "Ünïcödé — 日本語のテキスト — عربى — 🎧🎶",
                custom: JSONObject([("text", .number(42)), ("count", .string("not a number"))])),
        ]
    }

    /// The container sizes components are asked about: a phone, a tablet, and a degenerate zero width.
    public static let containerSizes = [
        Size(width: 375, height: 667), Size(width: 1024, height: 768),
        Size(width: 0, height: 0),
    ]
}
