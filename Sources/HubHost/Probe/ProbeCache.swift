import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Probe verdicts on disk, keyed by path, size, mtime and content hash (GStreamer's registry idea, plus the
/// reason it never kept). A hit means no child process, which keeps start-up fast with hundreds of plugins.
/// An entry is valid only for the same file version and the same `hubhost` build (a new host may judge
/// differently); any change of the file clears its quarantine.
///
/// Two files: `probe-cache.json` holds every report and quarantine record; `probe-index.tsv` holds one short line
/// per file version (stamp, hash, passed or not), which is all a warm start with nothing quarantined reads. Both
/// are written only when something changed.
///
/// # Thread safety
/// Lock-protected; several processes may share the file: each saves its own changes over the file as it is then,
/// under an exclusive lock on `probe-cache.json.lock` (the file is replaced atomically).
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

    fileprivate struct Storage {
        var host: String
        var entries: [String: Entry]

        func writeJSON(to out: inout ByteWriter) {
            out.write("{\"entries\":{")
            for (i, (path, entry)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.writeJSONString(path)
                out.byte(UInt8(ascii: ":"))
                entry.writeJSON(to: &out)
            }
            out.write("},\"host\":")
            out.writeJSONString(host)
            out.byte(UInt8(ascii: "}"))
        }
    }

    /// What a warm start needs to know of a file version, read from the index alone.
    public enum Status: Sendable {
        case passed
        case quarantined(QuarantineRecord)
    }

    /// An index line: the stamp and hash of a file version and whether it passed.
    private struct Summary {
        var size: Int64
        var mtimeNanos: Int64
        var inode: UInt64
        var hash: String
        var passed: Bool

        init(_ entry: Entry) {
            size = entry.size
            mtimeNanos = entry.mtimeNanos
            inode = entry.inode
            hash = entry.hash
            passed = entry.quarantine == nil && entry.report != nil
        }

        init(size: Int64, mtimeNanos: Int64, inode: UInt64, hash: String, passed: Bool) {
            self.size = size
            self.mtimeNanos = mtimeNanos
            self.inode = inode
            self.hash = hash
            self.passed = passed
        }
    }

    public let file: URL
    /// Identifies the host build that made the verdicts.
    public let hostIdentity: String
    /// `probe-index.tsv` beside the JSON: one short line per file, all a warm start reads.
    public var indexFile: URL { file.deletingLastPathComponent().appendingPathComponent("probe-index.tsv") }
    private var summaries: [String: Summary] = [:]
    /// The full entries (reports, quarantine records), read from the JSON only when something needs them.
    private var fullEntries: [String: Entry]?
    /// Whether anything changed since the files were read: an unchanged cache is not written again.
    private var changed = false
    /// What this process stored (an entry) or removed (nil), by path: what it writes over the file as it is then,
    /// so that runs sharing the cache keep each other's verdicts (the last writer's whole file used to win, and a
    /// quarantine written by one of several concurrent runs was lost).
    private var edits: [String: Entry?] = [:]
    private let lock = Lock()

    public init(file: URL, hostIdentity: String) {
        self.file = file
        self.hostIdentity = hostIdentity
        summaries = Self.readIndex(indexFile, hostIdentity: hostIdentity) ?? [:]
    }

    /// The entries of the JSON file (lock held).
    private func loadedEntries() -> [String: Entry] {
        if let fullEntries { return fullEntries }
        let entries = entriesOnDisk()
        fullEntries = entries
        return entries
    }

    /// The entries the JSON file holds now. Another hubhost build's passes are not this one's (its checks may
    /// differ), but its quarantines are kept: a plugin that crashed under one build must not be loaded by the
    /// next run of another sharing the cache (a debug and a release build, both on `~/.cache/hubhost`, wiped each
    /// other's, and the plugin crashed again).
    private func entriesOnDisk() -> [String: Entry] {
        var entries: [String: Entry] = [:]
        if case .success(let data) = RegularFile.read(file), let stored = ProbeJSON.decode([UInt8](data), Storage.init)
        {
            entries =
                stored.host == hostIdentity ? stored.entries : stored.entries.filter { $0.value.quarantine != nil }
        }
        return entries
    }

    /// True when the index says a probe passed exactly the bytes of `url` that hash to `hash` (no entry is read).
    func indexPassed(_ url: URL, hash: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let summary = summaries[url.path] else { return false }
        return summary.passed && summary.hash == hash
    }

    /// The verdict for `url` when the cache still describes the file, reading the full entries only for a
    /// quarantine (or a file the index does not hold). Same matching as `lookup`.
    public func status(_ url: URL, stamp: FileStamp, hash: () -> String?) -> Status? {
        lock.lock()
        let summary = summaries[url.path]
        lock.unlock()
        if let summary, summary.passed, summary.size == stamp.size, summary.mtimeNanos == stamp.mtimeNanos,
            summary.inode == stamp.inode
        {
            return .passed
        }
        guard let entry = lookup(url, stamp: stamp, hash: hash) else { return nil }
        if let quarantine = entry.quarantine { return .quarantined(quarantine) }
        return entry.report == nil ? nil : .passed
    }

    /// The cached entry for `url` when it still describes the file: same stamp (cheap, no read), or same hash
    /// when only the mtime moved (a `touch` or a rebuild with identical output).
    public func lookup(_ url: URL, stamp: FileStamp, hash: () -> String?) -> Entry? {
        lock.lock()
        let entry = loadedEntries()[url.path]
        lock.unlock()
        guard let entry else { return nil }
        // A quarantine recorded against module files that have changed since: the file is judged afresh.
        if let quarantine = entry.quarantine, !quarantine.stillApplies {
            remove(url)
            return nil
        }
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
        _ = loadedEntries()
        fullEntries?[url.path] = entry
        summaries[url.path] = Summary(entry)
        edits[url.path] = .some(entry)
        changed = true
        lock.unlock()
    }

    public func remove(_ url: URL) {
        lock.lock()
        _ = loadedEntries()
        let hadEntry = fullEntries?.removeValue(forKey: url.path) != nil
        let hadSummary = summaries.removeValue(forKey: url.path) != nil
        if hadEntry || hadSummary {
            changed = true
            edits[url.path] = .some(nil)
        }
        lock.unlock()
    }

    /// Every quarantined file version the cache knows.
    public var quarantined: [QuarantineRecord] {
        lock.lock()
        defer { lock.unlock() }
        return loadedEntries().values.compactMap(\.quarantine).filter(\.stillApplies).sorted { $0.file < $1.file }
    }

    /// Writes the cache when it changed (atomically: a temp file renamed over the old one): the JSON, then the
    /// index, so an index line never describes a verdict the JSON lacks.
    public func save() {
        lock.lock()
        guard changed else {
            lock.unlock()
            return
        }
        let edits = self.edits
        self.edits = [:]
        changed = false
        lock.unlock()
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        // One writer at a time across processes: the file as it is now, with this process's edits over it.
        let lockFile = open(file.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lockFile >= 0 { while flock(lockFile, LOCK_EX) != 0 && errno == EINTR {} }
        defer { if lockFile >= 0 { close(lockFile) } }
        var entries = entriesOnDisk()
        for (path, edit) in edits {
            if let entry = edit { entries[path] = entry } else { entries.removeValue(forKey: path) }
        }
        lock.lock()
        fullEntries = entries
        summaries = entries.mapValues(Summary.init)
        lock.unlock()
        let storage = Storage(host: hostIdentity, entries: entries)
        let data = Data(ProbeJSON.bytes(storage.writeJSON))
        // Atomic like any output hubhost writes: a link or device at the path is written through, never replaced.
        guard let output = try? OutputFile(path: file.path) else { return }
        output.write(data)
        guard (try? output.commit()) != nil, let index = try? OutputFile(path: indexFile.path) else { return }
        index.write(Data(Self.indexText(storage).utf8))
        try? index.commit()
    }

    // MARK: The index

    private static let indexHeader = "hubhost probe index 1\t"

    /// Lines of `size mtime inode hash p|q path`, tab-separated. Paths holding a tab or a newline are left out:
    /// they are looked up in the JSON.
    private static func indexText(_ storage: Storage) -> String {
        var text = indexHeader + storage.host.replacing("\n", with: " ") + "\n"
        for (path, entry) in storage.entries.sorted(by: { $0.key < $1.key }) {
            guard !path.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A }) else { continue }
            let state = Summary(entry).passed ? "p" : "q"
            text += "\(entry.size)\t\(entry.mtimeNanos)\t\(entry.inode)\t\(entry.hash)\t\(state)\t\(path)\n"
        }
        return text
    }

    /// The index's lines, or nil when it is missing, from another host build, or not an index.
    private static func readIndex(_ url: URL, hostIdentity: String) -> [String: Summary]? {
        guard case .success(let data) = RegularFile.read(url) else { return nil }
        let lines = TabSeparatedLines(data: data)
        guard lines.header == indexHeader + hostIdentity.replacing("\n", with: " ") else { return nil }
        var summaries: [String: Summary] = [:]
        lines.forEachRecord(fieldCount: 6) { f in
            guard f.count == 6, let size = f.int64(0), let mtime = f.int64(1), let inode = f.uint64(2),
                f.isCharacter(4, UInt8(ascii: "p")) || f.isCharacter(4, UInt8(ascii: "q"))
            else { return }  // a damaged line: that file is looked up in the JSON
            summaries[f.string(5)] = Summary(
                size: size, mtimeNanos: mtime, inode: inode, hash: f.string(3),
                passed: f.isCharacter(4, UInt8(ascii: "p")))
        }
        return summaries
    }
}

// MARK: - The JSON file (written and read by hand, see `ProbeJSON`)

extension ProbeCache.Entry {
    func writeJSON(to out: inout ByteWriter) {
        out.key("hash", opening: true)
        out.writeJSONString(hash)
        out.key("inode")
        out.write(Int(truncatingIfNeeded: inode))
        out.key("mtimeNanos")
        out.write(Int(mtimeNanos))
        if let quarantine {
            out.key("quarantine")
            quarantine.writeJSON(to: &out)
        }
        if let report {
            out.key("report")
            report.writeJSON(to: &out)
        }
        out.key("size")
        out.write(Int(size))
        out.byte(UInt8(ascii: "}"))
    }

    init(json scanner: inout JSONScanner) throws {
        var size: Int64?
        var mtimeNanos: Int64?
        var inode: UInt64?
        var hash: String?
        var report: ProbeReport?
        var quarantine: QuarantineRecord?
        try scanner.readObject { scanner, key in
            switch key {
            case "size": size = try scanner.readInteger()
            case "mtimeNanos": mtimeNanos = try scanner.readInteger()
            case "inode": inode = UInt64(bitPattern: try scanner.readInteger())
            case "hash": hash = try scanner.readString()
            case "report": report = try scanner.readNull() ? nil : try ProbeReport(json: &scanner)
            case "quarantine": quarantine = try scanner.readNull() ? nil : try QuarantineRecord(json: &scanner)
            default: _ = try scanner.readValue()
            }
        }
        guard let size, let mtimeNanos, let inode, let hash else {
            throw ProbeJSON.MissingKey(key: "size, mtimeNanos, inode or hash", object: "cache entry")
        }
        self.init(size: size, mtimeNanos: mtimeNanos, inode: inode, hash: hash)
        self.report = report
        self.quarantine = quarantine
    }
}

extension ProbeCache.Storage {
    init(json scanner: inout JSONScanner) throws {
        var host: String?
        var entries: [String: ProbeCache.Entry] = [:]
        try scanner.readObject { scanner, key in
            switch key {
            case "host": host = try scanner.readString()
            case "entries":
                try scanner.readObject { scanner, path in entries[path] = try ProbeCache.Entry(json: &scanner) }
            default: _ = try scanner.readValue()
            }
        }
        guard let host else { throw ProbeJSON.MissingKey(key: "host", object: "probe cache") }
        self.init(host: host, entries: entries)
    }
}
