import CHubSystem
import Dispatch
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A worker: this same `hubhost` executable started again with the same command, which loads the plugins and
/// runs the pipeline while this process supervises it (Chromium's renderers, VS Code's extension host, DAW
/// plugin sandboxes). The worker notes every plugin call in a `BlackBox` it shares with us; a watchdog kills it
/// when one call takes longer than `callTimeout`; when it ends, `wait()` says how, and names the culprit.
///
/// Descriptors the worker gets: 0 stdin (ours, or a pipe for `controlIn`), 1 stdout (ours), 2 stderr (a pipe:
/// every line is echoed to our stderr and the last ones kept for the report), 3 the black box, 4 (with a
/// control channel) a pipe for `controlOut`.
public final class WorkerProcess: @unchecked Sendable {
    public struct Options: Sendable {
        public var arguments: [String]
        /// The `hubhost` executable to start; nil: this process's own (an embedder such as the benchmark names it).
        public var executable: String?
        /// Added to (or replacing in) this process's environment.
        public var environment: [String: String] = [:]
        /// Seconds one plugin call may take before the worker is killed as hung.
        public var callTimeout: Double = 2
        /// End what plugin code forked and left running when the worker ends (`LeftoverProcesses`). Only for a
        /// process whose children are its workers alone (hubhost's supervisors): it adopts and ends every other
        /// child it has, so a test runner or an embedding app that starts processes of its own leaves it off.
        public var endsLeftoverProcesses = false
        /// Give the worker a pipe on stdin and one on fd 4 (`controlIn`, `controlOut`).
        public var controlChannel = false
        /// Where the worker's stderr lines go (our stderr by default).
        /// Plugin output reaches the user's terminal escaped (README: text from plugins cannot drive the terminal:
        /// colours, a window title, a clear screen), and cut only when very long.
        public var echo: @Sendable (String) -> Void = { line in
            StandardError.writeLine(TerminalText.line(line, limit: 16_384))
        }

        public init(arguments: [String]) { self.arguments = arguments }
    }

    /// How the worker ended.
    public struct Outcome: Sendable {
        /// The exit status when it exited.
        public var exitStatus: Int32?
        /// The fault, when plugin code crashed, hung or exited the process (or the host crashed: `plugin` nil).
        public var fault: PluginFault?
        /// The last lines of its stderr.
        public var stderrTail: [String]
        /// Killed by SIGPIPE outside plugin code: whoever read its output stopped reading (`hubhost … | head`),
        /// which ends a command-line tool quietly, not a fault.
        public var outputClosed = false
        /// Its stderr was not its own at exit, and no plugin call was seen closing it: plugin code closed
        /// descriptors it did not open (the worker never closes its own), in a call that had returned at once.
        public var lostStderr = false
        /// Processes plugin code forked and left running when the worker ended; ended now ("pid 123 (sleep)").
        public var leftoverProcesses: [String] = []
        /// Ended by a signal that came from outside it (a user's `kill` of the busy process, a terminal closed):
        /// not a plugin fault. What a supervisor says of it, e.g. "SIGTERM from process 4242".
        public var stoppedFromOutside: (signal: Int32, description: String)?

        /// What a supervisor says of `leftoverProcesses`, or nil when there were none.
        public var leftoverReport: String? {
            leftoverProcesses.isEmpty
                ? nil
                : "plugin code left \(leftoverProcesses.count) process(es) running when its worker ended: "
                    + "\(leftoverProcesses.joined(separator: ", ")); hubhost ended them"
        }
    }

    public let pid: pid_t
    public let options: Options
    /// Writes to the worker's stdin (with a control channel).
    public let controlIn: PipeEnd?
    /// Reads what the worker writes on its fd 4 (with a control channel).
    public let controlOut: PipeEnd?

    private let blackBox: BlackBox.Reader
    private let blackBoxDescriptor: Int32
    private let stderrDone = DispatchSemaphore(value: 0)
    private let tailLock = Lock()
    private var tail: [String] = []
    private var hang: BlackBox.Snapshot?
    /// The Swift runtime's last "Fatal error:" line (tailLock): kept even when later lines push it out of the tail.
    private var fatalLine: String?
    /// Leaves backtrace frames out of the tail (tailLock); it follows Rust's "stack backtrace:" sections.
    private var backtraceFilter = CrashText.BacktraceFilter()
    /// Where the worker was when its stderr closed, when that was inside a plugin call: the worker never closes
    /// its own, so that call closed it (tailLock).
    private var stderrClosedDuring: BlackBox.Snapshot?
    private var ended: Outcome?
    private let endLock = Lock()

    /// The executable to start: this process's own.
    public static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    public init(_ options: Options) throws {
        self.options = options
        if options.endsLeftoverProcesses { _ = LeftoverProcesses.adopting }
        let box = Self.aboveStandardDescriptors(try BlackBox.create())
        guard let reader = BlackBox.Reader(descriptor: box) else {
            close(box)
            throw POSIXError(.ENOMEM)
        }
        blackBox = reader
        blackBoxDescriptor = box

        var errPipe: [Int32] = [-1, -1]
        var inPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        guard Self.pipeClosedOnExec(&errPipe) else { throw POSIXError(.EMFILE) }
        if options.controlChannel {
            guard Self.pipeClosedOnExec(&inPipe), Self.pipeClosedOnExec(&outPipe) else { throw POSIXError(.EMFILE) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if options.controlChannel {
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 4)
        }
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        posix_spawn_file_actions_adddup2(&actions, box, 3)

        let executable = options.executable ?? Self.executable
        let argv = ([executable] + options.arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in options.environment { environment[key] = value }
        environment[BlackBox.environmentKey] = "3"
        environment[WorkerEnvironment.parentKey] = String(getpid())
        // The Swift backtracer would spend seconds symbolicating a plugin's crash; the black box names it.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }

        var pid: pid_t = 0
        let spawned = OwnProcessGroup.spawn(&pid, executable, &actions, argv, envp)
        close(errPipe[1])
        if options.controlChannel {
            close(inPipe[0])
            close(outPipe[1])
        }
        guard spawned == 0 else {
            close(errPipe[0])
            if options.controlChannel {
                close(inPipe[1])
                close(outPipe[0])
            }
            close(box)
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOEXEC)
        }
        self.pid = pid
        // Plugin code in the worker that signals this process (`kill(getppid(), SIGTERM)`) ends the worker, not
        // the user's command or session.
        csystem_guard_supervisor(pid, reader.wordsForSignalHandler)
        controlIn = options.controlChannel ? PipeEnd(inPipe[1]) : nil
        controlOut = options.controlChannel ? PipeEnd(outPipe[0]) : nil
        startReadingStderr(errPipe[0])
    }

    deinit {
        csystem_unguard_supervisor(pid)  // before its black box goes
        close(blackBoxDescriptor)
    }

    /// A pipe whose ends other children do not inherit (`pipe2` is not imported into Swift on glibc).
    private static func pipeClosedOnExec(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        fds = fds.map(aboveStandardDescriptors)
        return true
    }

    /// `fd` moved to a number of 10 or more, closed on exec. The spawn's dup2s write descriptors 0–4 one after
    /// the other: a source numbered 3 or 4 would be overwritten by an earlier dup2 before it is copied (the
    /// worker got its control pipe where the black box belonged, did not know it was a worker, and started a
    /// supervisor of its own).
    private static func aboveStandardDescriptors(_ fd: Int32) -> Int32 {
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
        guard moved >= 0 else {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return fd
        }
        close(fd)
        return moved
    }

    /// What the black box says now.
    public func snapshot() -> BlackBox.Snapshot { blackBox.read() }

    /// Kills the worker (SIGKILL): it is gone, whatever it was doing.
    public func terminate() { kill(pid, SIGKILL) }

    /// Waits for the worker to end, killing it when one plugin call outlasts `callTimeout`. Safe to call from
    /// several threads; every caller gets the same outcome.
    public func wait() -> Outcome {
        endLock.lock()
        defer { endLock.unlock() }
        if let ended { return ended }
        var status: Int32 = 0
        var pause: useconds_t = 500
        var watched: (word: UInt64, timer: ChildTimer)?
        // Readable when the worker ends: the loop sleeps on it (an idle dev supervisor woke 50 times a second),
        // waking to read the black box often enough to time a call, and at once when the worker ends.
        let exitDescriptor = csystem_pidfd_open(pid)
        defer { if exitDescriptor >= 0 { close(exitDescriptor) } }
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid || (done < 0 && errno != EINTR) { break }
            let now = Monotonic.now()
            let box = blackBox.read()
            if box.inPluginCall {
                if var current = watched, current.word == box.callWord {
                    let elapsed = current.timer.look(now: now)
                    watched = current
                    if elapsed > options.callTimeout {
                        hang = box
                        kill(pid, SIGKILL)
                        waitpid(pid, &status, 0)
                        break
                    }
                } else {
                    watched = (box.callWord, ChildTimer(pid: pid, now: now))
                }
            } else {
                watched = nil
            }
            if exitDescriptor >= 0 {
                // In a call: until it would be over its time (at most 250 ms); between calls: 250 ms, as a call
                // that starts meanwhile is timed from when it is first seen.
                let left = watched.map { options.callTimeout - $0.timer.elapsed } ?? 0.25
                var descriptor = pollfd(fd: exitDescriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, Int32((min(max(left, 0.001), 0.25) * 1000).rounded(.up)))
            } else {
                usleep(pause)
                pause = min(pause * 2, 20_000)
            }
        }
        OwnProcessGroup.ended(pid)
        // What plugin code forked is ours now (`LeftoverProcesses`): ended, so its copy of the pipe closes too.
        let leftovers = options.endsLeftoverProcesses ? LeftoverProcesses.end() : []
        _ = stderrDone.wait(timeout: .now() + 2)  // the pipe closes when the worker (and its children) are gone
        var outcome = analyse(status: status)
        outcome.leftoverProcesses = leftovers
        ended = outcome
        return outcome
    }

    /// The stop signal the worker sent this process (0: none), and the black box as it was then.
    private func takeStopSignalSentToSupervisor() -> (Int32, BlackBox.Snapshot) {
        var call: UInt64 = 0
        var location: UInt64 = 0
        let sent = csystem_take_worker_stop_signal(&call, &location)
        return (sent, blackBox.read(callWord: call, location: location))
    }

    private func analyse(status: Int32) -> Outcome {
        tailLock.lock()
        var lines = tail
        if let fatalLine, !lines.contains(fatalLine) { lines.insert(fatalLine, at: 0) }
        let closedDuring = stderrClosedDuring
        tailLock.unlock()
        var outcome = Outcome(exitStatus: nil, fault: nil, stderrTail: lines)
        let box = blackBox.read()
        outcome.lostStderr = box.lostStderr == BlackBox.StderrLoss.atExit
        if let hang {
            outcome.fault = PluginFault(
                kind: .hang, box: hang, signal: nil, exitStatus: nil, timeout: options.callTimeout, stderrTail: lines)
            return outcome
        }
        let termSignal = status & 0x7F
        if termSignal == 0 {
            let code = (status >> 8) & 0xFF
            outcome.exitStatus = code
            if box.lostStderr == BlackBox.StderrLoss.inCall && box.inPluginCall {
                // Found by a worker that checked after each call (`WorkerEnvironment.watchDescriptorsKey`).
                outcome.fault = PluginFault(
                    kind: .closedDescriptors, box: box, signal: nil, exitStatus: code, timeout: nil, stderrTail: lines)
            } else if let note = box.faultNote, !note.onMainThread, let plugin = pluginOnTheStack(of: note) {
                // exit() on a plugin's own thread, whatever the main thread was doing.
                var fault = PluginFault(
                    kind: .exit, box: box, signal: nil, exitStatus: code, timeout: nil, stderrTail: lines)
                fault.blameAnotherThread(on: plugin)
                outcome.fault = fault
            } else if box.inPluginCall {
                // An exit in the middle of a plugin call is the plugin's (`exit()` in plugin code).
                outcome.fault = PluginFault(
                    kind: .exit, box: box, signal: nil, exitStatus: code, timeout: nil, stderrTail: lines)
            } else if code != 0, let closedDuring {
                // It failed after a plugin call closed its stderr: without its descriptors (the output file, the
                // control channel) it could not finish, and it could not say why.
                outcome.fault = PluginFault(
                    kind: .closedDescriptors, box: closedDuring, signal: nil, exitStatus: code, timeout: nil,
                    stderrTail: lines)
            }
        } else if termSignal == SIGPIPE && !box.inPluginCall {
            outcome.outputClosed = true
        } else if termSignal == SIGKILL, case (let sent, let sentBox) = takeStopSignalSentToSupervisor(), sent != 0 {
            // Killed by this supervisor: plugin code sent it a stop signal (see `csystem_guard_supervisor`), in the
            // call in progress when it arrived.
            var fault = PluginFault(
                kind: .crash, box: sentBox, signal: box.signalMeantForSupervisor ?? sent, exitStatus: nil,
                timeout: nil, stderrTail: lines)
            fault.signalledSupervisor = true
            outcome.fault = fault
        } else if let stop = box.stopSignal, stop.signal == termSignal {
            let name = ProbeRunner.signalName(termSignal)
            let from = stop.sender == 0 ? "the kernel (a terminal that hung up)" : "process \(stop.sender)"
            outcome.stoppedFromOutside = (termSignal, "\(name) from \(from)")
        } else if termSignal != 0x7F, !box.inPluginCall, let change = box.stateChange,
            change.change.signals.contains(termSignal)
        {
            // Outside plugin code, from an alarm, timer or limit plugin code set in an earlier call: that call's.
            var fault = PluginFault(
                kind: .crash, box: blackBox.read(callWord: change.callWord, location: 0), signal: termSignal,
                exitStatus: nil, timeout: nil, stderrTail: lines)
            fault.setInCall = change.change.what
            outcome.fault = fault
        } else if termSignal != 0x7F {
            var fault = PluginFault(
                kind: .crash, box: box, signal: termSignal, exitStatus: nil, timeout: nil, stderrTail: lines)
            if let note = box.faultNote, pluginOnTheStack(of: note) == nil,
                let gone = note.addresses.first.flatMap({ blackBox.image(holding: $0, unmapped: true)?.plugin })
            {
                // Where an unloaded plugin's code was: its thread still ran (whatever the main thread was doing).
                fault.blameCodeAfterUnload(on: gone)
            } else if let note = box.faultNote, !note.onMainThread {
                // Not the main thread: the call in progress there may be another plugin's.
                fault.blameAnotherThread(on: pluginOnTheStack(of: note))
            } else if let note = box.faultNote, box.inPluginCall, let plugin = pluginOnTheStack(of: note),
                plugin != fault.plugin
            {
                // Inside one plugin's call, in another plugin's code: a function the caller got from it (a
                // service's) crashed. The code that crashed is to blame, not the plugin that called it.
                fault.blameCodeCalledFromACall(on: plugin)
            } else if let note = box.faultNote, !box.inPluginCall, let plugin = pluginOnTheStack(of: note) {
                // The main thread between calls, in a plugin's code: a destructor or atexit handler run as the
                // worker ended (dlclose, exit), or a signal handler of its own.
                fault.blameCodeOutsideCalls(on: plugin)
            }
            if let note = box.faultNote, let culprit = fault.plugin {
                let unmapped = fault.call == .afterUnload
                // The first address is the faulting instruction; the others are return addresses, one past the
                // call: less one, `addr2line` names the line that called, not the one after it.
                fault.codeOffset =
                    note.addresses.enumerated().lazy.compactMap { index, address -> UInt64? in
                        guard let image = self.blackBox.image(holding: address, unmapped: unmapped),
                            image.plugin == culprit
                        else {
                            return nil
                        }
                        return address - image.start - (index == 0 ? 0 : 1)
                    }.first
            }
            outcome.fault = fault
        }
        return outcome
    }

    /// The plugin whose code is innermost on the noted thread's stack.
    private func pluginOnTheStack(of note: BlackBox.FaultNote) -> BlackBox.PluginInfo? {
        note.addresses.lazy.compactMap(blackBox.plugin(holding:)).first
    }

    private func startReadingStderr(_ fd: Int32) {
        let echo = options.echo
        let read: @Sendable () -> Void = { [weak self] in
            LineReader.read(fd) { bytes in
                let line = String(decoding: bytes, as: UTF8.self)
                echo(line)
                self?.keep(line)
            }
            self?.noteStderrClosed()
            close(fd)
            self?.stderrDone.signal()
        }
        // A thread of its own (it lives as long as the worker); a pool thread if the system refuses one, rather
        // than leaving the pipe unread, which would stall the worker on its first big diagnostic.
        if !Threads.detach(name: "hubhost.stderr", read) { DispatchQueue.global().async(execute: read) }
    }

    /// Read as the pipe reports its end: a call still in progress then is the one that closed the descriptor. (One
    /// that closed it and returned at once is missed here; the worker notes at exit that its stderr is gone, and
    /// a supervisor can run it again checking after each call: `Outcome.lostStderr`.)
    private func noteStderrClosed() {
        let box = blackBox.read()
        guard box.inPluginCall else { return }
        tailLock.lock()
        stderrClosedDuring = box
        tailLock.unlock()
    }

    private func keep(_ line: String) {
        // Backtrace frames are echoed, not kept: they would push the trap's reason out of the tail. Nor are the
        // worker's own lines ("hubhost: …", what an earlier worker's fault left to say): the tail is the plugin's.
        guard !line.hasPrefix("hubhost: ") else { return }
        tailLock.lock()
        guard backtraceFilter.keeps(line) else {
            tailLock.unlock()
            return
        }
        if let heading = tail.last, CrashText.isPanicHeading(heading) {
            // A Rust panic's message follows its heading: one line, so the reason stays with the place.
            tail.removeLast()
            let joined = String((heading + " " + line).prefix(500))
            if CrashText.isFatalError(joined) { fatalLine = joined }
            tail.append(joined)
            tailLock.unlock()
            return
        }
        if CrashText.isFatalError(line) { fatalLine = String(line.prefix(500)) }
        tail.append(String(line.prefix(500)))
        if tail.count > 12 { tail.removeFirst(tail.count - 12) }
        tailLock.unlock()
    }
}

/// Reads a pipe line by line until end of file.
public enum LineReader {
    /// Calls `body` with each line (without its newline), and with what is left at the end if it is not empty.
    /// Each byte is scanned once (memchr from where the last scan stopped), so a frame of megabytes arriving in
    /// pipe-sized pieces costs no more than its copy.
    public static func read(_ fd: Int32, _ body: (Data) -> Void) {
        var pending = [UInt8]()
        var scanned = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending.append(contentsOf: chunk[0..<count])
            var lineStart = 0
            while let newline = pending.withUnsafeBytes({ bytes -> Int? in
                guard scanned < bytes.count, let base = bytes.baseAddress,
                    let found = memchr(base + scanned, 10, bytes.count - scanned)
                else { return nil }
                return base.distance(to: UnsafeRawPointer(found))
            }) {
                body(Data(pending[lineStart..<newline]))
                lineStart = newline + 1
                scanned = lineStart
            }
            pending.removeFirst(lineStart)
            scanned = pending.count
        }
        if !pending.isEmpty { body(Data(pending)) }
    }
}

/// One end of a pipe to or from a worker, closed when the last reference to it goes (unless it was given).
public final class PipeEnd: @unchecked Sendable {
    public let fileDescriptor: Int32
    private let closesWhenDone: Bool

    /// `closesWhenDone` false: a descriptor this process was given and keeps (the worker's end of the channel).
    public init(_ fileDescriptor: Int32, closesWhenDone: Bool = true) {
        self.fileDescriptor = fileDescriptor
        self.closesWhenDone = closesWhenDone
    }
    deinit { if closesWhenDone { close(fileDescriptor) } }

    /// Writes all of `bytes`; false when the other end is gone (EPIPE) or the write fails.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool { writeAll(fileDescriptor, bytes) }
}
