/// A C function's shape as a string: `"(i32,f64,str,ptr)->ptr"`.
///
/// Grammar (whitespace allowed between tokens):
///
///     signature := "(" [ type { "," type } ] ")" "->" type
///     type      := "i8" | "u8" | "i16" | "u16" | "i32" | "u32" | "i64" | "u64" | "f32" | "f64" | "str" | "ptr"
///                | "void"   (return type only)
///
/// `str` is a NUL-terminated UTF-8 `const char *` (borrowed by the callee for the call; a returned `str` is
/// copied and not freed); `ptr` is any other pointer, passed and returned as an address.
public struct FFISignature: Equatable, Sendable, CustomStringConvertible {
    public enum CType: String, CaseIterable, Sendable {
        case i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, str, ptr, void

        var isInteger: Bool { bitWidth != nil }
        var isSigned: Bool { [.i8, .i16, .i32, .i64].contains(self) }
        var bitWidth: Int? {
            switch self {
            case .i8, .u8: return 8
            case .i16, .u16: return 16
            case .i32, .u32: return 32
            case .i64, .u64: return 64
            default: return nil
            }
        }
    }

    public let arguments: [CType]
    public let result: CType
    /// The text it was parsed from.
    public let text: String

    public var description: String {
        "(" + arguments.map(\.rawValue).joined(separator: ",") + ")->" + result.rawValue
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let signature: String
        public let reason: String
        public var description: String { "signature '\(signature)': \(reason)" }
    }

    /// Parses `text`. - Throws: `ParseError` saying what is wrong and where.
    public init(_ text: String) throws {
        self.text = text
        func fail(_ reason: String) -> ParseError { ParseError(signature: text, reason: reason) }
        let compact = text.filter { !$0.isWhitespace }
        guard compact.hasPrefix("(") else { throw fail("must start with '(' (e.g. \"(i32,str)->ptr\")") }
        guard let close = compact.firstIndex(of: ")") else { throw fail("missing ')' after the argument types") }
        let rest = compact[compact.index(after: close)...]
        guard rest.hasPrefix("->") else { throw fail("missing '->' and a return type after ')'") }
        let resultText = String(rest.dropFirst(2))
        guard !resultText.isEmpty else { throw fail("missing return type after '->'") }
        let known = CType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let result = CType(rawValue: resultText) else {
            throw fail("unknown return type '\(resultText)' (known: \(known))")
        }
        let inside = compact[compact.index(after: compact.startIndex)..<close]
        var arguments: [CType] = []
        if !inside.isEmpty {
            for (index, part) in inside.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                guard !part.isEmpty else { throw fail("argument \(index + 1) is empty") }
                guard let type = CType(rawValue: String(part)) else {
                    throw fail("unknown type '\(part)' for argument \(index + 1) (known: \(known))")
                }
                guard type != .void else { throw fail("argument \(index + 1) cannot be void") }
                arguments.append(type)
            }
        }
        self.arguments = arguments
        self.result = result
    }
}
