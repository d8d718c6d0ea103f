#if canImport(Glibc)
    import Glibc
#endif

/// Lines for the user on standard error, written whole with one `write`.
public enum StandardError {
    public static func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = writeAll(2, $0) }
    }
}

/// hubhost's own standard output. Plugin code shares the C library's `stdout` and descriptor 1 with the host, so
/// a plugin's debugging `printf` would land in the middle of a rendered document or a JSON trace. Before plugin
/// code can run, `divertPluginOutput` points descriptor 1 at standard error and keeps a private copy of the
/// original for the host: what a plugin prints is still seen (on stderr), and what hubhost writes stays whole.
public enum StandardOutput {
    /// Where the host writes its output: 1 until plugin output is diverted.
    nonisolated(unsafe) public private(set) static var descriptor: Int32 = STDOUT_FILENO

    /// Sends whatever is written to descriptor 1 from now on (plugin code) to standard error, and the host's
    /// output to a copy of the old descriptor 1. Once per process; if a descriptor cannot be made, nothing
    /// changes.
    public static func divertPluginOutput() {
        guard descriptor == STDOUT_FILENO else { return }
        fflush(stdout)  // what the host printed before goes out first, where it was meant to
        let copy = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 10)
        guard copy >= 0 else { return }
        guard dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else {
            close(copy)
            return
        }
        // A plugin's printf then reaches stderr a line at a time, as a terminal would show it, not in blocks that a
        // crash loses.
        setvbuf(stdout, nil, _IOLBF, 0)
        descriptor = copy
        OwnDescriptors.watch(copy)
    }

    /// Writes `text`, then `terminator`, to the host's output in one `write`.
    public static func print(_ text: String, terminator: String = "\n") {
        var bytes = Array(text.utf8)
        bytes.append(contentsOf: terminator.utf8)
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes `bytes` to the host's output; a failure is kept in `writeFailure` (the first one).
    public static func write(_ bytes: UnsafeRawBufferPointer) {
        if !writeAll(descriptor, bytes), writeFailure == nil {
            readerWentAway = errno == EPIPE
            writeFailure = String(cString: strerror(errno))
        }
    }

    /// The failure was the reader closing its end (`| head`): the shell expects the SIGPIPE end of any tool.
    nonisolated(unsafe) public private(set) static var readerWentAway = false

    /// Why writing the host's output failed (a full disk, /dev/full, a closed pipe), or nil: the command must not
    /// end "done" with its output lost.
    nonisolated(unsafe) public private(set) static var writeFailure: String?
}
