import CHubSystem
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A warm probe process: `hubhost probe --serve` starts once, then forks a fresh child for every probe request.
///
/// Why: starting `hubhost` (dynamic linking, Swift runtime and Foundation start-up) costs tens of milliseconds,
/// most of a probe. A fork of the already started, single-threaded server costs about one. The plugin still runs
/// only in the forked child, so a crash or hang takes down that child, never the server or the host.
///
/// Protocol on the server's stdin/stdout, one line each: the host writes `PLUGIN\tSCRATCH`; the server answers
/// `PID` as soon as the child runs (the host may SIGKILL it on timeout), then `PID STATUS` (the raw wait status)
/// when it ended. The child writes its JSON lines to SCRATCH/stdout and its stderr to SCRATCH/stderr.
public enum ProbeServer {
    /// The server loop (`hubhost probe --serve`): runs until stdin closes.
    public static func serve() -> Never {
        while let line = readLine(strippingNewline: true) {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else {
                reply("error bad request")
                continue
            }
            let pid = fork()
            if pid == 0 {
                // A group of its own, as every probe has (`OwnProcessGroup`): what its plugin forks is ended with it.
                setpgid(0, 0)
                csystem_exit_when_orphaned()  // threads do not survive fork: the child needs its own
                let scratch = URL(fileURLWithPath: parts[1])
                let out = open(scratch.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                let err = open(scratch.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                dup2(out, 1)
                dup2(err, 2)
                close(out)
                close(err)
                let devNull = open("/dev/null", O_RDONLY)
                dup2(devNull, 0)
                ProbeOutput.protect()
                let loadable = ConformanceSuite.runPrinting(
                    file: URL(fileURLWithPath: parts[0]),
                    cacheDirectory: scratch.appendingPathComponent("cache"))
                _exit(loadable ? 0 : 1)  // no atexit handlers or stdio flushes of the server's state
            }
            guard pid > 0 else {
                reply("error fork failed: \(String(cString: strerror(errno)))")
                continue
            }
            reply("\(pid)")
            // Ended, not yet reaped (so its id still names its group): what its plugin forked goes with it, when
            // the child crashed before it could end that itself.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reply("\(pid) \(status)")
        }
        exit(0)
    }

    private static func reply(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}

/// The host's side of a `ProbeServer`: started on first use, one request at a time.
final class ProbeServerClient: @unchecked Sendable {
    private let executable: URL
    private let lock = Lock()
    private var pid: pid_t = 0
    private var requests: Int32 = -1
    private var answers: Int32 = -1
    private var pending: [UInt8] = []

    init(executable: URL) { self.executable = executable }

    deinit {
        if requests >= 0 { close(requests) }  // EOF: the server exits
        if answers >= 0 { close(answers) }
        if pid > 0 {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    /// Runs one probe; nil when the server cannot be used (the caller then spawns a child itself), also while it
    /// runs another: a build saved after one that hangs waited out the hang's probe (5 s) for its own.
    func run(file: URL, scratch: URL, timeout: Double) -> ProbeRunner.ChildResult? {
        guard lock.tryLock() else { return nil }
        defer { lock.unlock() }
        guard ensureStarted() else { return nil }
        let request = Array("\(file.path)\t\(scratch.path)\n".utf8)
        guard request.withUnsafeBytes({ write(requests, $0.baseAddress, $0.count) }) == request.count,
            let first = readLine(timeout: 10), let child = pid_t(first)
        else {
            shutDown()
            return nil
        }
        var result = ProbeRunner.ChildResult()
        var answer = readLine(timeout: timeout, child: child)
        if answer == nil {
            kill(-child, SIGKILL)  // its group (`ProbeServer.serve`), and the child, had it not made it yet
            kill(child, SIGKILL)
            result.timedOut = true
            answer = readLine(timeout: 10)
        }
        guard let answer, let status = answer.split(separator: " ").last.flatMap({ Int32($0) }) else {
            shutDown()
            return nil
        }
        if !result.timedOut {
            let termSignal = status & 0x7F
            if termSignal == 0 { result.exitStatus = (status >> 8) & 0xFF } else { result.signal = termSignal }
        }
        return result
    }

    private func ensureStarted() -> Bool {
        if pid > 0 { return true }
        var toServer: [Int32] = [0, 0]
        var fromServer: [Int32] = [0, 0]
        guard pipe(&toServer) == 0, pipe(&fromServer) == 0 else { return false }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toServer[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromServer[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, toServer[1])
        posix_spawn_file_actions_addclose(&actions, fromServer[0])
        let spawned = ProbeRunner.spawnChild(executable, ["probe", "--serve"], actions: &actions)
        close(toServer[0])
        close(fromServer[1])
        guard case .success(let child) = spawned else {
            close(toServer[1])
            close(fromServer[0])
            return false
        }
        _ = fcntl(toServer[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromServer[0], F_SETFD, FD_CLOEXEC)
        pid = child
        requests = toServer[1]
        answers = fromServer[0]
        pending = []
        return true
    }

    private func shutDown() {
        if pid > 0 {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        if requests >= 0 { close(requests) }
        if answers >= 0 { close(answers) }
        pid = 0
        requests = -1
        answers = -1
        pending = []
    }

    /// One line from the server, or nil after `timeout` seconds (or when it is gone); time `child` (the probe the
    /// line is about) was stopped does not count.
    private func readLine(timeout: Double, child: pid_t? = nil) -> String? {
        var timer = ChildTimer(pid: child)
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = timeout - timer.look()
            guard left > 0 else { return nil }
            var fds = [pollfd(fd: answers, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, Int32(min(left * 1000, 1000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(answers, &buffer, buffer.count)
            guard n > 0 else { return nil }
            pending += buffer[0..<n]
        }
    }
}
