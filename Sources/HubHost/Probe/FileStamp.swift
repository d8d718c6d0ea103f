import Foundation

/// What `stat` says about a file, the cheap part of its identity (the hash is the expensive part).
public struct FileStamp: Hashable, Codable, Sendable {
    public var size: Int64
    /// Modification time in nanoseconds since the epoch.
    public var mtimeNanos: Int64
    public var inode: UInt64

    /// nil when the file does not exist or is not a regular file.
    public static func of(_ url: URL) -> FileStamp? {
        var st = stat()
        guard stat(url.path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(
            size: Int64(st.st_size),
            mtimeNanos: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
            inode: UInt64(st.st_ino))
    }
}
