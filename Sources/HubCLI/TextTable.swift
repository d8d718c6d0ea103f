import FoundationEssentials

/// Plain-text tables for the listing commands: columns padded to their widest cell, two spaces apart, the last
/// column unpadded; one line a row.
enum TextTable {
    static func render(_ rows: [[String]]) -> String {
        guard let columns = rows.first?.count else { return "" }
        let widths = (0..<columns).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            for (i, cell) in row.enumerated() {
                out += cell
                if i < row.count - 1 { out += String(repeating: " ", count: widths[i] - cell.count + 2) }
            }
            out += "\n"
        }
        return out
    }

    /// JSON for `--json` outputs: pretty, keys sorted, slashes unescaped.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
