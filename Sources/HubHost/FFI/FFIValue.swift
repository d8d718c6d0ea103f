import FoundationEssentials
import HubCore

/// A value passed to or returned from a C function called through libffi.
public enum FFIValue: Equatable, CustomStringConvertible {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String?)
    case pointer(UnsafeMutableRawPointer?)
    case void

    public var description: String {
        switch self {
        case .int(let v): return "\(v)"
        case .uint(let v): return "\(v)"
        case .double(let v): return "\(v)"
        // A plugin's text, escaped as everything untrusted hubhost prints is (an ESC would drive the terminal).
        case .string(let v): return v.map { TerminalText.quoted($0) } ?? "NULL"
        case .pointer(let p): return p.map { "0x" + String(UInt(bitPattern: $0), radix: 16) } ?? "NULL"
        case .void: return "void"
        }
    }

    /// The value as Swift callers want it: Int64, UInt64, Double, String?, UnsafeMutableRawPointer? or ().
    public var swiftValue: Any {
        switch self {
        case .int(let v): return v
        case .uint(let v): return v
        case .double(let v): return v
        case .string(let v): return v as Any
        case .pointer(let p): return p as Any
        case .void: return ()
        }
    }

    /// Why a value does not fit a C type.
    public struct Mismatch: Error, Equatable, CustomStringConvertible {
        public let type: FFISignature.CType
        public let got: String
        public var description: String { "must be \(type.rawValue), got \(got)" }
    }

    /// A value as a user wrote it: `"text"`, `16.5`, `-3`, `null`, `a pointer` (not Swift's type names).
    static func describe(_ value: Any) -> String {
        if isNil(value) { return "null" }
        if let text = value as? String { return TerminalText.quoted(text, limit: 40) }
        if let d = value as? Double { return "\(d)" }
        if let i = integer(value) { return (i.negative ? "-" : "") + "\(i.magnitude)" }
        if value is UnsafeRawPointer || value is UnsafeMutableRawPointer || value is OpaquePointer {
            return "a pointer"
        }
        return "\(value)"
    }

    /// Converts a Swift value (any integer type, Float/Double, String, raw or opaque pointer, nil) to `type`,
    /// checking integer ranges.
    public static func from(_ value: Any, as type: FFISignature.CType) throws -> FFIValue {
        func mismatch(_ what: String? = nil) -> Mismatch {
            Mismatch(type: type, got: what ?? describe(value))
        }
        switch type {
        case .void:
            throw mismatch()
        case .f32, .f64:
            if let d = value as? Double { return .double(d) }
            if let f = value as? Float { return .double(Double(f)) }
            if let i = integer(value) { return .double(Double(i.magnitude) * (i.negative ? -1 : 1)) }
            throw mismatch()
        case .str:
            if let s = value as? String { return .string(s) }
            if isNil(value) { return .string(nil) }
            throw mismatch()
        case .ptr:
            if let p = value as? UnsafeMutableRawPointer { return .pointer(p) }
            if let p = value as? UnsafeRawPointer { return .pointer(UnsafeMutableRawPointer(mutating: p)) }
            if let p = value as? OpaquePointer { return .pointer(UnsafeMutableRawPointer(p)) }
            if isNil(value) { return .pointer(nil) }
            throw mismatch()
        default:
            guard let i = integer(value) else { throw mismatch() }
            let bits = type.bitWidth!
            if type.isSigned {
                let limit = UInt64(1) << (bits - 1)
                guard i.negative ? i.magnitude <= limit : i.magnitude < limit else {
                    throw mismatch("\(i.negative ? "-" : "")\(i.magnitude), out of range")
                }
                return .int(i.negative ? Int64(bitPattern: 0 &- i.magnitude) : Int64(i.magnitude))
            }
            guard !i.negative, bits == 64 || i.magnitude < (UInt64(1) << bits) else {
                throw mismatch("\(i.negative ? "-" : "")\(i.magnitude), out of range")
            }
            return .uint(i.magnitude)
        }
    }

    /// Converts a JSON value from a module file.
    public static func from(json value: JSONValue, as type: FFISignature.CType) throws -> FFIValue {
        switch value {
        case .number(let n):
            if type.isInteger {
                guard n.rounded() == n else { throw Mismatch(type: type, got: "\(n), not an integer") }
                // From 2^53 on, a JSON number is read as the nearest double, not the integer written: refused, with
                // the way to write it exactly.
                guard abs(n) < 9_007_199_254_740_992 else {
                    throw Mismatch(
                        type: type,
                        got: "\(n), 2^53 or beyond, where a JSON number is not exact (write it as a string: \"1844…\")")
                }
                return try from(n < 0 ? Int64(n) as Any : UInt64(n) as Any, as: type)
            }
            return try from(n, as: type)
        // An integer as a string, decimal or 0x: exact over the whole 64 bits.
        case .string(let s) where type.isInteger: return try from(argument: s, as: type)
        case .string(let s): return try from(s, as: type)
        case .bool(let b) where type.isInteger: return try from(b ? 1 : 0, as: type)
        case .null: return try from(Optional<String>.none as Any, as: type)
        default: throw Mismatch(type: type, got: "JSON \(value.jsonText)")
        }
    }

    /// Parses a command-line word: integers (decimal or 0x), floats, strings as they are; `null` is a NULL string
    /// or pointer, as `hubhost inject` reads it (and "NULL" or 0 a NULL pointer).
    public static func from(argument text: String, as type: FFISignature.CType) throws -> FFIValue {
        switch type {
        case .str: return .string(text == "null" ? nil : text)
        case .ptr:
            if text == "NULL" || text == "null" || text == "0" { return .pointer(nil) }
            let digits = text.hasPrefix("0x") ? String(text.dropFirst(2)) : text
            guard let address = UInt(digits, radix: text.hasPrefix("0x") ? 16 : 10) else {
                throw Mismatch(type: type, got: "'\(text)'")
            }
            return .pointer(UnsafeMutableRawPointer(bitPattern: address))
        case .f32, .f64:
            guard let d = Double(text) else { throw Mismatch(type: type, got: "'\(text)'") }
            return .double(d)
        case .void:
            throw Mismatch(type: type, got: "'\(text)'")
        default:
            let negative = text.hasPrefix("-")
            let body = negative ? String(text.dropFirst()) : text
            let magnitude = body.hasPrefix("0x") ? UInt64(body.dropFirst(2), radix: 16) : UInt64(body)
            guard let magnitude else { throw Mismatch(type: type, got: "'\(text)'") }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else {
                    throw Mismatch(type: type, got: "'\(text)', out of range")
                }
                return try from(Int64(bitPattern: 0 &- magnitude), as: type)
            }
            return try from(magnitude, as: type)
        }
    }

    private static func isNil(_ value: Any) -> Bool {
        if case Optional<Any>.none = value { return true }
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// Any Swift integer as sign + magnitude.
    private static func integer(_ value: Any) -> (negative: Bool, magnitude: UInt64)? {
        switch value {
        case let v as Int: return (v < 0, v.magnitude.toU64)
        case let v as Int8: return (v < 0, UInt64(v.magnitude))
        case let v as Int16: return (v < 0, UInt64(v.magnitude))
        case let v as Int32: return (v < 0, UInt64(v.magnitude))
        case let v as Int64: return (v < 0, v.magnitude)
        case let v as UInt: return (false, UInt64(v))
        case let v as UInt8: return (false, UInt64(v))
        case let v as UInt16: return (false, UInt64(v))
        case let v as UInt32: return (false, UInt64(v))
        case let v as UInt64: return (false, v)
        default: return nil
        }
    }
}

extension UInt {
    fileprivate var toU64: UInt64 { UInt64(self) }
}
