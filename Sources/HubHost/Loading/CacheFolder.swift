import FoundationEssentials
import HubCore

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
            guard let fallback = try? ScratchFolder.make("hubhost-cache") else {
                return (directory, "cache folder \(target.path) cannot be used (\(reason)), nor can a temporary one")
            }
            removeAtExit(fallback)
            return (
                fallback,
                "cache folder \(target.path) cannot be used (\(reason)); using \(fallback.path) "
                    + "for this run (no probe results or image copies are kept)"
            )
        }
        return (directory, nil)
    }

    /// The temporary folders made for this run, removed when the process exits, as the message promises that
    /// nothing is kept. (A process that is killed cannot; its folder stays, under the temporary folder.)
    nonisolated(unsafe) private static var made: [String] = []

    private static func removeAtExit(_ folder: URL) {
        if made.isEmpty { atexit { CacheFolder.removeTemporaryFolders() } }
        made.append(folder.path)
    }

    /// Removes the temporary folders made for this run (at exit; or before `_exit`, which runs no exit handler).
    public static func removeTemporaryFolders() {
        for path in made { try? FileManager.default.removeItem(atPath: path) }
        made = []
    }

    /// Where private copies go when no `--plugin-cache` is given.
    public static var defaultDirectory: URL { PrivateCopies.defaultDirectory() }

    /// Why `folder` (which exists) is not the user's own to keep plugin copies in, or nil: another user owns it, or
    /// its group or others may write it.
    public static func notTheUsers(_ folder: URL) -> String? {
        var info = stat()
        guard stat(folder.path, &info) == 0 else { return String(cString: strerror(errno)) }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            return "it belongs to another user (uid \(info.st_uid)), who could replace the plugin copies in it"
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return "its group or others may write it, and could replace the plugin copies in it (chmod go-w)"
        }
        return nil
    }

    /// Why `folder` cannot be used as the cache, or nil: it cannot be written (or is full), or it is not the
    /// user's own. Copies in it are loaded as plugin code, so a folder another user can write would let that user
    /// run code as this one, whatever `--trusted-hashes` says of the plugin files.
    static func unwritable(_ folder: URL) -> String? {
        // mkdir -p, keeping errno for the message.
        var path = ""
        for component in folder.standardizedFileURL.path.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o755) != 0 && errno != EEXIST { return String(cString: strerror(errno)) }
        }
        if let reason = notTheUsers(folder) { return reason }
        var probe = Array(folder.appendingPathComponent(".hubhost-write-XXXXXX").path.utf8CString)
        let fd = probe.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { unlink(String(cString: probe)) }
        // A full file system still creates an empty file: a byte written says whether copies would fit at all.
        var byte: UInt8 = 0
        let written = write(fd, &byte, 1)
        let why = errno
        close(fd)
        return written == 1 ? nil : String(cString: strerror(why))
    }
}
