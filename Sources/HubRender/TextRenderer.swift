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

    private func write(_ tree: RenderTree, to out: inout ByteWriter) {
        var first = "view"
        if let id = tree.viewID { first += " \(id)" }
        if let title = tree.title { first += " \"\(title)\"" }
        first += "  viewport \(tree.viewport)  content \(tree.contentSize)"
        out.write(TerminalText.line(first))
        out.write("\nheader\n")
        if let header = tree.header { line(header, depth: 1, to: &out) } else { out.write("  (none)\n") }
        out.write("body (")
        out.write(tree.body.count)
        out.write(")\n")
        for node in tree.body { line(node, depth: 1, to: &out) }
        out.write("overlays (")
        out.write(tree.overlays.count)
        out.write(")\n")
        for node in tree.overlays { line(node, depth: 1, to: &out) }
    }

    private func line(_ node: RenderNode, depth: Int, to out: inout ByteWriter) {
        for _ in 0..<depth { out.write("  ") }
        let traits = node.traits.sortedNames
        let source: String
        let fallback: Bool
        switch node.source {
        case .factory(_, let owner): (source, fallback) = (naming.pluginID(owner), false)
        case .fallback(let category): (source, fallback) = (category, true)
        }
        let component = node.componentIdentifier.description
        let title = node.model.title
        // The untrusted parts are almost always printable and short: then the line is written piece by piece.
        // Otherwise it is built whole and escaped and cut as one line, as `TerminalText.line` does.
        let frame = node.frame.description
        let pieces = [node.modelID, component, source, title ?? ""] + traits
        // The line's length at most: the pieces, the frame, 20 bytes per index and the fixed decorations.
        let longest =
            pieces.reduce(0, { $0 + $1.utf8.count + 1 }) + frame.utf8.count + 21 * node.indexPath.count + 40
        if longest <= TerminalText.lineLimit, pieces.allSatisfy(TerminalText.isPrintable) {
            out.byte(UInt8(ascii: "["))
            for (i, index) in node.indexPath.enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.write(index)
            }
            out.write("] ")
            out.write(node.modelID)
            out.write("  ")
            out.write(component)
            out.write("  ")
            out.write(frame)
            if !traits.isEmpty {
                out.write("  ")
                for (i, trait) in traits.enumerated() {
                    if i > 0 { out.byte(UInt8(ascii: ",")) }
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
        } else {
            var text =
                "[\(node.indexPath.map(String.init).joined(separator: ","))] \(node.modelID)  \(component)  \(node.frame)"
            if !traits.isEmpty { text += "  " + traits.joined(separator: ",") }
            text += fallback ? "  ← fallback(\(source))" : "  ← \(source)"
            if let title { text += "  \"\(title)\"" }
            out.write(TerminalText.line(text))
        }
        out.byte(0x0A)
        for child in node.children { line(child, depth: depth + 1, to: &out) }
    }
}
