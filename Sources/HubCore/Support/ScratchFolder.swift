import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Where hubhost makes its own temporary files and folders, and how: `$TMPDIR` when it names a folder, else
/// `/tmp` (a CI job's `TMPDIR` naming a folder not made yet stopped every command that starts a worker, with a
/// message that named neither); each folder made new with `mkdtemp` (mode 0700, a name no one can take first: a
/// predictable `hubhost-validate-PID` made by another user was adopted, and emptied at the end).
public enum ScratchFolder {
    /// `$TMPDIR` when it is an existing folder, else `/tmp`.
    public static var base: URL {
        if let value = getenv("TMPDIR").map({ String(cString: $0) }), value.hasPrefix("/") {
            var info = stat()
            if stat(value, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return URL(fileURLWithPath: value) }
        }
        return URL(fileURLWithPath: "/tmp")
    }

    /// A new folder `PREFIX-XXXXXX` under `base`, made by this call only (mode 0700).
    public static func make(_ prefix: String) throws -> URL {
        var template = Array(base.appendingPathComponent("\(prefix)-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return URL(fileURLWithPath: String(cString: made))
    }
}
