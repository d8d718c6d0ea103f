import CFFI
import Foundation

/// A C function prepared once for libffi: the signature is parsed and checked, the `ffi_cif` is prepared and
/// cached, and each `call` only converts the arguments and runs `ffi_call`.
///
/// # Thread safety
/// Immutable after init; `call` may run on several threads at once (argument storage is per call, on the stack).
public final class FFICall: @unchecked Sendable {
    public let signature: FFISignature
    public let function: UnsafeRawPointer
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>

    public struct PrepareError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Prepares a call of `function` with `signature`. - Throws: when libffi refuses the signature.
    public init(function: UnsafeRawPointer, signature: FFISignature) throws {
        self.signature = signature
        self.function = function
        cif = .allocate(capacity: 1)
        argumentTypes = .allocate(capacity: max(signature.arguments.count, 1))
        for (index, type) in signature.arguments.enumerated() { argumentTypes[index] = FFITypes.pointer(for: type) }
        let status = ffi_prep_cif(cif, FFI_DEFAULT_ABI, UInt32(signature.arguments.count),
                                  FFITypes.pointer(for: signature.result), argumentTypes)
        guard status == FFI_OK else {
            cif.deallocate()
            argumentTypes.deallocate()
            throw PrepareError(message: "libffi cannot prepare \(signature) (ffi_prep_cif status \(status.rawValue))")
        }
    }

    deinit {
        cif.deallocate()
        argumentTypes.deallocate()
    }

    /// Why a call was refused before reaching the function.
    public enum CallError: Error, Equatable, CustomStringConvertible {
        case argumentCount(expected: Int, got: Int)
        case argument(index: Int, FFIValue.Mismatch)
        public var description: String {
            switch self {
            case let .argumentCount(expected, got): return "takes \(expected) argument(s), got \(got)"
            case let .argument(index, mismatch): return "argument \(index + 1) \(mismatch)"
            }
        }
    }

    /// Calls the function with Swift values, each checked against its C type.
    public func call(_ arguments: [Any]) throws -> FFIValue {
        guard arguments.count == signature.arguments.count else {
            throw CallError.argumentCount(expected: signature.arguments.count, got: arguments.count)
        }
        var values: [FFIValue] = []
        values.reserveCapacity(arguments.count)
        for (index, (argument, type)) in zip(arguments, signature.arguments).enumerated() {
            do { values.append(try FFIValue.from(argument, as: type)) } catch let mismatch as FFIValue.Mismatch {
                throw CallError.argument(index: index, mismatch)
            }
        }
        return try call(values: values)
    }

    /// Calls the function with values already converted (the fast path: no per-argument type checks beyond the
    /// case of each value).
    public func call(values: [FFIValue]) throws -> FFIValue {
        let count = signature.arguments.count
        guard values.count == count else { throw CallError.argumentCount(expected: count, got: values.count) }
        // Strings go into one temporary buffer, NUL-terminated, borrowed by the callee for the call.
        var stringBytes = 0
        for value in values { if case let .string(s?) = value { stringBytes += s.utf8.count + 1 } }
        return try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(count, 1)) { slots in
            try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
                try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(stringBytes, 1)) { strings in
                    var stringOffset = 0
                    for index in 0..<count {
                        let slot = UnsafeMutableRawPointer(slots.baseAddress! + index)
                        pointers[index] = slot
                        try store(values[index], as: signature.arguments[index], into: slot, index: index,
                                  strings: strings, offset: &stringOffset)
                    }
                    // Small integer returns are widened to ffi_arg by libffi, so the result slot is ffi_arg-sized.
                    var result: UInt64 = 0
                    withUnsafeMutableBytes(of: &result) { resultBytes in
                        ffi_call(cif, unsafeBitCast(function, to: (@convention(c) () -> Void).self),
                                 resultBytes.baseAddress, count == 0 ? nil : pointers.baseAddress)
                    }
                    return Self.decode(result, as: signature.result)
                }
            }
        }
    }

    private func store(_ value: FFIValue, as type: FFISignature.CType, into slot: UnsafeMutableRawPointer, index: Int,
                       strings: UnsafeMutableBufferPointer<UInt8>, offset: inout Int) throws {
        func mismatch() -> CallError { .argument(index: index, FFIValue.Mismatch(type: type, got: "\(value)")) }
        switch (type, value) {
        case (.i8, .int(let v)): slot.storeBytes(of: Int8(truncatingIfNeeded: v), as: Int8.self)
        case (.i16, .int(let v)): slot.storeBytes(of: Int16(truncatingIfNeeded: v), as: Int16.self)
        case (.i32, .int(let v)): slot.storeBytes(of: Int32(truncatingIfNeeded: v), as: Int32.self)
        case (.i64, .int(let v)): slot.storeBytes(of: v, as: Int64.self)
        case (.u8, .uint(let v)): slot.storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
        case (.u16, .uint(let v)): slot.storeBytes(of: UInt16(truncatingIfNeeded: v), as: UInt16.self)
        case (.u32, .uint(let v)): slot.storeBytes(of: UInt32(truncatingIfNeeded: v), as: UInt32.self)
        case (.u64, .uint(let v)): slot.storeBytes(of: v, as: UInt64.self)
        case (.f32, .double(let v)): slot.storeBytes(of: Float(v), as: Float.self)
        case (.f64, .double(let v)): slot.storeBytes(of: v, as: Double.self)
        case (.ptr, .pointer(let p)): slot.storeBytes(of: p, as: UnsafeMutableRawPointer?.self)
        case (.str, .string(nil)): slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        case (.str, .string(let s?)):
            let start = strings.baseAddress! + offset
            var cursor = start
            for byte in s.utf8 {
                cursor.pointee = byte
                cursor += 1
            }
            cursor.pointee = 0
            offset += s.utf8.count + 1
            slot.storeBytes(of: UnsafeMutableRawPointer(start), as: UnsafeMutableRawPointer?.self)
        default: throw mismatch()
        }
    }

    private static func decode(_ raw: UInt64, as type: FFISignature.CType) -> FFIValue {
        switch type {
        case .void: return .void
        case .i8: return .int(Int64(Int8(truncatingIfNeeded: raw)))
        case .i16: return .int(Int64(Int16(truncatingIfNeeded: raw)))
        case .i32: return .int(Int64(Int32(truncatingIfNeeded: raw)))
        case .i64: return .int(Int64(bitPattern: raw))
        case .u8: return .uint(UInt64(UInt8(truncatingIfNeeded: raw)))
        case .u16: return .uint(UInt64(UInt16(truncatingIfNeeded: raw)))
        case .u32: return .uint(UInt64(UInt32(truncatingIfNeeded: raw)))
        case .u64: return .uint(raw)
        case .f32: return .double(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))))
        case .f64: return .double(Double(bitPattern: raw))
        case .ptr: return .pointer(UnsafeMutableRawPointer(bitPattern: UInt(raw)))
        case .str:
            guard let p = UnsafePointer<CChar>(bitPattern: UInt(raw)) else { return .string(nil) }
            return .string(String(cString: p))
        }
    }
}

/// libffi's built-in type descriptors. They are C globals; their addresses are found once through the dynamic
/// linker, which is simpler and safer than escaping `&global` pointers out of Swift.
enum FFITypes {
    private static let table: [FFISignature.CType: UnsafeMutablePointer<ffi_type>] = {
        let names: [FFISignature.CType: String] = [
            .i8: "ffi_type_sint8", .u8: "ffi_type_uint8", .i16: "ffi_type_sint16", .u16: "ffi_type_uint16",
            .i32: "ffi_type_sint32", .u32: "ffi_type_uint32", .i64: "ffi_type_sint64", .u64: "ffi_type_uint64",
            .f32: "ffi_type_float", .f64: "ffi_type_double", .str: "ffi_type_pointer", .ptr: "ffi_type_pointer",
            .void: "ffi_type_void",
        ]
        let process = dlopen(nil, RTLD_NOW)
        return names.mapValues { name in
            guard let address = dlsym(process, name) else { fatalError("libffi is linked but \(name) is missing") }
            return address.assumingMemoryBound(to: ffi_type.self)
        }
    }()

    static func pointer(for type: FFISignature.CType) -> UnsafeMutablePointer<ffi_type> { table[type]! }
}
