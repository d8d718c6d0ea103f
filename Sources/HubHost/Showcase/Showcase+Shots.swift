import FoundationEssentials
import HubCore

extension Showcase {
    /// One drawing of a story at one width.
    public struct Shot {
        public var entry: Entry
        public var story: Story
        public var width: Double
        public var tree: RenderTree

        /// A file-name-safe id: "demo-row.long-title@320".
        public var id: String { Self.id(component: entry.component, story: story.name, width: width) }

        /// The id of the shot of `story` of `component` ("ns:name") at `width`.
        public static func id(component: String, story: String, width: Double) -> String {
            name(component: component, story: story) + "@\(Int(width))"
        }

        /// `id` without the width: "demo-row.long-title" (what an export of the story is called).
        public static func name(component: String, story: String) -> String {
            safe(component.replacing(":", with: "-")) + "." + safe(story)
        }

        /// Letters, digits, "-", "_" and "." kept; anything else becomes "-"; never empty, never a dot file,
        /// bounded (names come from plugins and views: untrusted).
        public static func safe(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars.prefix(80) {
                let c = Character(scalar)
                out.append(c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == ".") ? c : "-")
            }
            while out.hasPrefix(".") { out.removeFirst() }
            return out.isEmpty ? "unnamed" : out.lowercased()
        }
    }

    /// Every story of the loaded plugins drawn at its widths (a story's own widths win over `widths`), each as a
    /// one-component view through its own one-shot pipeline. Stories whose model is not a component model, and
    /// what is wrong with those that still draw, are listed in `problems`; each entry's stories carry their own
    /// (`Story.warnings`, the JSON's "warnings").
    public static func shots(of host: PluginHost, widths: [Double], margin: Double = 15) -> (
        entries: [Entry], shots: [Shot], problems: [String]
    ) {
        var entries = entries(of: host)
        var shots: [Shot] = []
        var problems: [String] = []
        for e in entries.indices {
            for s in entries[e].stories.indices {
                var story = entries[e].stories[s]
                let label = "\(entries[e].plugin): \(entries[e].component) story \(TerminalText.quoted(story.name)): "
                guard let decoded = decodedView(of: story) else {
                    problems.append(label + (story.problem ?? "not a component model"))
                    continue
                }
                let view = decoded.viewModel
                story.warnings = warnings(
                    of: story, decoded: decoded, registry: host.registry, unavailable: host.unavailableNamespaces)
                entries[e].stories[s] = story
                let entry = entries[e]
                problems += story.warnings.map { label + $0 }
                for width in story.drawnWidths(widths) {
                    CallRecorder.noteDrawing(
                        "story \(TerminalText.quoted(story.name)) of \(entry.component) at \(width.compactPoints)")
                    defer { CallRecorder.noteDrawing(nil) }
                    let pipeline = RenderPipeline(
                        registry: host.registry, layoutManager: DefaultLayoutManager(margin: margin))
                    pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: true)
                    // A viewport one point tall: the drawing is exactly as tall as the content.
                    let tree = pipeline.render(view, viewport: Size(width: width, height: 1))
                    pipeline.tearDown()
                    shots.append(Shot(entry: entry, story: story, width: width, tree: tree))
                }
            }
        }
        return (entries, shots, problems)
    }
}
