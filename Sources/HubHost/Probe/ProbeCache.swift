import Foundation
import HubCore

/// Probe verdicts on disk, keyed by path, size, mtime and content hash (GStreamer's registry idea, plus the
/// reason it never kept). A hit means no child process, which keeps start-up fast with hundreds of plugins.
/// An entry is valid only for the same file version and the same `hubhost` build (a new host may judge
/// differently); any change of the file clears its quarantine.
///
/// # Thread safety
/// Lock-protected; several processes may share the file (it is replaced atomically, last writer wins).
public final class ProbeCache: @unchecked Sendable {
    public struct Entry: Codable, Sendable {
        public var size: Int64
        public var mtimeNanos: Int64
        public var inode: UInt64
        public var hash: String
        /// Set when the file passed.
        public var report: ProbeReport?
        /// Set when it was quarantined.
        public var quarantine: QuarantineRecord?
    }

    private struct Storage: Codable {
        var host: String
        var entries: [String: Entry]
    }

    public let file: URL
    /// Identifies the host build that made the verdicts.
    public let hostIdentity: String
    private var entries: [String: Entry] = [:]
    private let lock = NSLock()

    public init(file: URL, hostIdentity: String) {
        self.file = file
        self.hostIdentity = hostIdentity
        if let data = try? Data(contentsOf: file),
            let stored = try? JSONDecoder().decode(Storage.self, from: data), stored.host == hostIdentity
        {
            entries = stored.entries
        }
    }

    /// The cached entry for `url` when it still describes the file: same stamp (cheap, no read), or same hash
    /// when only the mtime moved (a `touch` or a rebuild with identical output).
    public func lookup(_ url: URL, stamp: FileStamp, hash: () -> String?) -> Entry? {
        lock.lock()
        let entry = entries[url.path]
        lock.unlock()
        guard let entry else { return nil }
        if entry.size == stamp.size, entry.mtimeNanos == stamp.mtimeNanos, entry.inode == stamp.inode { return entry }
        guard entry.size == stamp.size, let current = hash(), current == entry.hash else { return nil }
        var moved = entry
        moved.mtimeNanos = stamp.mtimeNanos
        moved.inode = stamp.inode
        store(url, moved)
        return moved
    }

    public func store(_ url: URL, _ entry: Entry) {
        lock.lock()
        entries[url.path] = entry
        lock.unlock()
    }

    public func remove(_ url: URL) {
        lock.lock()
        entries[url.path] = nil
        lock.unlock()
    }

    /// Every quarantined file version the cache knows.
    public var quarantined: [QuarantineRecord] {
        lock.lock()
        defer { lock.unlock() }
        return entries.values.compactMap(\.quarantine).sorted { $0.file < $1.file }
    }

    /// Writes the cache (atomically: a temp file renamed over the old one).
    public func save() {
        lock.lock()
        let storage = Storage(host: hostIdentity, entries: entries)
        lock.unlock()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(storage) else { return }
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Atomic like any output hubhost writes: a link or device at the path is written through, never replaced.
        guard let output = try? OutputFile(path: file.path) else { return }
        output.write(data)
        try? output.commit()
    }
}
