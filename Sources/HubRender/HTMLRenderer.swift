import HubCore

/// A standalone HTML page: the SVG drawing of the view, and a table of its components (id, index path,
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

    public func render(_ tree: RenderTree, diagnostics: [String] = []) -> String {
        ByteWriter.string { out in
            var table = Table()
            writeHead(tree, to: &out)
            svg.writeDocument(tree, to: &out)
            if let header = tree.header { addRows(header, part: "header", to: &table) }
            for node in tree.body { addRows(node, part: "body", to: &table) }
            writeSide(tree, table: &table, diagnostics: diagnostics, to: &out)
        }
    }

    /// Streams the page to `sink` while `render` renders the view (as `SVGRenderer.renderStreaming` does): each
    /// body component is drawn and its rows taken as soon as it is drawn, so neither its display list nor its node
    /// is kept (the page of 300k components took 605 MB, against 124 MB for the SVG). The output is what
    /// `render(_:diagnostics:)` writes for the same tree.
    public func renderStreaming(
        to sink: (UnsafeRawBufferPointer) -> Void, diagnostics: [String] = [],
        _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) -> RenderTree {
        ByteWriter.stream(to: sink) { out in
            var state = (out: out, clips: 0, table: Table())
            let tree = StreamedDocument.write(
                &state,
                opening: { state, tree, _ in
                    writeHead(tree, to: &state.out)
                    svg.writeOpening(tree, to: &state.out)
                    if let header = tree.header { addRows(header, part: "header", to: &state.table) }
                },
                node: { state, node in
                    svg.draw(node, at: node.frame, depth: 1, clips: &state.clips, to: &state.out)
                    addRows(node, part: "body", to: &state.table)
                },
                closing: { state, tree in
                    svg.writeClosing(tree, clips: &state.clips, to: &state.out)
                    writeSide(tree, table: &state.table, diagnostics: diagnostics, to: &state.out)
                }, render)
            out = state.out
            return tree
        }
    }

    /// The table's rows so far (at most `tableLimit`), and how many components did not get one.
    struct Table {
        var rows: [String] = []
        var left = 0
    }

    private func writeHead(_ tree: RenderTree, to out: inout ByteWriter) {
        out.write(
            """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>
            """)
        out.writeXMLEscaped(tree.title ?? tree.viewID ?? "hubhost view")
        out.write(
            """
            </title>
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

            """)
    }

    /// After the drawing: the title, sizes, problems and the table (the overlays' rows last).
    private func writeSide(_ tree: RenderTree, table: inout Table, diagnostics: [String], to out: inout ByteWriter) {
        for node in tree.overlays { addRows(node, part: "overlay", to: &table) }
        out.write("</div>\n<div>\n<h1>")
        out.writeXMLEscaped(tree.title ?? tree.viewID ?? "hubhost view")
        out.write("</h1>\n<p>viewport \(tree.viewport) · content \(tree.contentSize)</p>\n")
        if !diagnostics.isEmpty {
            out.write("<h2>Problems</h2>\n<div class=\"issues\">")
            out.writeXMLEscaped(diagnostics.joined(separator: "\n"))
            out.write("</div>\n")
        }
        out.write(
            "<table>\n<tr><th>part</th><th>index path</th><th>id</th><th>component</th><th>source</th><th>traits</th><th>frame</th></tr>\n"
        )
        for row in table.rows { out.write(row) }
        if table.left > 0 {
            out.write(
                "<tr><td colspan=\"7\">… and \(table.left) more components (<code>hubhost render --format json</code> ")
            out.write("lists every one)</td></tr>\n")
        }
        out.write("</table>\n</div>\n</body>\n</html>\n")
    }

    /// The row of `node` and its children's, while the table has room; else they are counted.
    private func addRows(_ node: RenderNode, part: String, to table: inout Table) {
        guard table.rows.count < Self.tableLimit else {
            table.left += Self.count(node)
            return
        }
        let source: String
        var cls = ""
        switch node.source {
        case .factory(let namespace, let owner): source = "\(naming.pluginID(owner)) (\(namespace))"
        case .fallback(let category):
            source = "fallback (\(category))"
            cls = " class=\"fallback\""
        }
        table.rows.append(
            ByteWriter.string { out in
                out.write(
                    "<tr\(cls)><td>\(part)</td><td>\(node.indexPath.map(String.init).joined(separator: "."))</td><td>")
                out.writeXMLEscaped(node.modelID)
                out.write("</td><td>")
                out.writeXMLEscaped(node.componentIdentifier.description)
                out.write("</td><td>")
                out.writeXMLEscaped(source)
                out.write(
                    "</td><td>\(node.traits.sortedNames.joined(separator: ", "))</td><td>\(node.frame)</td></tr>\n")
            })
        for child in node.children { addRows(child, part: part + " child", to: &table) }
    }

    /// `node` and every child under it.
    private static func count(_ node: RenderNode) -> Int { 1 + node.children.reduce(0) { $0 + count($1) } }
}
