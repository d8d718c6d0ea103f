import CHubPlugin
import FoundationEssentials
import HubCore

/// One story of one component, as the preview's page names it to open it.
public struct StoryKey: Codable, Sendable, Hashable {
    /// "namespace:name".
    public var component: String
    public var story: String
    public init(component: String, story: String) {
        self.component = component
        self.story = story
    }
}

/// Every component the loaded plugins offer, with its stories (HUB_EXT_SHOWCASE, ABI 1.1): what `hubhost gallery`
/// draws and `hubhost snapshot --gallery` records. A component whose plugin declares no stories gets the host's
/// sample models, marked `source: "host"` (Hub's showcase manager shows only what plugins declare; hubhost shows
/// everything, and says which is which).
public enum Showcase {
    /// One story: a named component model, the widths it matters at (empty: the caller's), and where it came from.
    public struct Story: Codable, Sendable {
        public enum Source: String, Codable, Sendable { case plugin, host }
        public var name: String
        public var source: Source
        public var widths: [Double]
        /// The Hub JSON component model, as the plugin gave it (with "component" filled in), for `--format json`.
        public var model: String
        /// Why the story cannot be drawn (its JSON is not a component model); nil when it can.
        public var problem: String?
        /// What was wrong with it that still let it be drawn (a width out of range, left out).
        public var warnings: [String] = []

        /// The widths it is drawn at: its own, else `defaults` (the command's).
        public func drawnWidths(_ defaults: [Double]) -> [Double] { widths.isEmpty ? defaults : widths }
    }

    /// A component and its stories, grouped under its plugin and namespace.
    public struct Entry: Codable, Sendable {
        /// The plugin's id ("com.hubhost.demo").
        public var plugin: String
        public var pluginVersion: String
        public var file: String
        public var namespace: String
        /// "namespace:name".
        public var component: String
        public var stories: [Story]
    }

    /// The entries of every loaded plugin, sorted by plugin, namespace and component.
    public static func entries(of host: PluginHost) -> [Entry] {
        var entries: [Entry] = []
        for record in host.loadedPlugins.sorted(by: { ($0.id ?? "", $0.file.path) < ($1.id ?? "", $1.file.path) }) {
            for (namespace, names) in record.namespaces {
                for name in names {
                    let identifier = ComponentIdentifier(namespace: namespace, name: name)
                    let stories = declaredOrSampleStories(identifier, host: host)
                    entries.append(
                        Entry(
                            plugin: record.id ?? record.file.lastPathComponent, pluginVersion: record.version ?? "",
                            file: record.file.lastPathComponent, namespace: namespace,
                            component: identifier.description, stories: stories))
                }
            }
        }
        return entries
    }

    /// The stories of one component, or nil when no loaded plugin serves it: what the preview's canvas opens, without
    /// reading every other component's stories (each read makes an instance).
    public static func stories(of identifier: ComponentIdentifier, host: PluginHost) -> [Story]? {
        let served = host.loadedPlugins.contains { record in
            record.namespaces.contains {
                $0.namespace == identifier.namespace && $0.components.contains(identifier.name)
            }
        }
        return served ? declaredOrSampleStories(identifier, host: host) : nil
    }

    /// The plugin's stories, or the host's sample models when it declares none.
    private static func declaredOrSampleStories(_ identifier: ComponentIdentifier, host: PluginHost) -> [Story] {
        let stories = pluginStories(identifier, host: host)
        return stories.isEmpty ? hostStories(identifier) : stories
    }

    /// The view a story is drawn as: its model alone in the body.
    public static func view(of story: Story, component: String) -> ViewModel? {
        decodedView(of: story)?.viewModel
    }

    /// The story's view, with what decoding it found wrong (a field of the wrong type, left out).
    static func decodedView(of story: Story) -> DecodeResult? {
        guard story.problem == nil else { return nil }
        let text = #"{"body": ["# + story.model + "]}"
        return try? ViewModelDecoder(file: nil).decode(Data(text.utf8))
    }

    /// What is wrong with a story that can still be drawn, as `render` would say of a view: widths left out,
    /// fields decoding left out, images that cannot be drawn, component ids no loaded plugin provides (a child
    /// of another namespace, or a namespace renamed since). A story drawn with fallbacks makes a wrong golden.
    /// `servedNamespacesOnly`: component ids of namespaces no loaded plugin has are not reported (a plugin checked
    /// alone, as `validate` checks it, whose stories may name other plugins' components). `unavailable`: the host's
    /// namespaces whose plugin did not load, and why (a quarantine), so a story says so rather than "no loaded
    /// plugin serves".
    static func warnings(
        of story: Story, decoded: DecodeResult, registry: ComponentRegistry, servedNamespacesOnly: Bool = false,
        unavailable: [String: String] = [:]
    ) -> [String] {
        let view = decoded.viewModel
        let images = ImageAccess(viewFile: nil)
        let issues =
            decoded.issues + images.problems(in: view, file: nil) + images.placeholderWarnings(in: view, file: nil)
            + UnresolvedComponents.problems(
                in: view, registry: registry, file: nil, unavailable: unavailable,
                servedNamespacesOnly: servedNamespacesOnly)
        // "$.body[0]" is the story's model itself: its own paths read better from "$".
        return story.warnings
            + issues.map { issue in
                var issue = issue
                if issue.path.hasPrefix("$.body[0]") { issue.path = "$" + issue.path.dropFirst("$.body[0]".count) }
                return issue.description
            }
    }

    /// The most stories a component shows; a plugin's count above it is a problem.
    static let maxStories = 1000

    /// Reads the plugin's stories from a fresh instance that is never configured, then destroys it.
    static func pluginStories(_ identifier: ComponentIdentifier, host: PluginHost) -> [Story] {
        // A fault in here names the component ("in stories for demo:row"): no model or story does yet.
        CallRecorder.withNote(identifier.description) { readPluginStories(identifier, host: host) }
    }

    private static func readPluginStories(_ identifier: ComponentIdentifier, host: PluginHost) -> [Story] {
        let made = host.registry.createComponent(identifier: identifier, category: "row")
        defer { made.component.destroy() }
        guard case .factory = made.source, let component = made.component as? PluginComponent,
            let table = component.extensionTable(HUB_EXT_SHOWCASE, as: hub_showcase_ext.self)
        else { return [] }
        let methods = CInterop.copyTable(table)
        guard let count = methods.story_count, let read = methods.story else { return [] }
        // size_t arrives as Int: a plugin's (size_t)-1 is negative here, and any count is the plugin's word.
        let total = CallRecorder.during(.stories, slot: component.slot) { count(component.instance) }
        var stories: [Story] = []
        if total < 0 || total > maxStories {
            stories.append(
                Story(
                    name: "story_count", source: .plugin, widths: [], model: "{}",
                    problem: "story_count returned \(UInt(bitPattern: total)); the first \(maxStories) are shown"))
        }
        var names = Set<String>()
        for index in 0..<(total < 0 ? maxStories : min(total, maxStories)) {
            var story = hub_story()
            story.struct_size = UInt32(MemoryLayout<hub_story>.size)
            guard CallRecorder.during(.stories, slot: component.slot, { read(component.instance, index, &story) })
            else { continue }
            // As the plugin named it (JSON output and the page show it as it is; terminal lines escape it where they
            // are printed), bounded.
            let name =
                CInterop.string(story.name).map { String(String.UnicodeScalarView($0.unicodeScalars.prefix(200))) }
                ?? "story \(index)"
            guard names.insert(name).inserted else {
                stories.append(
                    Story(
                        name: "story \(index)", source: .plugin, widths: [], model: "{}",
                        problem: "a second story named \"\(name)\""))
                continue
            }
            var widths: [Double] = []
            var warnings: [String] = []
            if let list = story.widths {
                let count = max(story.width_count, 0)
                if count > 16 {
                    warnings.append("\(UInt(bitPattern: story.width_count)) widths; the first 16 are used")
                }
                for i in 0..<min(count, 16) {
                    guard list[i].isFinite && list[i] >= 1 && list[i] <= 4096 else {
                        warnings.append("width \(list[i]) left out (a width is 1 to 4096)")
                        continue
                    }
                    widths.append(list[i])
                }
            }
            let (model, problem) = modelText(CInterop.string(story.model_json), component: identifier)
            if problem == nil, let other = otherComponent(model, of: identifier) { warnings.append(other) }
            var read = Story(name: name, source: .plugin, widths: widths, model: model, problem: problem)
            read.warnings = warnings
            stories.append(read)
        }
        return stories
    }

    /// The story's model with "component" filled in, or the reason it is not a component model.
    static func modelText(_ json: String?, component: ComponentIdentifier) -> (String, String?) {
        guard let json else { return ("{}", "no model_json") }
        let parsed: JSONValue
        do { parsed = try JSONValue.parse(json) } catch {
            return (json, "model_json is not JSON: \(error)")
        }
        guard case .object(var object) = parsed else {
            return (json, "model_json is not a JSON object, but \(parsed.typeDescription)")
        }
        if object["component"] == nil {
            object["component"] = .object(JSONObject([("id", .string(component.description))]))
        }
        return (JSONValue.object(object).jsonText, nil)
    }

    /// A story whose model names another component than the one it is a story of (it draws that one).
    static func otherComponent(_ model: String, of component: ComponentIdentifier) -> String? {
        guard let id = (try? JSONValue.parse(model))?["component"]?["id"]?.stringValue,
            id != component.description
        else { return nil }
        return "its model names \(TerminalText.quoted(id)), not \(component.description)"
    }

    /// The host's sample models as stories (the probe's spread: empty, every field, long text).
    static func hostStories(_ identifier: ComponentIdentifier) -> [Story] {
        let samples: [(String, JSONValue)] = [
            ("empty", .object(JSONObject([("id", .string("empty"))]))),
            (
                "full",
                .object(
                    JSONObject([
                        ("id", .string("full")),
                        (
                            "text",
                            .object(
                                JSONObject([
                                    ("title", .string("Title")), ("subtitle", .string("Subtitle")),
                                    ("accessory", .string("Accessory")),
                                    ("description", .string("A description of the component model.")),
                                ]))
                        ),
                        (
                            "custom",
                            .object(JSONObject([("text", .string("custom text")), ("count", .number(3))]))
                        ),
                    ]))
            ),
            (
                "long text",
                .object(
                    JSONObject([
                        ("id", .string("long")),
                        (
                            "text",
                            .object(
                                JSONObject([
                                    ("title", .string(String(repeating: "Very long title ", count: 12))),
                                    ("subtitle", .string("Ünïcödé — 日本語のテキスト — عربى")),
                                ]))
                        ),
                    ]))
            ),
        ]
        return samples.map { name, value in
            let (model, problem) = modelText(value.jsonText, component: identifier)
            return Story(name: name, source: .host, widths: [], model: model, problem: problem)
        }
    }
}
