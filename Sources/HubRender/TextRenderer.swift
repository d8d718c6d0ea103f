import HubCore

/// An indented outline for the terminal: one line per component with its index path, id, component, frame,
/// traits and source, and its title when it has one. Text from the view (ids, titles) is terminal-safe: control
/// characters escaped, lines bounded (`TerminalText.line`).
public struct TextRenderer {
    public var naming: SourceNaming
    public init(naming: SourceNaming = SourceNaming()) { self.naming = naming }

    public func render(_ tree: RenderTree) -> String {
        ByteWriter.string { write(tree, to: &$0) }
    }

    /// Streams the outline to `sink` in chunks of about 64 KiB.
    public func render(_ tree: RenderTree, to sink: (UnsafeRawBufferPointer) -> Void) {
        ByteWriter.stream(to: sink) { write(tree, to: &$0) }
    }

    /// Streams the outline to `sink` while `render` renders the view (see `StreamedDocument`): each body line
    /// is written as soon as its component is drawn. The output is what `render(_:to:)` writes for the same tree.
    public func renderStreaming(
        to sink: (UnsafeRawBufferPointer) -> Void, _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) -> RenderTree {
        ByteWriter.stream(to: sink) { out in
            StreamedDocument.write(
                &out, opening: { out, tree, count in writeOpening(tree, bodyCount: count, to: &out) },
                node: { out, node in line(node, depth: 1, to: &out) },
                closing: { out, tree in writeClosing(tree, to: &out) }, render)
        }
    }

    private func write(_ tree: RenderTree, to out: inout ByteWriter) {
        writeOpening(tree, bodyCount: tree.body.count, to: &out)
        // By index: the loop lends each node instead of copying it (seven reference fields retained and released).
        for i in tree.body.indices { line(tree.body[i], depth: 1, to: &out) }
        writeClosing(tree, to: &out)
    }

    /// Up to the body's first line.
    private func writeOpening(_ tree: RenderTree, bodyCount: Int, to out: inout ByteWriter) {
        var first = "view"
        if let id = tree.viewID { first += " \(id)" }
        if let title = tree.title { first += " \"\(title)\"" }
        first += "  viewport \(tree.viewport)  content \(tree.contentSize)"
        out.write(TerminalText.line(first))
        out.write("\nheader\n")
        if let header = tree.header { line(header, depth: 1, to: &out) } else { out.write("  (none)\n") }
        out.write("body (")
        out.write(bodyCount)
        out.write(")\n")
    }

    /// After the body's last line.
    private func writeClosing(_ tree: RenderTree, to out: inout ByteWriter) {
        out.write("overlays (")
        out.write(tree.overlays.count)
        out.write(")\n")
        for node in tree.overlays { line(node, depth: 1, to: &out) }
    }

    private func line(_ node: RenderNode, depth: Int, to out: inout ByteWriter) {
        for _ in 0..<depth { out.write("  ") }
        let source: String
        let fallback: Bool
        switch node.source {
        case .factory(_, let owner): (source, fallback) = (naming.id(of: owner), false)
        case .fallback(let category): (source, fallback) = (category, true)
        }
        let id = node.model.identifier
        let component = node.componentIdentifier
        let title = node.model.title
        // The untrusted parts are almost always printable and short: then the line is written piece by piece,
        // numbers straight into the buffer. Otherwise it is built whole and escaped and cut as one line, as
        // `TerminalText.line` does (below).
        var longest = id.utf8.count + component.namespace.utf8.count + component.name.utf8.count
        longest += source.utf8.count + (title?.utf8.count ?? 0) + 21 * node.model.indexPathDepth + 4 * 26 + 40
        node.traits.forEachSortedName { longest += $0.utf8.count + 1 }
        var written = false
        if longest <= TerminalText.lineLimit {
            // The whole line stays in the buffer, so it is checked once where it was written (each piece is valid
            // UTF-8, so the line is printable exactly when every piece is) and taken back if it is not.
            out.reserveContiguous(longest)
            let start = out.position
            out.byte(UInt8(ascii: "["))
            var first = true
            node.model.forEachIndexInPath { index in
                if !first { out.byte(UInt8(ascii: ",")) }
                first = false
                out.write(index)
            }
            out.write("] ")
            out.write(id)
            out.write("  ")
            out.write(component.namespace)
            out.byte(UInt8(ascii: ":"))
            out.write(component.name)
            out.write("  (")
            out.write(compact: node.frame.x)
            out.write(", ")
            out.write(compact: node.frame.y)
            out.write(", ")
            out.write(compact: node.frame.width)
            out.write(", ")
            out.write(compact: node.frame.height)
            out.byte(UInt8(ascii: ")"))
            if !node.traits.isEmpty {
                out.write("  ")
                var first = true
                node.traits.forEachSortedName { trait in
                    if !first { out.byte(UInt8(ascii: ",")) }
                    first = false
                    out.write(trait)
                }
            }
            out.write(fallback ? "  ← fallback(" : "  ← ")
            out.write(source)
            if fallback { out.byte(UInt8(ascii: ")")) }
            if let title {
                out.write("  \"")
                out.write(title)
                out.byte(UInt8(ascii: "\""))
            }
            written = TerminalText.isPrintable(out.written(since: start))
            if !written { out.rewind(to: start) }
        }
        if !written {
            var text =
                "[\(node.model.indexPath.map(String.init).joined(separator: ","))] \(id)  \(component)  \(node.frame)"
            if !node.traits.isEmpty { text += "  " + node.traits.sortedNames.joined(separator: ",") }
            text += fallback ? "  ← fallback(\(source))" : "  ← \(source)"
            if let title { text += "  \"\(title)\"" }
            out.write(TerminalText.line(text))
        }
        out.byte(0x0A)
        for i in node.children.indices { line(node.children[i], depth: depth + 1, to: &out) }
    }
}
