import ArgumentParser
import Foundation
import HubCore
import HubHost
import HubRender

/// `--widths 320,375,768`: the container widths stories are drawn at (a story's own widths win).
struct WidthList: ExpressibleByArgument {
    var values: [Double]

    init?(argument: String) {
        let parts = argument.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil && $0!.isFinite && $0! >= 1 && $0! <= 4096 }) else {
            return nil
        }
        values = parts.map { $0! }
    }

    init(_ values: [Double]) { self.values = values }
}

/// Every story of the loaded plugins drawn at its widths: what `gallery` shows and `snapshot --gallery` records.
enum StoryShots {
    /// One drawing of a story.
    struct Shot {
        var entry: Showcase.Entry
        var story: Showcase.Story
        var width: Double
        var tree: RenderTree

        var item: GallerySheet.Item {
            GallerySheet.Item(
                plugin: entry.plugin, namespace: entry.namespace, component: entry.component, story: story.name,
                source: story.source.rawValue, width: width, tree: tree)
        }

        /// A file-name-safe id: "demo-row.long-title@320".
        var id: String {
            SnapshotNames.safe(entry.component.replacingOccurrences(of: ":", with: "-")) + "."
                + SnapshotNames.safe(story.name) + "@\(Int(width))"
        }
    }

    /// The entries and their drawings. Stories whose model is not a component model are reported and skipped.
    static func shots(of host: PluginHost, widths: [Double], margin: Double = 15) -> (
        entries: [Showcase.Entry], shots: [Shot], problems: [String]
    ) {
        let entries = Showcase.entries(of: host)
        var shots: [Shot] = []
        var problems: [String] = []
        for entry in entries {
            for story in entry.stories {
                guard let view = Showcase.view(of: story, component: entry.component) else {
                    problems.append(
                        "\(entry.plugin): \(entry.component) story \(TerminalText.quoted(story.name)): "
                            + (story.problem ?? "not a component model"))
                    continue
                }
                for width in story.widths.isEmpty ? widths : story.widths {
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

/// File names made from untrusted text (story and component names, script snapshot names).
enum SnapshotNames {
    /// Letters, digits, "-", "_" and "." kept; anything else becomes "-"; never empty, never a dot file, bounded.
    static func safe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(80) {
            let c = Character(scalar)
            out.append(c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == ".") ? c : "-")
        }
        while out.hasPrefix(".") { out.removeFirst() }
        return out.isEmpty ? "unnamed" : out.lowercased()
    }
}
