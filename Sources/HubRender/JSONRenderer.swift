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

    /// Streams the JSON to `sink` while `render` renders the view (see `StreamedDocument`): each body node is
    /// written as soon as it is drawn. The output is what `render(_:to:)` writes for the same tree.
    public func renderStreaming(
        to sink: (UnsafeRawBufferPointer) -> Void, _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) -> RenderTree {
        ByteWriter.stream(to: sink) { out in
            var state = (w: Writer(pretty: pretty, out: out), count: 0)
            let tree = StreamedDocument.write(
                &state, opening: { state, _, _ in writeOpening(&state.w) },
                node: { state, node in
                    element(node, index: state.count, &state.w)
                    state.count += 1
                },
                closing: { state, tree in writeClosing(tree, bodyCount: state.count, &state.w) }, render)
            out = state.w.out
            return tree
        }
    }

    private func write(_ tree: RenderTree, to bytes: inout ByteWriter) {
        var w = Writer(pretty: pretty, out: bytes)
        defer { bytes = w.out }
        writeOpening(&w)
        // By index: the loop lends each node instead of copying it (seven reference fields retained and released).
        for i in tree.body.indices { element(tree.body[i], index: i, &w) }
        writeClosing(tree, bodyCount: tree.body.count, &w)
    }

    /// Up to the body's first node.
    private func writeOpening(_ w: inout Writer) {
        w.openObject()
        w.key("body", first: true)
        w.openArray()
    }

    /// The node at `index` of the array being written.
    private func element(_ node: RenderNode, index: Int, _ w: inout Writer) {
        w.element(first: index == 0)
        write(node, &w)
    }

    /// After the body's last node.
    private func writeClosing(_ tree: RenderTree, bodyCount: Int, _ w: inout Writer) {
        w.closeArray(empty: bodyCount == 0)
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
        // By index: the loop lends each node instead of copying it (seven reference fields retained and released).
        for i in nodes.indices { element(nodes[i], index: i, &w) }
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

    /// A node is its skeleton's fixed bytes (one copy each) around its values: some fifteen writes instead of
    /// some fifty (pretty output indents every key), a sixth of a 100k-component render's JSON writing.
    private func write(_ node: RenderNode, _ w: inout Writer) {
        let skeleton = w.nodeSkeleton()
        w.out.bytes(skeleton.open)
        w.depth += 1
        nodes(node.children, &w)
        w.depth -= 1
        let identity = identityBytes(of: node, skeleton)
        w.out.bytes(skeleton.componentIdentifier)
        w.out.bytes(identity.identifierJSON)
        w.out.bytes(skeleton.frameHeight)
        w.number(node.frame.height)
        w.out.bytes(skeleton.frameWidth)
        w.number(node.frame.width)
        w.out.bytes(skeleton.frameX)
        w.number(node.frame.x)
        w.out.bytes(skeleton.frameY)
        w.number(node.frame.y)
        w.out.bytes(skeleton.id)
        w.string(node.modelID)
        w.out.bytes(skeleton.indexPath)
        w.inlineIndexPath(node.model)
        w.out.bytes(identity.tail)
    }

    /// The bytes of `node` that follow from its component alone, written once per component kind and depth: a
    /// view shows a few kinds many times, and these are half of a node's writes (escaping checks, the plugin's
    /// name, the sorted trait names).
    private func identityBytes(of node: RenderNode, _ skeleton: NodeSkeleton) -> IdentityBytes {
        if let known = skeleton.identity(of: node) { return known }
        let identifier = ByteWriter.bytes { out in
            out.writeJSONString(node.componentIdentifier.namespace, UInt8(ascii: ":"), node.componentIdentifier.name)
        }
        let tail = ByteWriter.bytes { out in
            var w = Writer(pretty: pretty, out: out)
            w.out.bytes(skeleton.source)
            switch node.source {
            case .factory(let namespace, let owner):
                w.out.bytes(skeleton.sourceNamespace)
                w.string(namespace)
                w.out.bytes(skeleton.sourcePlugin)
                w.string(naming.id(of: owner))
                w.out.bytes(skeleton.sourceClose)
            case .fallback:
                w.string("fallback")
            }
            w.out.bytes(skeleton.traits)
            w.inlineTraits(node.traits)
            w.out.bytes(skeleton.close)
            out = w.out
        }
        return skeleton.remember(IdentityBytes(kind: node.kind, identifierBytes: identifier, tailBytes: tail))
    }
}

/// A component kind's fixed bytes in a node at one depth: its identifier as a JSON string, and everything from
/// the "source" key to the node's end (held in `PackedBytes`).
final class IdentityBytes {
    /// The kind first written with these bytes; nodes of other kinds with equal values share them too.
    let kind: ComponentKind
    let identifierJSON, tail: UnsafeBufferPointer<UInt8>
    private let bytes: PackedBytes

    init(kind: ComponentKind, identifierBytes: [UInt8], tailBytes: [UInt8]) {
        self.kind = kind
        bytes = PackedBytes([identifierBytes, tailBytes])
        (identifierJSON, tail) = (bytes.pieces[0], bytes.pieces[1])
    }

    /// The same kind object (every node of one instance has it), else equal values. The name first: it is what
    /// tells a view's kinds apart.
    func describes(_ node: RenderNode) -> Bool {
        let other = node.kind
        if other === kind { return true }
        return kind.componentIdentifier.name == other.componentIdentifier.name
            && kind.componentIdentifier.namespace == other.componentIdentifier.namespace
            && kind.source == other.source && kind.traits == other.traits
    }
}

/// Pieces of bytes copied into one buffer this object owns: an owner keeps it, so handing a piece to the output
/// retains nothing.
final class PackedBytes {
    let pieces: [UnsafeBufferPointer<UInt8>]
    private let storage: UnsafeMutableBufferPointer<UInt8>

    init(_ contents: [[UInt8]]) {
        storage = .allocate(capacity: contents.reduce(0) { $0 + $1.count })
        var pieces: [UnsafeBufferPointer<UInt8>] = []
        var offset = 0
        for piece in contents {
            let start = storage.baseAddress! + offset
            start.initialize(from: piece, count: piece.count)
            pieces.append(UnsafeBufferPointer(start: start, count: piece.count))
            offset += piece.count
        }
        self.pieces = pieces
    }

    deinit { storage.deallocate() }
}

/// The bytes of a node object that are the same for every node at one depth (brackets, keys, commas and
/// indentation), each cut from what `Writer` writes, so the output is the same as writing them one by one (held in
/// `PackedBytes`).
final class NodeSkeleton {
    let open, componentIdentifier, frameHeight, frameWidth, frameX, frameY, id, indexPath,
        source: UnsafeBufferPointer<UInt8>
    let sourceNamespace, sourcePlugin, sourceClose, traits, close: UnsafeBufferPointer<UInt8>
    private let bytes: PackedBytes
    /// The component kinds written at this depth lately, newest first.
    private var identities: [IdentityBytes] = []
    private static let identityLimit = 16

    /// For a node whose object opens at `depth` (its keys one deeper, its frame's two deeper).
    init(pretty: Bool, depth: Int) {
        var pieces: [[UInt8]] = []
        func cut(at depth: Int, _ body: (inout Writer) -> Void) {
            pieces.append(
                ByteWriter.bytes { out in
                    var w = Writer(pretty: pretty, out: out, depth: depth)
                    body(&w)
                    out = w.out
                })
        }
        let inNode = depth + 1
        cut(at: depth) {
            $0.openObject()
            $0.key("children", first: true)
        }
        cut(at: inNode) { $0.key("componentIdentifier") }
        cut(at: inNode) {
            $0.key("frame")
            $0.openObject()
            $0.key("height", first: true)
        }
        cut(at: inNode + 1) { $0.key("width") }
        cut(at: inNode + 1) { $0.key("x") }
        cut(at: inNode + 1) { $0.key("y") }
        cut(at: inNode + 1) {
            $0.closeObject()
            $0.key("id")
        }
        cut(at: inNode) { $0.key("indexPath") }
        cut(at: inNode) { $0.key("source") }
        cut(at: inNode) {
            $0.openObject()
            $0.key("namespace", first: true)
        }
        cut(at: inNode + 1) { $0.key("plugin") }
        cut(at: inNode + 1) { $0.closeObject() }
        cut(at: inNode) { $0.key("traits") }
        cut(at: inNode) { $0.closeObject() }

        bytes = PackedBytes(pieces)
        let views = bytes.pieces
        (open, componentIdentifier, frameHeight, frameWidth, frameX, frameY, id) =
            (views[0], views[1], views[2], views[3], views[4], views[5], views[6])
        (indexPath, source, sourceNamespace, sourcePlugin, sourceClose, traits, close) =
            (views[7], views[8], views[9], views[10], views[11], views[12], views[13])
    }

    /// The identity bytes of `node`'s kind, if written lately.
    func identity(of node: RenderNode) -> IdentityBytes? {
        for identity in identities where identity.describes(node) { return identity }
        return nil
    }

    func remember(_ identity: IdentityBytes) -> IdentityBytes {
        if identities.count == Self.identityLimit { identities.removeLast() }
        identities.insert(identity, at: 0)
        return identity
    }
}

/// A minimal JSON writer over a `ByteWriter` that keeps indentation right. The renderer knows its document's
/// shape, so it says where commas go (`first:`) instead of the writer tracking items per bracket.
struct Writer {
    let pretty: Bool
    var out: ByteWriter
    var depth: Int
    /// By depth, made when first needed.
    private var skeletons: [NodeSkeleton?] = []

    init(pretty: Bool, out: ByteWriter, depth: Int = 0) {
        self.pretty = pretty
        self.out = out
        self.depth = depth
    }

    /// The skeleton of a node that opens here.
    mutating func nodeSkeleton() -> NodeSkeleton {
        if depth < skeletons.count, let skeleton = skeletons[depth] { return skeleton }
        if depth >= skeletons.count { skeletons += Array(repeating: nil, count: depth + 1 - skeletons.count) }
        let skeleton = NodeSkeleton(pretty: pretty, depth: depth)
        skeletons[depth] = skeleton
        return skeleton
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
        if let whole = n.wholeNumber { return String(whole) }
        return String(n)
    }
}
