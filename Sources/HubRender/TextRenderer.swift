import HubCore

/// An indented outline for the terminal: one line per component with its index path, id, component, frame,
/// traits and source, and its title when it has one. Text from the view (ids, titles) is terminal-safe: control
/// characters escaped, lines bounded (`TerminalText.line`).
public struct TextRenderer {
    public var naming: SourceNaming
    public init(naming: SourceNaming = SourceNaming()) { self.naming = naming }

    public func render(_ tree: RenderTree) -> String {
        var first = "view"
        if let id = tree.viewID { first += " \(id)" }
        if let title = tree.title { first += " \"\(title)\"" }
        first += "  viewport \(tree.viewport)  content \(tree.contentSize)"
        var out = TerminalText.line(first) + "\n"
        out += "header\n"
        if let header = tree.header { line(header, depth: 1, to: &out) } else { out += "  (none)\n" }
        out += "body (\(tree.body.count))\n"
        for node in tree.body { line(node, depth: 1, to: &out) }
        out += "overlays (\(tree.overlays.count))\n"
        for node in tree.overlays { line(node, depth: 1, to: &out) }
        return out
    }

    private func line(_ node: RenderNode, depth: Int, to out: inout String) {
        out += String(repeating: "  ", count: depth)
        var text =
            "[\(node.indexPath.map(String.init).joined(separator: ","))] \(node.modelID)  \(node.componentIdentifier)  \(node.frame)"
        let traits = node.traits.sortedNames
        if !traits.isEmpty { text += "  " + traits.joined(separator: ",") }
        switch node.source {
        case .factory(_, let owner): text += "  ← \(naming.pluginID(owner))"
        case .fallback(let category): text += "  ← fallback(\(category))"
        }
        if let title = node.model.title { text += "  \"\(title)\"" }
        out += TerminalText.line(text) + "\n"
        for child in node.children { line(child, depth: depth + 1, to: &out) }
    }
}
