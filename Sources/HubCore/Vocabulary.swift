import FoundationEssentials
@_exported import HubVocabulary

// HubCore speaks the vocabulary it shares with the plugin SDK (geometry, colour, text style, layout traits,
// selection state, action trigger, JSON): one definition of each, in HubVocabulary, re-exported here.

extension JSONValue {
    /// How a value reads in a problem message: `null`, `true`, `15`, `"text"` (escaped, cut), `an array`.
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        // A number beyond a double's range reads as infinity: said as what it was in the text.
        case .number(let n): return n.isFinite ? n.compact : "a number out of range (beyond ±1.8e308)"
        case .string(let s): return TerminalText.quoted(s, limit: 40)
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Parses JSON bytes. - Throws: `JSONSyntaxError` with the line and column.
    public static func parse(_ data: Data) throws -> JSONValue { try parse(utf8: Array(data)) }
}
