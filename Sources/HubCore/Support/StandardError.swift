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
    /// Standard output was closed when the process started (`>&-`).
    nonisolated(unsafe) private static var closedAtStart = false

    /// Opens descriptors 0–2 on /dev/null when the process started with them closed: the next file opened would
    /// take the number, and a plugin's printf (standard output) wrote into the `-o` file. Standard output stays
    /// unusable for the host's own output, as it was. Call first, before any file is opened.
    public static func fillClosedStandardDescriptors() {
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) == -1 {
            let null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if null >= 0 && null != fd {
                dup2(null, fd)
                close(null)
            }
            if fd == STDOUT_FILENO { closedAtStart = true }
        }
        // A worker or probe gets this /dev/null as its standard output: it is told the truth.
        if closedAtStart {
            setenv(closedVariable, "1", 1)
        } else if getenv(closedVariable).map({ String(cString: $0) }) == "1" {
            closedAtStart = true
        }
    }

    private static let closedVariable = "HUBHOST_STDOUT_CLOSED"

    /// Sends whatever is written to descriptor 1 from now on (plugin code) to standard error, and the host's
    /// output to a copy of the old descriptor 1. Once per process; if a descriptor cannot be made, nothing
    /// changes.
    public static func divertPluginOutput() {
        guard descriptor == STDOUT_FILENO else { return }
        if closedAtStart {
            // Plugin output goes to standard error; the host's own has nowhere to go, as before (`cannot write -`).
            dup2(STDERR_FILENO, STDOUT_FILENO)
            descriptor = -1
            return
        }
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
