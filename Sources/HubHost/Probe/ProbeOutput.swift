import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a probe child writes its lines (begin lines, phases, reports), kept away from plugin code: a plugin that
/// closes or replaces its standard output (`close(1)` in init, a daemon's habit) hid every report that came after,
/// so the scanner blamed the wrong plugin and phase ("failed in unload: exited with status 0 without a report").
///
/// `protect` moves the channel to a descriptor of its own and points standard output at standard error, so what a
/// plugin prints lands with the rest of its output, as it does in a worker. The standard descriptors are put back
/// after each plugin, so the next one in a scan starts as the first did; a plugin that closed or replaced standard
/// error is said, as a worker's supervisor says it.
public enum ProbeOutput {
    /// The channel's descriptor: standard output until `protect` moves it.
    nonisolated(unsafe) private(set) static var descriptor: Int32 = 1
    /// Copies of the standard descriptors as `protect` left them, and what they were (device and inode).
    nonisolated(unsafe) private static var saved: [(copy: Int32, identity: FileIdentity?)] = []

    /// Moves the channel off standard output (once per process; again after a fork that set new descriptors up).
    public static func protect() {
        let moved = fcntl(1, F_DUPFD_CLOEXEC, 10)
        guard moved >= 0 else { return }
        descriptor = moved
        dup2(2, 1)
        saved = (0...2).map { fd in (fcntl(fd, F_DUPFD_CLOEXEC, 10), FileIdentity(descriptor: fd)) }
    }

    /// Writes `bytes` to the channel.
    static func write(_ bytes: UnsafeRawBufferPointer) {
        _ = writeAll(descriptor, bytes)
    }

    /// Whether standard error is still what `protect` found (true before `protect`).
    static var standardErrorIntact: Bool {
        guard saved.count == 3 else { return true }
        return FileIdentity(descriptor: 2) == saved[2].identity && saved[2].identity != nil
    }

    /// Puts back every standard descriptor a plugin closed or replaced.
    static func restore() {
        for (fd, entry) in saved.enumerated()
        where entry.copy >= 0 && FileIdentity(descriptor: Int32(fd)) != entry.identity {
            dup2(entry.copy, Int32(fd))
        }
    }
}
