import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A file that changed and has settled: written completely, unchanged for a quiet period, with new content.
public struct FileChange: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case changed, deleted }
    public let url: URL
    public let kind: Kind
    /// The content hash of the settled file (nil for deletions).
    public let hash: String?
    public let stamp: FileStamp?
    /// Monotonic time of the last inotify event for the path (the close of the write), and when it settled.
    /// `settledAt - lastEventAt` is the quiet period plus any wait for an unfinished file.
    public let lastEventAt: Double
    public let settledAt: Double
    /// Only the file's attributes changed (its mode, owner or times): the content is the one reported last. A
    /// plugin refused for its permissions loads once they are fixed, without a rebuild.
    public var sameContent = false

    public init(url: URL, kind: Kind, hash: String?, stamp: FileStamp?, lastEventAt: Double, settledAt: Double) {
        self.url = url
        self.kind = kind
        self.hash = hash
        self.stamp = stamp
        self.lastEventAt = lastEventAt
        self.settledAt = settledAt
    }

    public var description: String {
        "\(kind.rawValue) \(url.lastPathComponent)" + (hash.map { " #\($0.prefix(8))" } ?? "")
    }
}

/// Watches folders with inotify and reports settled changes of files in them.
///
/// Why folders, not files: builds replace a file by renaming over it, which drops a watch on the old inode.
/// A write is known complete when the writer closes the file (IN_CLOSE_WRITE) or renames it into place
/// (IN_MOVED_TO) and the file then satisfies `isReady` (for plugins: a complete ELF): such a change settles at
/// once. Any other event (a file created, still being written) waits until nothing has happened to the path for
/// `quietPeriod`; then the file must have the same size and mtime as at its last event and satisfy `isReady`,
/// otherwise the watcher keeps waiting, because a file still being written must never be loaded. A file whose content hash
/// equals the last reported one is skipped (a no-op rebuild).
///
/// Installs that inotify alone does not see are checked once a second: a watched folder deleted and made again
/// (`rm -rf build/plugins; make`) or a symlink to a folder repointed is a new folder, watched afresh and its files
/// looked at again; an accepted file that is a symlink (a build system "installing" its output) is reported when
/// what it points at changes, since the rebuild happens in another folder.
///
/// # Thread safety
/// `onChange` is called on the watcher's own thread, one batch at a time. `start`/`stop` may be called from any
/// thread.
public final class FileWatcher: @unchecked Sendable {
    public typealias Readiness = (URL) -> ELFCompleteness.Verdict

    public let directories: [URL]
    public let quietPeriod: Double
    /// Which file names to report (e.g. `*.so`, or the one view file).
    private let accepts: (URL) -> Bool
    private let isReady: Readiness
    private let onChange: ([FileChange]) -> Void

    private var fd: Int32 = -1
    private var watches: [Int32: URL] = [:]
    /// Per watched folder: its watch, and the folder it was (device and inode, links followed) when added.
    private var folderWatches: [URL: (wd: Int32?, identity: FileIdentity?)] = [:]
    /// Accepted files that are symlinks, with the stamp of the file each points at.
    private var linkStamps: [String: FileStamp?] = [:]
    private var nextCheck = 0.0
    static let checkInterval = 1.0
    private var pending: [String: Pending] = [:]
    private var knownHashes: [String: String] = [:]
    private let lock = Lock()
    private var running = false
    private var wakePipe: [Int32] = [-1, -1]

    private struct Pending {
        var url: URL
        var lastEventAt: Double
        var stampAtEvent: FileStamp?
        /// The last event said the write is over (closed after writing, or renamed into place).
        var closed = false
        /// Every event since the path settled last was a change of attributes only (chmod, chown, touch).
        var attributesOnly = false
        /// Not settled before this time (a deletion waiting for its replacement).
        var notBefore: Double = 0
        /// Since when the settled file has been found unfinished (a truncated ELF image), and whether
        /// `onWaiting` was told.
        var incompleteSince: Double?
        var waitingSaid = false

        func deadline(quietPeriod: Double) -> Double {
            max(notBefore, closed ? lastEventAt : lastEventAt + quietPeriod)
        }
    }

    /// Told once, on the watcher's thread, when a settled file has stayed unfinished this long (a truncated ELF
    /// image, a build that stopped half-way): it is not loaded, and the developer would otherwise hear nothing.
    public var onWaiting: ((_ file: URL, _ why: String) -> Void)?
    static let waitingNoticeAfter = 2.0

    /// How long a known file that disappeared may take to come back before it counts as deleted. GNU ld unlinks its
    /// output, then creates it: under a parallel build the gap reached 121 ms, past the quiet period, and a rebuild
    /// became an unload and a fresh load (its components falling back, their UI states lost).
    static let deletionGrace = 1.0

    /// - Parameters:
    ///   - isReady: decides whether a settled file is finished; `.incomplete` makes the watcher wait another
    ///     quiet period. Defaults to ELF completeness for `.so` files and "ready" for anything else.
    public init(
        directories: [URL], quietPeriod: Double = 0.15, accepts: @escaping (URL) -> Bool,
        isReady: Readiness? = nil, onChange: @escaping ([FileChange]) -> Void
    ) {
        self.directories = directories
        self.quietPeriod = quietPeriod
        self.accepts = accepts
        self.isReady = isReady ?? { url in url.pathExtension == "so" ? ELFCompleteness.check(url) : .complete }
        self.onChange = onChange
    }

    deinit { stop() }

    /// Remembers the current hashes of files that exist already, so only real changes are reported.
    public func seed(_ files: [URL]) {
        lock.lock()
        defer { lock.unlock() }
        for file in files {
            knownHashes[file.standardizedFileURL.path] = ContentDigest.of(file: file)
            noteLink(file.standardizedFileURL)
        }
    }

    /// Keeps `linkStamps` up to date for `url` (lock held): its target's stamp when it is a symlink.
    private func noteLink(_ url: URL) {
        var info = stat()
        if lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            linkStamps[url.path] = FileStamp.of(url)
        } else {
            linkStamps[url.path] = nil
        }
    }

    /// Starts watching. Throws when inotify is unavailable or a folder cannot be watched; a folder that does not
    /// exist (deleted by a `make clean` while a worker restarted) is watched once the check finds it made again.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !running else { return }
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw WatchError("inotify_init1 failed: \(String(cString: strerror(errno)))") }
        for directory in directories {
            let wd = inotify_add_watch(fd, directory.path, Self.mask)
            if wd < 0 && errno == ENOENT {
                folderWatches[directory.standardizedFileURL] = (nil, nil)
                continue
            }
            guard wd >= 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                fd = -1
                watches = [:]
                folderWatches = [:]
                throw WatchError("cannot watch \(directory.path): \(reason)")
            }
            watches[wd] = directory.standardizedFileURL
            folderWatches[directory.standardizedFileURL] = (wd, FileIdentity(directory.path))
        }
        nextCheck = Monotonic.now() + Self.checkInterval
        guard pipe(&wakePipe) == 0 else { throw WatchError("pipe failed") }
        running = true
        guard Threads.detach(name: "hubhost.watcher", { [weak self] in self?.loop() }) else {
            running = false
            for descriptor in [fd, wakePipe[0], wakePipe[1]] { close(descriptor) }
            (fd, wakePipe) = (-1, [-1, -1])
            watches = [:]
            throw WatchError("cannot start the watcher's thread")
        }
    }

    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB)

    public func stop() {
        lock.lock()
        guard running else {
            lock.unlock()
            return
        }
        running = false
        var byte: UInt8 = 1
        _ = write(wakePipe[1], &byte, 1)
        lock.unlock()
        // The loop closes the descriptors when it sees `running == false`.
    }

    // MARK: - The loop

    private func loop() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            lock.lock()
            let isRunning = running
            let nextDeadline = min(
                pending.values.map { $0.deadline(quietPeriod: quietPeriod) }.min() ?? .infinity, nextCheck)
            lock.unlock()
            guard isRunning else { break }

            let timeoutMs = Int32(max(0, (nextDeadline - Monotonic.now()) * 1000).rounded(.up))
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeoutMs)
            if ready > 0, fds[0].revents & Int16(POLLIN) != 0 {
                let count = read(fd, &buffer, buffer.count)
                if count > 0 { record(events: buffer, count: count) }
            }
            if Monotonic.now() >= nextCheck { checkFoldersAndLinks() }
            settle()
        }
        close(fd)
        close(wakePipe[0])
        close(wakePipe[1])
    }

    /// Parses `struct inotify_event` records: wd, mask, cookie, len (4 bytes each), then `len` bytes of name.
    private func record(events buffer: [UInt8], count: Int) {
        let now = Monotonic.now()
        var offset = 0
        lock.lock()
        defer { lock.unlock() }
        while offset + 16 <= count {
            let wd = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Int32.self) }
            let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
            let nameLength = Int(
                buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
            let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + nameLength)].prefix { $0 != 0 }
            offset += 16 + nameLength
            // The folder itself went (deleted, or its file system unmounted): its watch is gone. Watched afresh by
            // the next check once it is back, even if the new folder has the old one's inode number.
            if mask & UInt32(IN_IGNORED) != 0, let directory = watches.removeValue(forKey: wd) {
                folderWatches[directory] = (nil, nil)
                nextCheck = min(nextCheck, now + quietPeriod)
                continue
            }
            guard let directory = watches[wd], !nameBytes.isEmpty else { continue }
            let url = directory.appendingPathComponent(String(decoding: nameBytes, as: UTF8.self))
            guard accepts(url) else { continue }
            noteLink(url)
            let earlier = pending[url.path]
            let attributes = mask & UInt32(IN_ATTRIB) != 0 && mask & ~UInt32(IN_ATTRIB | IN_ISDIR) == 0
            pending[url.path] = Pending(
                url: url, lastEventAt: now, stampAtEvent: FileStamp.of(url),
                // A chmod right after the write (an installer's) does not make the write unfinished again.
                closed: mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 || (attributes && earlier?.closed == true),
                attributesOnly: attributes && (earlier?.attributesOnly ?? true))
        }
    }

    /// The once-a-second check: folders that are not the ones watched any more, and symlinks whose target changed.
    private func checkFoldersAndLinks() {
        let now = Monotonic.now()
        lock.lock()
        defer { lock.unlock() }
        nextCheck = now + Self.checkInterval
        for (folder, watched) in folderWatches {
            let identity = FileIdentity(folder.path)
            guard identity != watched.identity else { continue }
            if let wd = watched.wd {
                inotify_rm_watch(fd, wd)  // fails harmlessly when the folder's deletion removed it
                watches[wd] = nil
            }
            var wd: Int32?
            if identity != nil {
                let added = inotify_add_watch(fd, folder.path, Self.mask)
                if added >= 0 {
                    watches[added] = folder
                    wd = added
                }
            }
            folderWatches[folder] = (wd, identity)
            // What the new folder holds, and what the old one held, is looked at again (unchanged files are not
            // reported: their hashes are known).
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            var paths = Set(names.map { folder.appendingPathComponent($0) }.filter(accepts).map(\.path))
            paths.formUnion(knownHashes.keys.filter { PathText.folder($0) == folder.path })
            for path in paths {
                let url = URL(fileURLWithPath: path)
                noteLink(url)
                pending[path] = Pending(url: url, lastEventAt: now, stampAtEvent: FileStamp.of(url), closed: true)
            }
        }
        for (path, stamp) in linkStamps {
            let url = URL(fileURLWithPath: path)
            let current = FileStamp.of(url)
            guard current != stamp else { continue }
            linkStamps[path] = current
            // Written where the link points, perhaps still: settled after a quiet period, as any write is.
            pending[path] = Pending(url: url, lastEventAt: now, stampAtEvent: current)
        }
    }

    /// Reports every pending path whose quiet period is over and whose file is finished.
    private func settle() {
        let now = Monotonic.now()
        var changes: [FileChange] = []
        lock.lock()
        let due = pending.filter { now >= $0.value.deadline(quietPeriod: quietPeriod) }
        lock.unlock()
        for (path, item) in due {
            let stamp = FileStamp.of(item.url)
            var retry = false
            var awaitReplacement = false
            var unfinished: String?
            var change: FileChange?
            lock.lock()
            let isKnown = knownHashes[path] != nil
            lock.unlock()
            if stamp == nil, isKnown, now < item.lastEventAt + Self.deletionGrace {
                awaitReplacement = true  // a build that unlinks, then creates: the new file is on its way
            } else if stamp == nil {
                lock.lock()
                let wasKnown = knownHashes.removeValue(forKey: path) != nil
                lock.unlock()
                // A temporary file that came and went during a build was never reported: nothing to undo.
                if wasKnown {
                    change = FileChange(
                        url: item.url, kind: .deleted, hash: nil, stamp: nil,
                        lastEventAt: item.lastEventAt, settledAt: now)
                }
            } else if stamp != item.stampAtEvent {
                retry = true  // written to since its last event (an event may still be on its way)
            } else if case .incomplete(let why) = isReady(item.url) {
                retry = true  // e.g. a truncated ELF: wait for the rest, never load or quarantine it
                unfinished = why
            } else if let hash = ContentDigest.of(file: item.url) {
                lock.lock()
                let old = knownHashes[path]
                knownHashes[path] = hash
                lock.unlock()
                if old != hash || item.attributesOnly {
                    change = FileChange(
                        url: item.url, kind: .changed, hash: hash, stamp: stamp,
                        lastEventAt: item.lastEventAt, settledAt: Monotonic.now())
                    change?.sameContent = old == hash
                }
            }
            lock.lock()
            if awaitReplacement {
                // Due again when the grace is over, unless an event of the path (the new file) comes first.
                if pending[path]?.lastEventAt == item.lastEventAt {
                    pending[path]?.notBefore = item.lastEventAt + Self.deletionGrace
                }
            } else if retry {
                // Wait a further quiet period, measured from now; keep the stamp we just saw. (A new event of the
                // path replaces this, and a close or rename settles it at once again.)
                var next = Pending(
                    url: item.url, lastEventAt: now, stampAtEvent: stamp, closed: false,
                    attributesOnly: item.attributesOnly)
                if let unfinished {
                    next.incompleteSince = item.incompleteSince ?? now
                    next.waitingSaid = item.waitingSaid
                    if !next.waitingSaid, now - next.incompleteSince! >= Self.waitingNoticeAfter {
                        next.waitingSaid = true
                        waitingNotices.append((item.url, unfinished))
                    }
                }
                pending[path] = next
            } else if pending[path]?.lastEventAt == item.lastEventAt {
                pending[path] = nil
            }
            lock.unlock()
            if let change { changes.append(change) }
        }
        let notices = waitingNotices
        waitingNotices = []
        for (url, why) in notices { onWaiting?(url, why) }
        if !changes.isEmpty {
            onChange(changes.sorted { $0.url.path < $1.url.path })
        }
    }

    /// Files `settle` found unfinished long enough to say so (told after the lock is let go).
    private var waitingNotices: [(URL, String)] = []
}

public struct WatchError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Monotonic seconds (CLOCK_MONOTONIC), for latencies.
public enum Monotonic {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
