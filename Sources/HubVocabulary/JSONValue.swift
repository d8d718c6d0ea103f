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
    public private(set) var keys: [String] = []
    private var values: [String: JSONValue] = [:]

    public init() {}
    public init(_ pairs: [(String, JSONValue)]) { for (k, v) in pairs { self[k] = v } }

    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }
    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var i = 0
        return AnyIterator {
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return (keys[i], values[keys[i]]!)
        }
    }
    /// Shallow merge: keys of `other` override ours (Hub's additive merge of custom/metadata/logging).
    public mutating func merge(_ other: JSONObject) { for (k, v) in other { self[k] = v } }
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
            if n.isFinite, n == n.rounded(), abs(n) < 1e15 {
                out += String(Int64(n))
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
