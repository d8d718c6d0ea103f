import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `hubhost probe FILE` (or `validate`) in a child process with a time limit and turns what happened into
/// a verdict: the report when the child finished, or a quarantine record naming the phase it died or hung in,
/// the signal, and the tail of its stderr.
public struct ProbeRunner: Sendable {
    /// Told once per file whose probe has not answered for `slowNoticeSeconds` (a scan of plugins that hang says
    /// nothing for their whole budget otherwise: ten took 50 s in silence). From any thread; nil: nobody is told.
    nonisolated(unsafe) public static var slowProbeNotice: (@Sendable (String) -> Void)?
    static let slowProbeNoticeSeconds = 2.0

    /// Tells `slowProbeNotice` that the probe of `file` has not answered (in `phase`, when known).
    func saySlow(_ file: URL, phase: String? = nil) {
        Self.slowProbeNotice?(
            "\(TerminalText.escaped(file.lastPathComponent)): no answer from its probe for "
                + "\(Self.slowProbeNoticeSeconds.compactSeconds)\(phase.map { " (in \($0))" } ?? ""); given up after "
                + "\(timeout.compactSeconds)")
    }

    public enum Verdict: Sendable {
        case passed(ProbeReport)
        case quarantined(QuarantineRecord, report: ProbeReport?)

        /// The child's report, when it got as far as writing one.
        public var report: ProbeReport? {
            switch self {
            case .passed(let report): return report
            case .quarantined(_, let report): return report
            }
        }
    }

    /// The `hubhost` executable that runs the suite.
    public var executable: URL
    /// How long a child may take before it is killed (and the file quarantined as hanging).
    public var timeout: Double
    /// Where children put their private plugin copies and output; each child gets its own subfolder.
    public var workDirectory: URL

    /// How many probe children this runner (and its copies) started: a cache hit starts none.
    public var probeCount: Int { counter.value }
    let counter = Counter()

    /// A warm `hubhost probe --serve` process that forks a child per probe (see `ProbeServer`), when asked for.
    private let server: ProbeServerClient?

    /// Folders already cleaned by this process.
    nonisolated(unsafe) private static var cleaned: Set<String> = []
    private static let cleanedLock = Lock()

    /// Removes, once per process and folder, the scratch folders (`probe-PID-…`, `scan-PID-…`) of hubhost processes
    /// that ended without removing theirs (killed while a probe ran): nothing else in the folder is touched.
    static func removeStaleScratch(in workDirectory: URL) {
        let first = cleanedLock.withLock { cleaned.insert(workDirectory.path).inserted }
        guard first, let names = try? FileManager.default.contentsOfDirectory(atPath: workDirectory.path) else {
            return
        }
        for name in names where name.hasPrefix("probe-") || name.hasPrefix("scan-") {
            let parts = name.split(separator: "-")
            guard parts.count == 3, let pid = pid_t(parts[1]), pid != getpid() else { continue }
            // Ended, or a zombie its parent never reaped (a container whose first process reaps nothing).
            if (kill(pid, 0) != 0 && errno == ESRCH) || Self.isZombie(pid) {
                try? FileManager.default.removeItem(at: workDirectory.appendingPathComponent(name))
            }
        }
    }

    /// Whether `pid` has ended and only waits to be reaped (state Z).
    static func isZombie(_ pid: pid_t) -> Bool { LeftoverProcesses.status(of: pid)?.state == "Z" }

    /// - Parameter warm: probe through a long-lived fork server instead of starting `hubhost` for every probe
    ///   (what the dev loop wants: it saves the start-up of a process on every reload).
    public init(executable: URL, timeout: Double = 5, workDirectory: URL, warm: Bool = false) {
        self.executable = executable
        self.timeout = timeout
        self.workDirectory = workDirectory
        self.server = warm ? ProbeServerClient(executable: executable) : nil
    }

    /// The `hubhost` to run children with: `$HUBHOST_EXECUTABLE` (ignored under setuid), this process when it is hubhost, else a
    /// `hubhost` next to this executable (tests and benchmarks live in the same build folder).
    public static func defaultExecutable() -> URL? {
        if let explicit = HostEnvironment.current[HostEnvironment.executable] {
            return URL(fileURLWithPath: explicit)
        }
        guard let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let running = URL(fileURLWithPath: me)
        if running.lastPathComponent == "hubhost" { return running }
        var dir = running.deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("hubhost")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Probes `file` (whose stamp and hash the caller read) in a child.
    public func probe(_ file: URL, stamp: FileStamp, hash: String, extraArguments: [String] = []) -> Verdict {
        verdict(file, stamp: stamp, hash: hash, child: runChild(file, extraArguments: extraArguments))
    }

    /// What a child's end and output say about `file`: its report, or the quarantine naming the phase it crashed,
    /// hung or failed in.
    func verdict(_ file: URL, stamp: FileStamp, hash: String, child: ChildResult) -> Verdict {
        // Split on bytes: a split on Characters would break graphemes across the whole output.
        let lines = child.stdout.utf8.split(separator: UInt8(ascii: "\n")).map(Substring.init)
        // Read only when the child did not pass: it names where the child was.
        var lastPhase: ProbePhase? { child.phase ?? lines.reversed().lazy.compactMap(ProbeJSON.phaseLine).first }
        let report = lines.last.flatMap(ProbeJSON.reportLine)

        func quarantine(
            _ kind: QuarantineRecord.Kind, phase: ProbePhase?, signal: String? = nil,
            message: String, sentByPlugin: Bool = false
        ) -> Verdict {
            var record = QuarantineRecord(
                file: file.path, size: stamp.size, mtimeNanos: stamp.mtimeNanos, hash: hash,
                kind: kind, phase: phase?.phase ?? "start", component: phase?.component,
                // The probe's own sample models, a story of the plugin's (named as it named it), or the module-file
                // binding an eager singleton was being made from.
                model: phase?.model.map {
                    switch phase?.phase {
                    case "drawing a story": "story " + TerminalText.quoted($0)
                    case ConformanceSuite.eagerSingletonsPhase: TerminalText.escaped($0)
                    default: "sample model " + TerminalText.quoted($0)
                    }
                },
                signal: signal, message: message, stderrTail: child.stderrTail,
                date: Date())
            // A module file's binding may be what was wrong: changing the files clears it, as changing the plugin.
            if sentByPlugin { record.sentByPlugin = true }
            // Not for a Rust panic: it names its own file and line, and the address would be Rust's abort code.
            if kind == .crash, !child.stderrTail.split(separator: "\n").contains(where: CrashText.isRustPanic) {
                record.codeOffset = lines.reversed().lazy.compactMap(ProbeJSON.faultOffsetLine).first
            }
            if phase?.phase == ConformanceSuite.eagerSingletonsPhase {
                record.moduleFilesDigest = ModuleFile.digest(ofFilesIn: file.deletingLastPathComponent())
            }
            return .quarantined(record, report: report)
        }
        if child.timedOut {
            // The budget is the whole probe's (every component, every sample model), not one call's: a plugin with
            // tens of thousands of components can run out of it without any call hanging.
            return quarantine(
                .hang, phase: lastPhase,
                message:
                    "the probe was not done after \(timeout.compactSeconds), the budget for the whole plugin; killed")
        }
        if let signal = child.signal {
            // A Swift trap names its file, line and reason: that is the message.
            let fatal = CrashText.fatalError(in: child.stderrTail.split(separator: "\n").map(String.init))
            let name = Self.signalName(signal)
            // A stop signal the child noted none of came from plugin code in it (SIGKILL cannot be noted).
            let sentByPlugin =
                QuarantineRecord.stopSignalNames.contains(name) && name != "SIGKILL"
                && child.stopSignalFromOutside == false
            let message =
                sentByPlugin
                ? "plugin code sent it to its own process"
                : QuarantineRecord.stopSignalNames.contains(name)
                    ? "the probe was ended by \(name), most likely from outside hubhost; kept out of this run only, and "
                        + "probed again next time"
                    : fatal ?? ""
            return quarantine(.crash, phase: lastPhase, signal: name, message: message, sentByPlugin: sentByPlugin)
        }
        guard let report else {
            return quarantine(
                .failure, phase: lastPhase,
                message: "the probe exited with status \(child.exitStatus ?? -1) without a report")
        }
        if let fatal = report.firstFatal {
            return quarantine(
                .failure, phase: ProbePhase(phase: fatal.name, component: fatal.component),
                message: fatal.message ?? "failed")
        }
        return .passed(report)
    }

    /// Runs `hubhost validate --child FILE` and returns its report, or a failure describing the crash or hang.
    /// Runs the suite on `file` for `hubhost validate`; with `view`, also over that view's models.
    public func validate(_ file: URL, view: URL? = nil) -> (report: ProbeReport?, failure: String?) {
        let stamp = FileStamp.of(file) ?? FileStamp(size: 0, mtimeNanos: 0, inode: 0)
        let extra = view.map { ["--view", $0.path] } ?? []
        switch probe(file, stamp: stamp, hash: ContentDigest.of(file: file) ?? "", extraArguments: extra) {
        case .passed(let report): return (report, nil)
        case .quarantined(let record, let report):
            return (
                report,
                record.kind == .failure && report != nil
                    ? nil
                    : record.reason
                        + (record.stderrTail.isEmpty || record.stderrTail == record.message
                            ? "" : "\n  stderr: " + CrashText.lastLines(of: record.stderrTail, limit: 400))
            )
        }
    }

    // MARK: - The child process

    struct ChildResult {
        var exitStatus: Int32?
        var signal: Int32?
        var timedOut = false
        var stdout = ""
        var stderrTail = ""
        /// Where the child was when it stopped, when it said so elsewhere than on stdout (a scanner's `PhaseBox`).
        var phase: ProbePhase?
        /// Ended by a stop signal: whether it came from outside the child (nil: not known, as for SIGKILL).
        var stopSignalFromOutside: Bool?
    }

    /// Spawns the executable with `arguments`, stdout and stderr going to files (no pipe can fill up and block
    /// the child), and waits at most `timeout` before SIGKILL.
    func runChild(_ file: URL, extraArguments: [String] = []) -> ChildResult {
        counter.increment()
        Self.removeStaleScratch(in: workDirectory)
        let scratch = workDirectory.appendingPathComponent("probe-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        if extraArguments.isEmpty, var result = server?.run(file: file, scratch: scratch, timeout: timeout) {
            result.stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            result.stderrTail = CrashText.tail(of: stderr)
            return result
        }
        let arguments = ["probe", file.path] + extraArguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var result = ChildResult()
        let pid: pid_t
        switch Self.spawnChild(
            executable, arguments + ["--cache", scratch.appendingPathComponent("cache").path], actions: &actions)
        {
        case .success(let child): pid = child
        case .failure(let error):
            result.exitStatus = 127
            result.stderrTail = "cannot run \(executable.path): \(String(cString: strerror(error.code.rawValue)))"
            return result
        }

        var timer = ChildTimer(pid: pid)
        var status: Int32 = 0
        var pause: useconds_t = 200
        var saidSlow = false
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if done < 0 && errno != EINTR { break }
            if !saidSlow, timer.look() >= Self.slowProbeNoticeSeconds {
                saidSlow = true
                saySlow(file)
            }
            if timer.look() > timeout {
                kill(-pid, SIGKILL)  // its group: what its plugin forked too (`OwnProcessGroup`)
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                result.timedOut = true
                break
            }
            usleep(pause)
            pause = min(pause * 2, 1_000)  // a probe takes tens of ms: poll finely, it is on the reload's critical path
        }
        OwnProcessGroup.ended(pid)
        if !result.timedOut {
            // WIFEXITED / WIFSIGNALED, spelled out (the macros are not imported).
            let termSignal = status & 0x7F
            if termSignal == 0 {
                result.exitStatus = (status >> 8) & 0xFF
            } else if termSignal != 0x7F {
                result.signal = termSignal
            }
        }
        result.stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        result.stderrTail = CrashText.tail(of: stderr)
        return result
    }

    /// Starts `hubhost ARGUMENTS…` as a probe child with `actions` applied to its descriptors: marked as a probe
    /// child (it probes nothing itself) and without the Swift backtracer, which would spend a while symbolicating
    /// a plugin's crash when the signal is all we need. Returns its pid, or the `posix_spawn` error.
    static func spawnChild(
        _ executable: URL, _ arguments: [String], actions: inout posix_spawn_file_actions_t,
        environment extra: [String: String] = [:]
    ) -> Result<pid_t, POSIXError> {
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var environment = ProcessInfo.processInfo.environment
        environment["HUBHOST_PROBE_CHILD"] = "1"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { _, new in new }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }
        var pid: pid_t = 0
        let spawned = OwnProcessGroup.spawn(&pid, executable.path, &actions, argv, envp)
        return spawned == 0 ? .success(pid) : .failure(POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOEXEC))
    }

    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL",
            SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGTRAP: "SIGTRAP",
            SIGPIPE: "SIGPIPE", SIGSYS: "SIGSYS", SIGALRM: "SIGALRM", SIGXFSZ: "SIGXFSZ", SIGXCPU: "SIGXCPU",
            SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGHUP: "SIGHUP",
            SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGSTKFLT: "SIGSTKFLT", SIGIO: "SIGIO", SIGPWR: "SIGPWR",
            SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}

extension Double {
    var compactSeconds: String { self == rounded() ? "\(Int(self)) s" : String(printf: "%.1f s", self) }
    /// "414 pt", "320.5 pt".
    var compactPoints: String { self == rounded() ? "\(Int(self)) pt" : String(printf: "%.1f pt", self) }
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
