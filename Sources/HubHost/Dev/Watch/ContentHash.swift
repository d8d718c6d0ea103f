import Foundation

/// A 64-bit content hash of a file, written as 16 hex digits. Not cryptographic: it only has to tell two builds
/// of a plugin apart (and skip no-op rebuilds), quickly, without a crypto dependency.
public enum ContentHash {
    /// The hash of the file's bytes, or nil when it cannot be read.
    public static func of(file url: URL) -> String? {
        guard let data = try? Data(contentsOf: url, options: .alwaysMapped) else { return nil }
        return of(data: data)
    }

    public static func of(data: Data) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(data.count)
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let words = raw.count / 8
            // FNV-style multiply per 8-byte word, with an extra shift so high bits reach low ones.
            for i in 0..<words {
                let w = raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)
                h = (h ^ w) &* 0x0000_0100_0000_01B3
                h ^= h >> 29
            }
            for i in (words * 8)..<raw.count {
                h = (h ^ UInt64(raw[i])) &* 0x0000_0100_0000_01B3
            }
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

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
