#if canImport(Glibc)
    import Glibc
#endif

/// Lines for the user on standard error, written whole with one `write`.
public enum StandardError {
    public static func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = writeAll(2, $0) }
    }
}
