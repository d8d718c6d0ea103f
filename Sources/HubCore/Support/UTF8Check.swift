/// Where bytes that should be UTF-8 stop being it, so an error can point at the line and byte.
public enum UTF8Check {
    /// The 0-based offset of the first byte that is not part of valid UTF-8; nil when all are.
    public static func firstInvalidByte(_ bytes: some Collection<UInt8>) -> Int? {
        let hasNonASCII =
            bytes.withContiguousStorageIfAvailable(containsNonASCII) ?? bytes.contains(where: { $0 >= 0x80 })
        guard hasNonASCII, String(validating: bytes, as: UTF8.self) == nil else { return nil }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&iterator) { offset += UTF8.width(scalar) }
        return offset
    }

    /// Whether any byte has its high bit set, eight bytes at a time (a view is megabytes of mostly ASCII).
    private static func containsNonASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        var bits: UInt64 = 0
        while offset + 8 <= bytes.count {
            bits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            bits |= UInt64(bytes[offset])
            offset += 1
        }
        return bits & 0x8080_8080_8080_8080 != 0
    }
}
