import HubCore

/// A standalone HTML page: the SVG drawing of the view, and a table of every component (id, index path,
/// component, source, traits, frame) for reading it.
public struct HTMLRenderer {
    public var svg: SVGRenderer
    public var naming: SourceNaming
    /// The most rows the table has; the rest are counted in its last row. A browser took 48 s and 7.9 GB to open
    /// the page of a 100k-component view, most of it laying out the table (the drawing alone: 18 s, 1.8 GB).
    public static let tableLimit = 2_000

    public init(svg: SVGRenderer = SVGRenderer(), naming: SourceNaming = SourceNaming()) {
        self.svg = svg
        self.naming = naming
    }

    /// `node` and every child under it.
    private static func count(_ node: RenderNode) -> Int { 1 + node.children.reduce(0) { $0 + count($1) } }

    public func render(_ tree: RenderTree, diagnostics: [String] = []) -> String {
        let title = escape(tree.title ?? tree.viewID ?? "hubhost view")
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(title)</title>
            <style>
            body { font-family: system-ui, sans-serif; margin: 24px; color: #222; display: flex; gap: 32px; align-items: flex-start; }
            .view { border: 1px solid #bbb; box-shadow: 0 2px 8px rgba(0,0,0,.12); }
            table { border-collapse: collapse; font-size: 12px; }
            th, td { text-align: left; padding: 2px 8px; border-bottom: 1px solid #eee; font-family: ui-monospace, monospace; }
            .fallback { color: #b35900; }
            .issues { color: #a00; font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; }
            </style>
            </head>
            <body>
            <div class="view">

            """
        svg.writeDocument(tree, to: &out)
        out += "</div>\n<div>\n<h1>\(title)</h1>\n"
        out += "<p>viewport \(tree.viewport) · content \(tree.contentSize)</p>\n"
        if !diagnostics.isEmpty {
            out += "<h2>Problems</h2>\n<div class=\"issues\">\(escape(diagnostics.joined(separator: "\n")))</div>\n"
        }
        out +=
            "<table>\n<tr><th>part</th><th>index path</th><th>id</th><th>component</th><th>source</th><th>traits</th><th>frame</th></tr>\n"
        var written = 0
        var left = 0
        func rows(_ node: RenderNode, part: String) {
            guard written < Self.tableLimit else {
                left += Self.count(node)
                return
            }
            written += 1
            let source: String
            var cls = ""
            switch node.source {
            case .factory(let namespace, let owner): source = "\(naming.pluginID(owner)) (\(namespace))"
            case .fallback(let category):
                source = "fallback (\(category))"
                cls = " class=\"fallback\""
            }
            out += "<tr\(cls)><td>\(part)</td><td>\(node.indexPath.map(String.init).joined(separator: "."))</td>"
            out += "<td>\(escape(node.modelID))</td><td>\(escape(node.componentIdentifier.description))</td>"
            out +=
                "<td>\(escape(source))</td><td>\(node.traits.sortedNames.joined(separator: ", "))</td><td>\(node.frame)</td></tr>\n"
            for child in node.children { rows(child, part: part + " child") }
        }
        if let header = tree.header { rows(header, part: "header") }
        for node in tree.body { rows(node, part: "body") }
        for node in tree.overlays { rows(node, part: "overlay") }
        if left > 0 {
            out += "<tr><td colspan=\"7\">… and \(left) more components (<code>hubhost render --format json</code> "
            out += "lists every one)</td></tr>\n"
        }
        out += "</table>\n</div>\n</body>\n</html>\n"
        return out
    }
}
