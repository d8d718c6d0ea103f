/// Where bytes that should be UTF-8 stop being it, so an error can point at the line and byte.
public enum UTF8Check {
    /// The 0-based offset of the first byte that is not part of valid UTF-8; nil when all are.
    public static func firstInvalidByte(_ bytes: some Collection<UInt8>) -> Int? {
        guard bytes.contains(where: { $0 >= 0x80 }), String(validating: bytes, as: UTF8.self) == nil else { return nil }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&iterator) { offset += UTF8.width(scalar) }
        return offset
    }
}
