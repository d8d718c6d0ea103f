#if canImport(Glibc)
    import Glibc
#endif

/// Lines for the user on standard error, written whole with one `write`.
public enum StandardError {
    public static func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }
}
