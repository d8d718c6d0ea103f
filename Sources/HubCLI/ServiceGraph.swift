import FoundationEssentials
import HubCore
import HubRender

/// The service dependency graph of `list-services --graph`: who provides each key (C services, module-file
/// bindings, host services) and who holds it now. DOT for Graphviz, or a self-contained SVG in three columns
/// (providers, keys, consumers), so no Graphviz is needed to see it.
struct ServiceGraph {
    var provides: [(owner: String, key: String, scope: String)]
    var uses: [(consumer: String, key: String)]

    func dot() -> String {
        func q(_ s: String) -> String { JSONValue.string(s).jsonText }  // a DOT ID with escapes, as JSON quotes it
        var out = "digraph services {\n  rankdir=LR;\n  node [fontname=\"DejaVu Sans Mono\", fontsize=10];\n"
        for key in Set(provides.map(\.key) + uses.map(\.key)).sorted() {
            out += "  \(q("key " + key)) [label=\(q(key)), shape=box, style=rounded];\n"
        }
        for owner in Set(provides.map(\.owner) + uses.map(\.consumer)).sorted() {
            out += "  \(q("owner " + owner)) [label=\(q(owner)), shape=ellipse];\n"
        }
        for p in provides.sorted(by: { ($0.owner, $0.key) < ($1.owner, $1.key) }) {
            out += "  \(q("owner " + p.owner)) -> \(q("key " + p.key)) [label=\(q(p.scope))];\n"
        }
        for u in uses.sorted(by: { ($0.consumer, $0.key) < ($1.consumer, $1.key) }) {
            out += "  \(q("key " + u.key)) -> \(q("owner " + u.consumer)) [label=\"held by\", style=dashed];\n"
        }
        return out + "}\n"
    }

    func svg() -> String {
        let providers = Set(provides.map(\.owner)).sorted()
        let keys = Set(provides.map(\.key) + uses.map(\.key)).sorted()
        let consumers = Set(uses.map(\.consumer)).sorted()
        let rowHeight = 28.0
        let columns: [Double] = [16, 360, 704]
        let width = 1040.0
        let height = Double(max(providers.count, keys.count, consumers.count, 1)) * rowHeight + 48
        func y(_ index: Int) -> Double { 40 + Double(index) * rowHeight }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
        out += "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        for (x, title) in zip(columns, ["provided by", "key", "held by"]) {
            out += "<text x=\"\(x)\" y=\"20\" font-weight=\"bold\">\(title)</text>\n"
        }
        for p in provides {
            guard let from = providers.firstIndex(of: p.owner), let to = keys.firstIndex(of: p.key) else { continue }
            out += "<line x1=\"\(columns[1] - 24)\" y1=\"\(y(from) - 4)\" x2=\"\(columns[1] - 4)\" y2=\"\(y(to) - 4)\" "
            out += "stroke=\"#1e90ff\"><title>\(escape(p.scope))</title></line>\n"
        }
        for u in uses {
            guard let from = keys.firstIndex(of: u.key), let to = consumers.firstIndex(of: u.consumer) else { continue }
            out += "<line x1=\"\(columns[2] - 24)\" y1=\"\(y(from) - 4)\" x2=\"\(columns[2] - 4)\" y2=\"\(y(to) - 4)\" "
            out += "stroke=\"#ff8c00\" stroke-dasharray=\"4 2\"/>\n"
        }
        for (column, names) in [(0, providers), (1, keys), (2, consumers)] {
            for (index, name) in names.enumerated() {
                out += "<text x=\"\(columns[column])\" y=\"\(y(index))\">\(escape(String(name.prefix(48))))</text>\n"
            }
        }
        return out + "</svg>\n"
    }
}
