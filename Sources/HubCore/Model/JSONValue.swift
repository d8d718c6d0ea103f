import Foundation

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

    /// The JSON type name used in error messages ("a string", "an object").
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let n): return n.compact
        case .string(let s): return TerminalText.quoted(s, limit: 40)
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public subscript(key: String) -> JSONValue? { objectValue?[key] }
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
    /// Parses JSON text. Numbers become doubles; object key order is kept.
    public static func parse(_ data: Data) throws -> JSONValue {
        let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        return JSONValue(foundation: object)
    }

    public static func parse(_ text: String) throws -> JSONValue { try parse(Data(text.utf8)) }

    init(foundation value: Any) {
        switch value {
        case is NSNull: self = .null
        case let n as NSNumber:
            // JSONSerialization gives booleans as NSNumber too; they are the ones whose type code is "c".
            if String(cString: n.objCType) == "c" { self = .bool(n.boolValue) } else { self = .number(n.doubleValue) }
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(a.map(JSONValue.init(foundation:)))
        case let d as [String: Any]:
            // Foundation loses key order; sort for determinism.
            var o = JSONObject()
            for k in d.keys.sorted() { o[k] = JSONValue(foundation: d[k]!) }
            self = .object(o)
        default: self = .null
        }
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
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        out += "\""
    }
}
