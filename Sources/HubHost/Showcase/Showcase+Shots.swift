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
        public var id: String {
            Self.safe(entry.component.replacing(":", with: "-")) + "." + Self.safe(story.name)
                + "@\(Int(width))"
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
    /// one-component view through its own one-shot pipeline. Stories whose model is not a component model are
    /// listed in `problems`.
    public static func shots(of host: PluginHost, widths: [Double], margin: Double = 15) -> (
        entries: [Entry], shots: [Shot], problems: [String]
    ) {
        let entries = entries(of: host)
        var shots: [Shot] = []
        var problems: [String] = []
        for entry in entries {
            for story in entry.stories {
                let label = "\(entry.plugin): \(entry.component) story \(TerminalText.quoted(story.name)): "
                guard let decoded = decodedView(of: story) else {
                    problems.append(label + (story.problem ?? "not a component model"))
                    continue
                }
                let view = decoded.viewModel
                problems += warnings(of: story, decoded: decoded, registry: host.registry).map { label + $0 }
                for width in story.widths.isEmpty ? widths : story.widths {
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
