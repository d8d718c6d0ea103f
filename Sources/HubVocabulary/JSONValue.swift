/// A JSON value as read from a view model file. Objects keep their keys' order of appearance, so output is stable.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var numberValue: Double? {
        switch self {
        case .number(let n): return n
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public subscript(key: String) -> JSONValue? { objectValue?[key] }
    /// Element `index` of an array; nil out of range or for anything else.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

/// An ordered JSON object.
public struct JSONObject: Hashable, Sendable, Sequence {
    /// Entries in order of first appearance. A small object (a component's custom data has a few keys) finds a key
    /// by comparing it with each, which costs less than hashing it, and is one array; a larger one also keeps a
    /// table from key to position.
    private var entries: [Entry] = []
    private var positions: [String: Int]?
    fileprivate struct Entry: Hashable, Sendable {
        var key: String
        var value: JSONValue
    }
    private static let scanLimit = 8

    public init() {}
    public init(_ pairs: [(String, JSONValue)]) { for (k, v) in pairs { self[k] = v } }

    public var keys: [String] { entries.map(\.key) }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        var i = 0
        while i < entries.count {
            if entries[i].key == key { return i }
            i += 1
        }
        return nil
    }

    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { entries[$0].value } }
        set {
            if let newValue {
                if let i = position(of: key) {
                    entries[i].value = newValue
                } else {
                    entries.append(Entry(key: key, value: newValue))
                    if positions != nil {
                        positions![key] = entries.count - 1
                    } else if entries.count > Self.scanLimit {
                        indexPositions()
                    }
                }
            } else if let i = position(of: key) {
                entries.remove(at: i)
                if positions != nil { indexPositions() }
            }
        }
    }

    private mutating func indexPositions() {
        var table: [String: Int] = [:]
        table.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() { table[entry.key] = i }
        positions = table
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    public struct Iterator: IteratorProtocol {
        fileprivate let entries: [Entry]
        fileprivate var position = 0
        public mutating func next() -> (key: String, value: JSONValue)? {
            guard position < entries.count else { return nil }
            defer { position += 1 }
            return (entries[position].key, entries[position].value)
        }
    }
    public func makeIterator() -> Iterator { Iterator(entries: entries) }

    /// Shallow merge: keys of `other` override ours (Hub's additive merge of custom/metadata/logging).
    public mutating func merge(_ other: JSONObject) { for (k, v) in other { self[k] = v } }

    /// Equal when the same keys in the same order hold equal values (the position table is only an index).
    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.entries == b.entries }
    public func hash(into hasher: inout Hasher) { hasher.combine(entries) }
}

// MARK: - Parsing and serialising

extension JSONValue {
    /// Parses JSON text (one value, whitespace around it allowed). Numbers become doubles; object key order is
    /// kept. - Throws: `JSONSyntaxError` with the line and column.
    public static func parse(utf8 bytes: [UInt8]) throws -> JSONValue {
        var scanner = JSONScanner(bytes)
        let value = try scanner.readValue()
        if !scanner.isAtEnd { throw scanner.error("unexpected data after the JSON value") }
        return value
    }

    public static func parse(_ text: String) throws -> JSONValue { try parse(utf8: Array(text.utf8)) }

    /// The value `text` holds, or nil when it is not JSON.
    public init?(parsing text: String) {
        guard let value = try? JSONValue.parse(text) else { return nil }
        self = value
    }

    /// Compact JSON text with keys in stored order.
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n):
            if let whole = n.wholeNumber {
                out += String(whole)
            } else if n.isFinite {
                out += String(n)
            } else {
                out += "null"
            }
        case .string(let s): JSONValue.writeEscaped(s, to: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            var first = true
            for (k, v) in o {
                if !first { out += "," }
                first = false
                JSONValue.writeEscaped(k, to: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    public static func writeEscaped(_ s: String, to out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}
