#if canImport(Glibc)
    import Glibc
#endif

extension String {
    /// `format` filled in as C's printf does ("%.1f", "%08x"), for the few places that need fixed decimals or
    /// padded hex (Foundation's `String(format:)` is not in FoundationEssentials). The conversions are C's: a
    /// Swift `Int` is `%ld`, an `Int32` or `UInt32` is `%d` or `%x`.
    public init(printf format: String, _ arguments: CVarArg...) {
        // In the C locale whatever the process's is: plugin code may call setlocale ("1,0 ms" after a German one).
        let previous = uselocale(Self.cLocale)
        defer { uselocale(previous) }
        var buffer = [CChar](repeating: 0, count: 64)
        var needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
            needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = needed < 0 ? "" : String(decoding: buffer[..<Int(needed)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The C locale, for this thread only while a string is formatted (`uselocale`).
    nonisolated(unsafe) private static let cLocale: locale_t = newlocale(Int32(1) << LC_NUMERIC, "C", nil)
}
