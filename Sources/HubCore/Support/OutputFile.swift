import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// A file a command writes because the user named it (`-o FILE`), opened as every Unix tool opens one.
///
/// - `-` is standard output.
/// - A regular file, or a path where nothing exists yet, is replaced atomically: the output goes to a temporary
///   file in the same folder (keeping an existing file's mode) that is renamed over the path on `commit()`, so a
///   failed run never leaves half a file behind.
/// - Anything else (a device such as `/dev/null`, a FIFO, a socket, a symlink) is opened and written through,
///   never replaced: a symlink stays a link and `/dev/null` stays a device, even for root.
///
/// Writes are buffered (64 KiB) so a large drawing streams out instead of being held twice.
public final class OutputFile {
    public struct Failure: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// As the user gave it (for messages).
    public let path: String
    /// Where it is: relative to the directory hubhost started in, whatever plugin code did to the process's since.
    private let target: String
    private let fd: Int32
    /// The temporary file renamed over `path` on commit (atomic replace only).
    private let temporary: String?
    private let closesDescriptor: Bool
    /// Set for an unnamed (O_TMPFILE) file: on commit it is linked under this prefix and a random suffix, then
    /// renamed over `path`.
    private var linkPrefix: String?
    private var buffer: [UInt8] = []
    private var failure: Failure?
    private var finished = false
    private static let bufferSize = 64 << 10
    /// Linux's O_TMPFILE (`__O_TMPFILE | O_DIRECTORY`), a macro Swift does not import: `open` a folder with it
    /// for a file with no name.
    public static let unnamedFile: Int32 = 0o20_000_000 | O_DIRECTORY

    /// Opens `path` for writing as described above.
    public init(path: String) throws {
        self.path = path
        target = ProcessStart.absolute(path)
        if path == "-" {
            (fd, temporary, closesDescriptor) = (StandardOutput.descriptor, nil, false)
            return
        }
        var status = stat()
        let exists = lstat(target, &status) == 0
        if !exists && errno != ENOENT { throw Failure(path: path, reason: Self.lastError()) }
        let newFileMode: mode_t = 0o666 & ~ProcessStart.userMask
        // A file its owner made read-only is not replaced behind their back (as `>` and `cp` refuse it; root may).
        if exists && (status.st_mode & S_IFMT) == S_IFREG && access(target, W_OK) != 0 {
            throw Failure(path: path, reason: Self.lastError() + (errno == EACCES ? " (the file is read-only)" : ""))
        }
        if !exists || (status.st_mode & S_IFMT) == S_IFREG {
            let folder = PathText.folder(target)  // "." for a bare name
            // A replaced file keeps its mode, a new one gets the usual 0666 less the user's umask (a plugin may have
            // changed the process's).
            let mode: mode_t = exists ? status.st_mode & 0o7777 : newFileMode
            let prefix = folder + "/." + Self.temporaryStem(PathText.fileName(target)) + ".hubhost-"
            // Unnamed until commit (O_TMPFILE): a process killed mid-write (a plugin crash in a streamed render)
            // leaves nothing behind. File systems without it get a named temporary file.
            let unnamed = open(folder, Self.unnamedFile | O_WRONLY | O_CLOEXEC, mode)
            if unnamed >= 0 {
                fchmod(unnamed, mode)
                (fd, temporary, closesDescriptor) = (unnamed, nil, true)
                linkPrefix = prefix
            } else {
                var template = Array((prefix + "XXXXXX").utf8CString)
                let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
                if descriptor >= 0 {
                    fchmod(descriptor, mode)  // mkstemp makes 0600
                    (fd, temporary, closesDescriptor) = (descriptor, String(cString: template), true)
                } else if exists, errno == EACCES || errno == EPERM {
                    // A file the user may write in a folder they may not: written in place, as `>` would (not
                    // atomic, but the only way the user could write it too).
                    let inPlace = open(target, O_WRONLY | O_TRUNC | O_CLOEXEC)
                    guard inPlace >= 0 else { throw Failure(path: path, reason: Self.lastError()) }
                    (fd, temporary, closesDescriptor) = (inPlace, nil, true)
                } else {
                    throw Failure(path: path, reason: Self.lastError())
                }
            }
        } else {
            // Written through: O_TRUNC only when the link ends at a regular file (a device or FIFO has no length); a
            // link to nothing yet makes its target, as `>` does.
            var linked = stat()
            let resolves = stat(target, &linked) == 0
            let truncates = resolves && (linked.st_mode & S_IFMT) == S_IFREG
            let descriptor = open(
                target, O_WRONLY | O_CLOEXEC | (truncates ? O_TRUNC : 0) | (resolves ? 0 : O_CREAT), newFileMode)
            guard descriptor >= 0 else { throw Failure(path: path, reason: Self.lastError()) }
            (fd, temporary, closesDescriptor) = (descriptor, nil, true)
        }
        // Plugin code that closes or replaces it is then found (a worker checks after calls: `OwnDescriptors`).
        if closesDescriptor { OwnDescriptors.watch(fd) }
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if !finished { discard() }
    }

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    public func write(_ bytes: some Collection<UInt8>) {
        if bytes.count >= Self.bufferSize {
            flush()
            Array(bytes).withUnsafeBytes { writeThrough($0) }
        } else {
            if buffer.count + bytes.count > Self.bufferSize { flush() }
            buffer.append(contentsOf: bytes)
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count >= Self.bufferSize {
            flush()
            writeThrough(bytes)
        } else {
            if buffer.count + bytes.count > Self.bufferSize { flush() }
            buffer.append(contentsOf: bytes)
        }
    }

    /// Finishes the file: flushes, and renames a temporary file over the path. Throws the first write error.
    public func commit() throws {
        guard !finished else { return }
        flush()
        finished = true
        var temporary = self.temporary
        if let linkPrefix, failure == nil {
            // Linked before the descriptor closes (closing an unnamed file frees it).
            temporary = linkUnnamed(prefix: linkPrefix)
        }
        if closesDescriptor { OwnDescriptors.forget(fd) }
        if closesDescriptor, close(fd) != 0, failure == nil { failure = Failure(path: path, reason: Self.lastError()) }
        if let temporary {
            if failure == nil, rename(temporary, target) != 0 {
                failure = Failure(path: path, reason: Self.lastError())
            }
            if failure != nil { unlink(temporary) }
        }
        if let failure { throw failure }
    }

    /// Gives the unnamed file a name beside `path` (a fresh random one); nil, with `failure` set, when it cannot.
    private func linkUnnamed(prefix: String) -> String? {
        for _ in 0..<16 {
            let name = prefix + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0 { return name }
            if errno != EEXIST { break }
        }
        failure = Failure(path: path, reason: Self.lastError())
        return nil
    }

    /// Gives up: a temporary file is removed and the path is left as it was.
    public func discard() {
        guard !finished else { return }
        finished = true
        if closesDescriptor {
            OwnDescriptors.forget(fd)
            close(fd)
        }
        if let temporary { unlink(temporary) }
    }

    private func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeThrough($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` to the file now; the first failure is kept for `commit` and later writes are skipped.
    private func writeThrough(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty, !writeAll(fd, bytes) else { return }
        OwnDescriptors.noteFailure(errno, on: fd)  // closed under it: plugin code's doing
        failure = Failure(path: path, reason: Self.lastError())
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }

    /// `name`, cut so that the temporary name made from it (".NAME.hubhost-" and up to 13 random characters)
    /// stays within a file name's 255 bytes: a legal 240-byte name could not be written.
    static func temporaryStem(_ name: String) -> String { PathText.prefix(name, bytes: 255 - 23) }
}
