import CFFI
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

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
    private let types: [FFISignature.CType]
    private let hasStrings: Bool

    public struct PrepareError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Prepares a call of `function` with `signature`. - Throws: when libffi refuses the signature.
    public init(function: UnsafeRawPointer, signature: FFISignature) throws {
        self.signature = signature
        self.function = function
        types = signature.arguments
        hasStrings = signature.arguments.contains(.str)
        cif = .allocate(capacity: 1)
        argumentTypes = .allocate(capacity: max(signature.arguments.count, 1))
        for (index, type) in signature.arguments.enumerated() { argumentTypes[index] = FFITypes.pointer(for: type) }
        let status = ffi_prep_cif(
            cif, FFI_DEFAULT_ABI, UInt32(signature.arguments.count),
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
            case .argumentCount(let expected, let got): return "takes \(expected) argument(s), got \(got)"
            case .argument(let index, let mismatch): return "argument \(index + 1) \(mismatch)"
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
    /// case of each value). Argument storage is one stack allocation per call.
    public func call(values: [FFIValue]) throws -> FFIValue {
        let count = signature.arguments.count
        guard values.count == count else { throw CallError.argumentCount(expected: count, got: values.count) }
        // Layout: `count` 8-byte slots, `count` pointers to them, then the strings, NUL-terminated, borrowed by
        // the callee for the call.
        var stringBytes = 0
        if hasStrings {
            for value in values { if case .string(let s?) = value { stringBytes += s.utf8.count + 1 } }
        }
        let slotBytes = count * 8
        let needed = max(slotBytes * 2 + stringBytes, 8)
        return try values.withUnsafeBufferPointer { values in
            func fill(_ base: UnsafeMutableRawPointer) throws -> FFIValue {
                let pointers = (base + slotBytes).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                var strings = base + slotBytes * 2
                for index in 0..<count {
                    let slot = base + index * 8
                    pointers[index] = slot
                    try Self.store(values[index], as: types[index], into: slot, index: index, strings: &strings)
                }
                return invoke(arguments: count == 0 ? nil : pointers)
            }
            // Small calls (the usual) use a fixed buffer on the stack; larger ones a temporary allocation.
            if needed <= 256 {
                return try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) {
                    try fill(UnsafeMutableRawPointer($0.baseAddress!))
                }
            }
            return try withUnsafeTemporaryAllocation(byteCount: needed, alignment: 8) { try fill($0.baseAddress!) }
        }
    }

    /// Arguments converted and laid out once, for calls that always pass the same values (a module-file
    /// binding called with its defaults). Owns copies of its strings.
    public final class PreparedArguments: @unchecked Sendable {
        let block: UnsafeMutableRawPointer
        let pointers: UnsafeMutablePointer<UnsafeMutableRawPointer?>?

        init(values: [FFIValue], types: [FFISignature.CType]) throws {
            let count = types.count
            var stringBytes = 0
            for value in values { if case .string(let s?) = value { stringBytes += s.utf8.count + 1 } }
            block = .allocate(byteCount: max(count * 16 + stringBytes, 8), alignment: 8)
            let pointerBase = (block + count * 8).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            pointers = count == 0 ? nil : pointerBase
            var strings = block + count * 16
            for index in 0..<count {
                pointerBase[index] = block + index * 8
                do {
                    try FFICall.store(
                        values[index], as: types[index], into: block + index * 8, index: index, strings: &strings)
                } catch {
                    block.deallocate()
                    throw error
                }
            }
        }

        deinit { block.deallocate() }
    }

    /// Converts and lays out `values` once for repeated calls.
    public func prepare(_ values: [FFIValue]) throws -> PreparedArguments {
        guard values.count == signature.arguments.count else {
            throw CallError.argumentCount(expected: signature.arguments.count, got: values.count)
        }
        return try PreparedArguments(values: values, types: signature.arguments)
    }

    /// Calls with arguments prepared by `prepare`: only `ffi_call` and the decoding of the result remain.
    public func call(prepared: PreparedArguments) -> FFIValue { invoke(arguments: prepared.pointers) }

    @inline(__always)
    private func invoke(arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> FFIValue {
        // Small integer returns are widened to ffi_arg by libffi, so the result slot is ffi_arg-sized.
        var result: UInt64 = 0
        withUnsafeMutableBytes(of: &result) { resultBytes in
            ffi_call(
                cif, unsafeBitCast(function, to: (@convention(c) () -> Void).self), resultBytes.baseAddress, arguments)
        }
        return Self.decode(result, as: signature.result)
    }

    @inline(__always)
    private static func store(
        _ value: FFIValue, as type: FFISignature.CType, into slot: UnsafeMutableRawPointer,
        index: Int, strings: inout UnsafeMutableRawPointer
    ) throws {
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
        case (.str, .string(var s?)):
            let start = strings
            let length = s.withUTF8 { utf8 -> Int in
                if let source = utf8.baseAddress { start.copyMemory(from: source, byteCount: utf8.count) }
                return utf8.count
            }
            start.storeBytes(of: 0, toByteOffset: length, as: UInt8.self)
            strings = start + length + 1
            slot.storeBytes(of: start, as: UnsafeMutableRawPointer?.self)
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
