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
        w.openObject()
        w.key("body", first: true)
        nodes(tree.body, &w)
        w.key("contentSize")
        size(tree.contentSize, &w)
        w.key("header")
        if let header = tree.header { write(header, &w) } else { w.out.write("null") }
        w.key("overlays")
        nodes(tree.overlays, &w)
        w.key("viewport")
        size(tree.viewport, &w)
        w.closeObject()
        w.out.write("\n")
    }

    private func nodes(_ nodes: [RenderNode], _ w: inout Writer) {
        w.openArray()
        for (i, node) in nodes.enumerated() {
            w.element(first: i == 0)
            write(node, &w)
        }
        w.closeArray(empty: nodes.isEmpty)
    }

    private func size(_ s: Size, _ w: inout Writer) {
        w.openObject()
        w.key("height", first: true)
        w.number(s.height)
        w.key("width")
        w.number(s.width)
        w.closeObject()
    }

    private func write(_ node: RenderNode, _ w: inout Writer) {
        w.openObject()
        w.key("children", first: true)
        nodes(node.children, &w)
        w.key("componentIdentifier")
        w.out.writeJSONString(node.componentIdentifier.namespace, UInt8(ascii: ":"), node.componentIdentifier.name)
        w.key("frame")
        w.openObject()
        w.key("height", first: true)
        w.number(node.frame.height)
        w.key("width")
        w.number(node.frame.width)
        w.key("x")
        w.number(node.frame.x)
        w.key("y")
        w.number(node.frame.y)
        w.closeObject()
        w.key("id")
        w.string(node.modelID)
        w.key("indexPath")
        w.inlineIndexPath(node.model)
        w.key("source")
        switch node.source {
        case .factory(let namespace, let owner):
            w.openObject()
            w.key("namespace", first: true)
            w.string(namespace)
            w.key("plugin")
            w.string(naming.id(of: owner))
            w.closeObject()
        case .fallback:
            w.string("fallback")
        }
        w.key("traits")
        w.inlineTraits(node.traits)
        w.closeObject()
    }
}

/// A minimal JSON writer over a `ByteWriter` that keeps indentation right. The renderer knows its document's
/// shape, so it says where commas go (`first:`) instead of the writer tracking items per bracket.
struct Writer {
    let pretty: Bool
    var out: ByteWriter
    private var depth = 0

    init(pretty: Bool, out: ByteWriter) {
        self.pretty = pretty
        self.out = out
    }

    private mutating func newline() {
        if pretty { out.newline(indent: 2 * depth) }
    }

    mutating func openObject() {
        out.byte(UInt8(ascii: "{"))
        depth += 1
    }

    /// Objects here always have keys.
    mutating func closeObject() {
        depth -= 1
        newline()
        out.byte(UInt8(ascii: "}"))
    }

    mutating func openArray() {
        out.byte(UInt8(ascii: "["))
        depth += 1
    }

    mutating func closeArray(empty: Bool) {
        depth -= 1
        if !empty { newline() }
        out.byte(UInt8(ascii: "]"))
    }

    /// `k` is one of our own key names, which need no escaping.
    mutating func key(_ k: StaticString, first: Bool = false) {
        if !first { out.byte(UInt8(ascii: ",")) }
        newline()
        out.byte(UInt8(ascii: "\""))
        out.write(k)
        out.write(pretty ? "\": " : "\":")
    }

    /// Starts an array element.
    mutating func element(first: Bool) {
        if !first { out.byte(UInt8(ascii: ",")) }
        newline()
    }

    mutating func string(_ s: String) { out.writeJSONString(s) }
    mutating func number(_ n: Double) { out.write(number: n) }

    mutating func inlineIndexPath(_ model: ComponentModel) {
        out.byte(UInt8(ascii: "["))
        var first = true
        model.forEachIndexInPath { index in
            if !first { out.write(pretty ? ", " : ",") }
            first = false
            out.write(index)
        }
        out.byte(UInt8(ascii: "]"))
    }

    /// The names of `traits`, sorted, as an array on one line.
    mutating func inlineTraits(_ traits: Set<LayoutTrait>) {
        out.byte(UInt8(ascii: "["))
        var first = true
        traits.forEachSortedName { name in
            if !first { out.write(pretty ? ", " : ",") }
            first = false
            out.writeJSONString(name)
        }
        out.byte(UInt8(ascii: "]"))
    }

    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
    }
}
