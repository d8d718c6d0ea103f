import HubCore

/// The render tree as JSON, keys sorted, numbers in their shortest form, deterministic:
/// `{"body": [node], "contentSize": {"height", "width"}, "header": node|null, "overlays": [node],
///   "viewport": {"height", "width"}}`, where a node is `{"children": [node], "componentIdentifier": "ns:name",
/// "frame": {"height", "width", "x", "y"}, "id": model id, "indexPath": [Int], "source": {"namespace", "plugin"}
/// or "fallback", "traits": [sorted names]}`. Child frames are in their parent's coordinates; overlay frames in
/// the viewport's.
public struct JSONRenderer {
    public var naming: SourceNaming
    /// Indents with two spaces, one key per line; otherwise compact.
    public var pretty: Bool

    public init(naming: SourceNaming = SourceNaming(), pretty: Bool = true) {
        self.naming = naming
        self.pretty = pretty
    }

    public func render(_ tree: RenderTree) -> String {
        var text = ""
        render(tree) { text += $0 }
        return text
    }

    /// Streams the JSON to `sink` in chunks of about 64 KiB, so a huge view is never one string in memory.
    public func render(_ tree: RenderTree, to sink: (String) -> Void) {
        withoutActuallyEscaping(sink) { write(tree, to: $0) }
    }

    private func write(_ tree: RenderTree, to sink: @escaping (String) -> Void) {
        var w = Writer(pretty: pretty, sink: sink)
        w.open("{")
        w.key("body")
        w.open("[")
        for node in tree.body {
            w.item()
            write(node, &w)
        }
        w.close("]")
        w.key("contentSize")
        size(tree.contentSize, &w)
        w.key("header")
        if let header = tree.header { write(header, &w) } else { w.raw("null") }
        w.key("overlays")
        w.open("[")
        for node in tree.overlays {
            w.item()
            write(node, &w)
        }
        w.close("]")
        w.key("viewport")
        size(tree.viewport, &w)
        w.close("}")
        w.raw("\n")
        w.flush()
    }

    private func size(_ s: Size, _ w: inout Writer) {
        w.open("{")
        w.key("height")
        w.number(s.height)
        w.key("width")
        w.number(s.width)
        w.close("}")
    }

    private func write(_ node: RenderNode, _ w: inout Writer) {
        w.open("{")
        w.key("children")
        w.open("[")
        for child in node.children {
            w.item()
            write(child, &w)
        }
        w.close("]")
        w.flushIfFull()
        w.key("componentIdentifier")
        w.string(node.componentIdentifier.description)
        w.key("frame")
        w.open("{")
        w.key("height")
        w.number(node.frame.height)
        w.key("width")
        w.number(node.frame.width)
        w.key("x")
        w.number(node.frame.x)
        w.key("y")
        w.number(node.frame.y)
        w.close("}")
        w.key("id")
        w.string(node.modelID)
        w.key("indexPath")
        w.inlineInts(node.indexPath)
        w.key("source")
        switch node.source {
        case .factory(let namespace, let owner):
            w.open("{")
            w.key("namespace")
            w.string(namespace)
            w.key("plugin")
            w.string(naming.pluginID(owner))
            w.close("}")
        case .fallback:
            w.string("fallback")
        }
        w.key("traits")
        w.inlineStrings(node.traits.sortedNames)
        w.close("}")
    }
}

/// A minimal JSON writer that keeps commas and indentation right and hands its text to a sink in chunks.
struct Writer {
    let pretty: Bool
    var out = ""
    private var depth = 0
    private var needsComma: [Bool] = []
    private let sink: ((String) -> Void)?
    private static let chunkSize = 1 << 16

    init(pretty: Bool, sink: ((String) -> Void)? = nil) {
        self.pretty = pretty
        self.sink = sink
        out.reserveCapacity(Self.chunkSize + 1024)
    }

    mutating func flushIfFull() { if out.utf8.count >= Self.chunkSize { flush() } }

    mutating func flush() {
        guard let sink, !out.isEmpty else { return }
        sink(out)
        out.removeAll(keepingCapacity: true)
    }

    private mutating func newline() {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: depth)
    }

    private mutating func separate() {
        if needsComma.last == true { out += "," }
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
        newline()
    }

    mutating func open(_ bracket: String) {
        out += bracket
        depth += 1
        needsComma.append(false)
    }

    mutating func close(_ bracket: String) {
        let hadItems = needsComma.removeLast()
        depth -= 1
        if hadItems { newline() }
        out += bracket
    }

    /// `k` is one of our own key names, which need no escaping.
    mutating func key(_ k: String) {
        separate()
        out += "\""
        out += k
        out += pretty ? "\": " : "\":"
    }

    /// Starts an array element.
    mutating func item() { separate() }

    mutating func raw(_ s: String) { out += s }
    mutating func string(_ s: String) { Writer.escape(s, to: &out) }

    /// JSON string escaping with a fast path for the usual string that needs none.
    static func escape(_ s: String, to out: inout String) {
        var plain = true
        for b in s.utf8 where b < 0x20 || b == 0x22 || b == 0x5C {
            plain = false
            break
        }
        if plain {
            out += "\""
            out += s
            out += "\""
        } else {
            JSONValue.writeEscaped(s, to: &out)
        }
    }
    mutating func number(_ n: Double) { out += Writer.format(n) }

    mutating func inlineInts(_ values: [Int]) {
        out += "["
        for (i, v) in values.enumerated() {
            if i > 0 { out += pretty ? ", " : "," }
            out += String(v)
        }
        out += "]"
    }

    mutating func inlineStrings(_ values: [String]) {
        out += "["
        for (i, v) in values.enumerated() {
            if i > 0 { out += pretty ? ", " : "," }
            Writer.escape(v, to: &out)
        }
        out += "]"
    }

    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
    }
}
