import HubPluginKit

// The stories of every component this plugin ships (ABI 1.1's showcase): what `hubhost gallery` draws and
// `hubhost snapshot` records. Models leave out "component"; the host fills in each component's own.

/// A small picture (a night sky over water, an SVG) as a base64 data: URI, so the stories draw the same everywhere:
/// no file, no network.
private let picture =
    "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnIHdpZHRoPSc0MCcgaGVpZ2h0PSc0MCc+PHJlY3Qgd2lkdGg9JzQwJyBoZWlnaHQ9JzQwJyBmaWxsPScjMEEzRDkxJy8+PGNpcmNsZSBjeD0nMjgnIGN5PScxMicgcj0nNicgZmlsbD0nI0ZGRDI0QycvPjxwYXRoIGQ9J00wIDMwIFExMiAyMCAyNCAzMCBUNDAgMjggVjQwIEgwIFonIGZpbGw9JyM0RkMzRjcnLz48L3N2Zz4="

private let longText = "A title long enough to wrap onto a second line and then be cut with an ellipsis there"

extension RowComponent: HubComponentWithStories {
    var stories: [HubStory] {
        [
            HubStory(
                "default", model: #"{"id": "row", "text": {"title": "Settings", "subtitle": "Playback, privacy"}}"#),
            HubStory(
                "accessory and swatch",
                model:
                    ##"{"id": "row", "text": {"title": "Colour", "accessory": "#FF2D55"}, "custom": {"color": "#FF2D55"}}"##
            ),
            HubStory(
                "long title",
                model: .object(JSONObject([("text", .object(JSONObject([("title", .string(longText))])))])),
                widths: [320]),
        ]
    }
}

extension CardComponent: HubComponentWithStories {
    var stories: [HubStory] {
        [
            HubStory(
                "default",
                model:
                    #"{"id": "card", "text": {"title": "Daily Mix 1", "subtitle": "Folk"}, "images": {"main": {"uri": "\#(picture)"}}}"#
            ),
            HubStory("no image", model: #"{"id": "card", "text": {"title": "Daily Mix 2"}}"#),
        ]
    }
}

extension HeaderComponent: HubComponentWithStories {
    var stories: [HubStory] {
        [
            HubStory(
                "default",
                model:
                    #"{"id": "header", "text": {"title": "Good evening", "subtitle": "Made for you"}, "images": {"background": {"uri": "\#(picture)"}}}"#,
                widths: [375, 768]),
            HubStory(
                "no image", model: #"{"id": "header", "text": {"title": "Good morning"}, "custom": {"height": 180}}"#),
        ]
    }
}

extension ImageComponent: HubComponentWithStories {
    var stories: [HubStory] {
        [
            HubStory(
                "default",
                model: #"{"id": "image", "images": {"main": {"uri": "\#(picture)"}}, "text": {"title": "Wave"}}"#),
            HubStory("no image: alt text", model: #"{"id": "image", "text": {"title": "No image"}}"#),
        ]
    }
}

extension CarouselComponent: HubComponentWithStories {
    var stories: [HubStory] {
        [
            HubStory(
                "three cards",
                model: #"""
                    {"id": "carousel", "text": {"title": "New albums"}, "custom": {"itemHeight": 180}, "children": [
                      {"id": "c1", "component": {"id": "demo:card"}, "text": {"title": "First"}},
                      {"id": "c2", "component": {"id": "demo:card"}, "text": {"title": "Second"}},
                      {"id": "c3", "component": {"id": "demo:card"}, "text": {"title": "Third"}}]}
                    """#),
            HubStory("empty", model: #"{"id": "carousel", "text": {"title": "Nothing yet"}}"#),
        ]
    }
}
