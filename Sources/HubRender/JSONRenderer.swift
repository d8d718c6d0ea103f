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
        ByteWriter.string { write(tree, to: &$0) }
    }

    /// Streams the JSON to `sink` in chunks of about 64 KiB, so a huge view is never one string in memory.
    public func render(_ tree: RenderTree, to sink: (UnsafeRawBufferPointer) -> Void) {
        ByteWriter.stream(to: sink) { write(tree, to: &$0) }
    }

    private func write(_ tree: RenderTree, to bytes: inout ByteWriter) {
        var w = Writer(pretty: pretty, out: bytes)
        defer { bytes = w.out }
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
        if let header = tree.header { write(header, &w) } else { w.out.write("null") }
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
        w.out.write("\n")
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
            w.string(naming.id(of: owner))
            w.close("}")
        case .fallback:
            w.string("fallback")
        }
        w.key("traits")
        w.inlineStrings(node.traits.sortedNames)
        w.close("}")
    }
}

/// A minimal JSON writer that keeps commas and indentation right, over a `ByteWriter`.
struct Writer {
    let pretty: Bool
    var out: ByteWriter
    private var depth = 0
    /// Per open bracket, whether it has an item yet.
    private var hasItems: [Bool] = []

    init(pretty: Bool, out: ByteWriter) {
        self.pretty = pretty
        self.out = out
    }

    private mutating func newline() {
        if pretty { out.newline(indent: 2 * depth) }
    }

    private mutating func separate() {
        if let last = hasItems.indices.last {
            if hasItems[last] { out.byte(UInt8(ascii: ",")) }
            hasItems[last] = true
        }
        newline()
    }

    mutating func open(_ bracket: StaticString) {
        out.write(bracket)
        depth += 1
        hasItems.append(false)
    }

    mutating func close(_ bracket: StaticString) {
        let hadItems = hasItems.removeLast()
        depth -= 1
        if hadItems { newline() }
        out.write(bracket)
    }

    /// `k` is one of our own key names, which need no escaping.
    mutating func key(_ k: StaticString) {
        separate()
        out.byte(UInt8(ascii: "\""))
        out.write(k)
        out.write(pretty ? "\": " : "\":")
    }

    /// Starts an array element.
    mutating func item() { separate() }

    mutating func string(_ s: String) { out.writeJSONString(s) }
    mutating func number(_ n: Double) { out.write(number: n) }

    mutating func inlineInts(_ values: [Int]) {
        out.byte(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { out.write(pretty ? ", " : ",") }
            out.write(v)
        }
        out.byte(UInt8(ascii: "]"))
    }

    mutating func inlineStrings(_ values: [String]) {
        out.byte(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { out.write(pretty ? ", " : ",") }
            out.writeJSONString(v)
        }
        out.byte(UInt8(ascii: "]"))
    }

    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
    }
}
