#if canImport(Glibc)
    import Glibc
#endif

/// The descriptors hubhost writes the user's output through (standard output's private copy, each `-o` file),
/// by identity, so plugin code that closes or replaces them (a "daemonizing" loop: every descriptor closed, or
/// pointed at /dev/null) is found instead of a run that "succeeds" with its output in /dev/null, or fails with
/// "Bad file descriptor" and names no plugin. A worker checks them with its standard error (`CallRecorder`).
public enum OwnDescriptors {
    private struct Watched {
        var fd: Int32
        var device: UInt64
        var inode: UInt64
    }
    nonisolated(unsafe) private static var watched: [Watched] = []
    nonisolated(unsafe) private static var badDescriptorSeen = false
    private static let lock = Lock()

    /// Remembers what `fd` is now.
    public static func watch(_ fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        lock.withLock {
            watched.removeAll { $0.fd == fd }
            watched.append(Watched(fd: fd, device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
    }

    /// Stops watching `fd` (hubhost is about to close it); one that is not what it was any more is noted first.
    public static func forget(_ fd: Int32) {
        lock.withLock {
            if let entry = watched.first(where: { $0.fd == fd }), !isIntact(entry) { badDescriptorSeen = true }
            watched.removeAll { $0.fd == fd }
        }
    }

    /// Notes a failed write: EBADF on a descriptor hubhost opened and watches means something else closed it (one
    /// hubhost never had, such as a standard output the user closed, is not plugin code's doing).
    public static func noteFailure(_ error: Int32, on fd: Int32) {
        guard error == EBADF else { return }
        lock.withLock { if watched.contains(where: { $0.fd == fd }) { badDescriptorSeen = true } }
    }

    private static func isIntact(_ entry: Watched) -> Bool {
        var info = stat()
        return fstat(entry.fd, &info) == 0 && UInt64(info.st_dev) == entry.device && UInt64(info.st_ino) == entry.inode
    }

    /// False when a watched descriptor was closed or now names another file, or a write met a closed one.
    public static var intact: Bool {
        lock.withLock {
            !badDescriptorSeen && watched.allSatisfy(isIntact)
        }
    }
}
