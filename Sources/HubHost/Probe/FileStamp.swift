import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

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
        return FileStamp(st)
    }

    init(_ info: stat) {
        size = Int64(info.st_size)
        mtimeNanos = Self.nanoseconds(info.st_mtim)
        inode = UInt64(info.st_ino)
    }

    public init(size: Int64, mtimeNanos: Int64, inode: UInt64) {
        self.size = size
        self.mtimeNanos = mtimeNanos
        self.inode = inode
    }

    /// A `stat` time in nanoseconds since the epoch.
    static func nanoseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
}
