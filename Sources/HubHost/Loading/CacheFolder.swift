import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The folder for private image copies and the probe cache, checked once before anything uses it.
///
/// A folder hubhost cannot write used to surface as every plugin quarantined ("the probe exited with status 127
/// without a report"), hiding the cause. Now the cause is reported once, and the run goes on in a private
/// temporary folder instead.
public enum CacheFolder {
    /// `directory` (nil: the default `$XDG_CACHE_HOME/hubhost/images`) when it can be created and written; else
    /// a fresh temporary folder, with the problem to report.
    public static func usable(_ directory: URL?) -> (directory: URL?, problem: String?) {
        let target = directory ?? PrivateCopies.defaultDirectory()
        if let reason = unwritable(target) {
            let template = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-cache-XXXXXX").path
            var bytes = Array(template.utf8CString)
            guard let made = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                return (directory, "cache folder \(target.path) is not writable (\(reason)), nor is a temporary one")
            }
            let fallback = URL(fileURLWithPath: String(cString: made))
            removeAtExit(fallback)
            return (
                fallback,
                "cache folder \(target.path) is not writable (\(reason)); using \(fallback.path) "
                    + "for this run (no probe results or image copies are kept)"
            )
        }
        return (directory, nil)
    }

    /// The temporary folders made for this run, removed when the process exits, as the message promises that
    /// nothing is kept. (A process that is killed cannot; its folder stays, under the temporary folder.)
    nonisolated(unsafe) private static var made: [String] = []

    private static func removeAtExit(_ folder: URL) {
        if made.isEmpty {
            atexit { for path in CacheFolder.made { try? FileManager.default.removeItem(atPath: path) } }
        }
        made.append(folder.path)
    }

    /// Why `folder` cannot be written, or nil.
    static func unwritable(_ folder: URL) -> String? {
        // mkdir -p, keeping errno for the message.
        var path = ""
        for component in folder.standardizedFileURL.path.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o755) != 0 && errno != EEXIST { return String(cString: strerror(errno)) }
        }
        var probe = Array(folder.appendingPathComponent(".hubhost-write-XXXXXX").path.utf8CString)
        let fd = probe.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        close(fd)
        unlink(String(cString: probe))
        return nil
    }
}
