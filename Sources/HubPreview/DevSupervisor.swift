import Foundation
import HubCore
import HubHost

/// `hubhost dev` as a supervisor: it keeps what must survive a plugin fault (the preview server and its open
/// pages, the view's name, the UI states the worker last reported, the quarantines of this session) and runs the
/// dev loop in a worker process. When plugin code crashes, hangs or exits the worker, the page shows the fault
/// (plugin, call, component, model, the end of stderr) at once; the culprit's file version is quarantined
/// (persisted with the probe cache); a new worker starts without it and restores the UI states. The supervisor
/// never exits because of a plugin.
public final class DevSupervisor: @unchecked Sendable {
    public struct Options: Sendable {
        /// The worker's command line (`dev VIEW …`, as this process got it).
        public var arguments: [String]
        /// nil: the gallery, which has no view file.
        public var viewFile: URL?
        public var callTimeout: Double = 2
        /// The `hubhost` executable the worker runs; nil: this process's own.
        public var executable: String?
        /// End what plugin code forked and left running as each worker ends: only when this process starts no
        /// other processes (`hubhost dev` does; an app embedding the supervisor may not).
        public var endsLeftoverProcesses = false
        /// Persists a quarantine with the probe cache.
        public var persist: @Sendable (QuarantineRecord) -> Void = { _ in }
        public init(arguments: [String], viewFile: URL?) {
            self.arguments = arguments
            self.viewFile = viewFile
        }
    }

    public let options: Options
    public let server: PreviewServer
    /// Where terminal lines go (stdout).
    public var printLine: @Sendable (String) -> Void = { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
    /// Told about every frame published (after the server has it), on the supervisor's threads.
    /// Its second argument is when the frame reached the supervisor (`Monotonic`), before any decoding.
    public var onFrame: @Sendable (PreviewFrame, Double) -> Void = { _, _ in } {
        didSet { observesFrames = true }
    }
    private var observesFrames = false
    /// Where fault reports go (stderr).
    public var printProblem: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((TerminalText.line(line) + "\n").utf8))
    }

    private let lock = NSLock()
    private var worker: WorkerProcess?
    private var uiStates: [String: String] = [:]
    /// The page's widths and in-memory edits, as the worker last reported them: handed to the next worker.
    private var workbench: DevWorkerChannel.Workbench?
    /// The view file's text as the worker last read it, told before it drew it (`FromWorker.viewRead`).
    private var latestViewRead: String?
    /// Edits sent to the worker and not answered yet, by request id.
    private var pendingEdits: [(id: Int, request: PreviewRequest)] = []
    /// The last frame published, as JSON (decoded only when a fault is drawn over it).
    private var lastFrameJSON: Data?
    private var sequence = 0
    private var quarantined: [QuarantineRecord] = []
    private var nextTapID = 0
    private var waitingTaps: [Int: TapWaiter] = [:]
    /// Consecutive faults no plugin is to blame for (each restart waits longer).
    private var unattributed = 0
    /// When the running worker started: one that faults within `settledAfter` of its start, even after drawing a
    /// frame, still counts as consecutive (a fault just after the first frame restarted at once, forever).
    private var workerStartedAt = 0.0
    private static let settledAfter = 10.0
    /// Why the next worker starts, when the last one asked to be replaced (not a fault).
    private var restartCause: String?
    /// How many workers were started (1 + restarts).
    public private(set) var workersStarted = 0
    /// Every fault seen, in order.
    public private(set) var faults: [PluginFault] = []

    private final class TapWaiter {
        let done = DispatchSemaphore(value: 0)
        var result = "the worker stopped before answering"
        /// Set when the worker answered (the request was carried out).
        var answered = false
    }

    public init(options: Options, server: PreviewServer) {
        self.options = options
        self.server = server
        server.onTap = { [weak self] indexPath, section in
            self?.ask(PreviewRequest(kind: .tap, indexPath: indexPath, section: section)) ?? "gone"
        }
        server.onRequest = { [weak self] request in self?.ask(request) ?? "gone" }
    }

    /// Starts the first worker; each one is watched on its own thread and replaced when it ends. Returns once
    /// the first frame is there (or the first worker ended, or `firstFrameTimeout` passed), so the page a browser
    /// opens next has the view in it.
    public func start(firstFrameTimeout: Double = 60) {
        Thread.detachNewThread { [weak self] in self?.superviseForever() }
        _ = firstFrame.wait(timeout: .now() + firstFrameTimeout)
    }
    private let firstFrame = DispatchSemaphore(value: 0)
    private var sawFirst = false

    private func signalFirst() {
        lock.lock()
        let first = !sawFirst
        sawFirst = true
        lock.unlock()
        if first { firstFrame.signal() }
    }

    /// Kills the current worker and starts no other (for embedders and tests; `hubhost dev` runs until it is
    /// killed itself).
    public func stop() {
        lock.lock()
        stopped = true
        let current = worker
        lock.unlock()
        current?.terminate()
    }
    private var stopped = false

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func superviseForever() {
        while !isStopped {
            let outcome = runWorker()
            guard let outcome else {
                Thread.sleep(forTimeInterval: 2)  // could not start one: try again
                continue
            }
            handleEnd(outcome)
        }
    }

    /// Runs one worker to its end; nil when it could not be started.
    private func runWorker() -> WorkerProcess.Outcome? {
        var workerOptions = WorkerProcess.Options(arguments: options.arguments)
        workerOptions.controlChannel = true
        workerOptions.executable = options.executable
        workerOptions.echo = { [printProblem] line in printProblem(line) }
        workerOptions.callTimeout = options.callTimeout
        workerOptions.endsLeftoverProcesses = options.endsLeftoverProcesses
        lock.lock()
        workerStartedAt = Monotonic.now()
        // A fault in a function a module file binds may have been the binding's (a wrong signature): once the
        // module files change, that plugin is tried again, as the probe cache tries it again.
        quarantined.removeAll { !$0.stillApplies }
        workerOptions.environment = WorkerEnvironment.entries(restarts: workersStarted, quarantined: quarantined)
        if let restartCause { workerOptions.environment[WorkerEnvironment.restartCauseKey] = restartCause }
        restartCause = nil
        var carried = workbench ?? DevWorkerChannel.Workbench()
        carried.pendingEdits = pendingEdits.map(\.request)
        pendingEdits = []
        let hello = DevWorkerChannel.ToWorker(
            uiStates: uiStates, lastSequence: sequence,
            workbench: carried == DevWorkerChannel.Workbench() ? nil : carried)
        lock.unlock()
        let worker: WorkerProcess
        do { worker = try WorkerProcess(workerOptions) } catch {
            printProblem("hubhost dev: cannot start a worker process: \(error)")
            return nil
        }
        // The hello is the first line the worker reads: a page's request (a scroll, a tap) that comes while it is
        // written waits for it (interleaved, it cut the hello short, and each side then blocked writing to the
        // other). And what the worker writes is read from the start: its first frame can be larger than a pipe
        // holds while the hello (the last good view) is still being written.
        tapLock.lock()
        lock.lock()
        self.worker = worker
        workersStarted += 1
        if stopped { worker.terminate() }  // stop() came while this one was starting
        lock.unlock()

        let readerDone = DispatchSemaphore(value: 0)
        if let output = worker.controlOut {
            Thread.detachNewThread { [weak self] in
                var envelope: DevWorkerChannel.FromWorker?
                DevWorkerChannel.readLines(output.fileDescriptor) { line in
                    if let pending = envelope {
                        envelope = nil
                        self?.receivedFrame(Data(line), envelope: pending)
                        return
                    }
                    guard let message = try? JSONDecoder().decode(DevWorkerChannel.FromWorker.self, from: line) else {
                        return
                    }
                    if message.frameFollows == true { envelope = message } else { self?.received(message) }
                }
                readerDone.signal()
            }
        } else {
            readerDone.signal()
        }
        if let input = worker.controlIn { DevWorkerChannel.send(hello, to: input, lock: NSLock()) }
        tapLock.unlock()
        let outcome = worker.wait()
        if let report = outcome.leftoverReport { printProblem("hubhost dev: " + report) }
        _ = readerDone.wait(timeout: .now() + 2)
        lock.lock()
        self.worker = nil
        let waiters = waitingTaps
        waitingTaps = [:]
        lock.unlock()
        let why =
            outcome.fault?.summary ?? outcome.stoppedFromOutside.map { "ended by \($0.description)" }
            ?? "it exited with status \(outcome.exitStatus ?? -1)"
        for waiter in waiters.values {
            waiter.result = "the worker stopped: \(why)"
            waiter.done.signal()
        }
        return outcome
    }

    private func received(_ message: DevWorkerChannel.FromWorker) {
        if let text = message.viewRead {
            lock.lock()
            latestViewRead = text.isEmpty ? nil : text
            lock.unlock()
        }
        if let log = message.log, let json = try? JSONEncoder().encode(log) { server.publish(event: "log", json: json) }
        if let activity = message.activity, let json = try? JSONEncoder().encode(["activity": activity]) {
            server.publish(event: "activity", json: json)
        }
        if let reply = message.tapped {
            lock.lock()
            let waiter = waitingTaps.removeValue(forKey: reply.id)
            lock.unlock()
            waiter?.result = reply.result
            waiter?.answered = true
            waiter?.done.signal()
        }
    }

    /// A frame from the worker, published as it came (JSON), with the UI states and lines of its envelope.
    private func receivedFrame(_ json: Data, envelope: DevWorkerChannel.FromWorker) {
        let arrived = Monotonic.now()
        let number = envelope.sequence ?? 0
        lock.lock()
        if let states = envelope.uiStates { uiStates = states }
        if var reported = envelope.workbench {
            if reported.fileView == nil { reported.fileView = workbench?.fileView }  // sent only when read
            workbench = reported
        }
        sequence = max(sequence, number)
        lastFrameJSON = json
        lock.unlock()
        server.publish(json: json, sequence: number)
        for line in envelope.lines ?? [] { printLine(line) }
        signalFirst()
        if observesFrames, let frame = try? JSONDecoder().decode(PreviewFrame.self, from: json) {
            onFrame(frame, arrived)
        }
    }

    /// A worker ended: say why on the terminal and in the page, quarantine the culprit, and let the loop start the
    /// next worker (at once after a plugin's fault; after a growing pause when hubhost itself failed).
    private func handleEnd(_ outcome: WorkerProcess.Outcome) {
        defer { signalFirst() }
        if let stop = outcome.stoppedFromOutside {
            // A user's kill of the busy process (the worker): not a plugin's fault.
            let line = "the worker was ended by \(stop.description), not by plugin code; starting a new one"
            publishProblem("worker", line)
            printProblem("hubhost dev: " + line)
            return
        }
        guard var fault = outcome.fault else {
            let status = outcome.exitStatus ?? -1
            if status == WorkerEnvironment.replaceMeStatus {
                // Asked to be replaced (module files changed): at once, and the next one says why.
                lock.lock()
                restartCause = "module files changed"
                lock.unlock()
                return
            }
            publishProblem("worker", "the worker exited with status \(status); starting a new one")
            printProblem("hubhost dev: the worker exited with status \(status); starting a new one")
            backOff()
            return
        }
        // The view the worker drew: the page's edits or a story (held in memory), else the file as it last read
        // whole (the file may hold invalid JSON now, while the worker drew the last good view), else the file (the
        // gallery has none: nothing is read for it).
        lock.lock()
        let shown = workbench?.storyView ?? workbench?.editedView ?? latestViewRead ?? workbench?.fileView
        lock.unlock()
        if let shown {
            fault.locate(in: try? ViewModelDecoder(file: nil, maxIssues: 1).decode(Data(shown.utf8)).viewModel)
        } else if let file = options.viewFile {
            fault.locate(inViewFile: file.path)
        }
        for line in fault.report.split(separator: "\n") { printProblem("hubhost dev: \(line)") }
        lock.lock()
        faults.append(fault)
        lock.unlock()
        guard fault.isAttributed else {
            publishProblem(
                "crash",
                fault.report
                    + (fault.isKillFromOutside
                        ? "\n(SIGKILL comes from outside the worker: the out-of-memory killer or a kill -9)"
                        : "\n(a hubhost bug: --in-process under gdb shows it)"))
            backOff()
            return
        }
        // Persisted only when the file is still the version that faulted (one digest of it, not two), and not for a
        // fault that may not be the plugin's doing (a hang, SIGKILL), kept out of this session only as every command
        // keeps it out of its run.
        let record: QuarantineRecord
        if fault.forThisRunOnly == nil, let current = fault.quarantineRecord() {
            record = current
            options.persist(record)
        } else {
            record = fault.quarantineRecord(checkingFile: false)!
        }
        lock.lock()
        quarantined.removeAll { $0.file == record.file && $0.hash == record.hash }
        quarantined.append(record)
        lock.unlock()
        // Said, as removing the model from the view does not bring it back (the plugin is out, not the model).
        let howLong =
            fault.forThisRunOnly.map {
                " for this session only (\($0)) until a new build of it lands (or dev restarts)"
            }
            ?? " until a new build of it lands (`--reprobe` tries this one again)"
        publishProblem("crash", fault.report + "\nquarantined\(howLong); a new worker starts without it")
    }

    private func backOff() {
        lock.lock()
        if Monotonic.now() - workerStartedAt > Self.settledAfter { unattributed = 0 }
        unattributed += 1
        let pause = min(8, 0.25 * pow(2, Double(unattributed)))
        lock.unlock()
        Thread.sleep(forTimeInterval: pause)
    }

    /// Shows `message` over the last frame (the view as it was drawn before the fault).
    private func publishProblem(_ kind: String, _ message: String) {
        lock.lock()
        sequence += 1
        var frame =
            lastFrameJSON.flatMap { try? JSONDecoder().decode(PreviewFrame.self, from: $0) }
            ?? PreviewFrame(
                sequence: 0, html: "", width: 375, height: 667, boxes: [], problems: [], cause: "",
                renderedAt: Monotonic.now())
        frame.sequence = sequence
        frame.problems.insert(.init(kind: kind, message: message), at: 0)
        frame.cause = message.split(separator: "\n").first.map(String.init) ?? message
        frame.tapped = nil
        frame.renderedAt = Monotonic.now()
        lastFrameJSON = try? JSONEncoder().encode(frame)
        lock.unlock()
        server.publish(frame)
        if observesFrames { onFrame(frame, frame.renderedAt) }
    }

    /// Forwards a tap from the page to the worker and waits for its answer.
    public func tap(indexPath: [Int], section: String) -> String {
        ask(PreviewRequest(kind: .tap, indexPath: indexPath, section: section))
    }

    /// Forwards a page's request to the worker and waits for its answer.
    public func ask(_ request: PreviewRequest) -> String {
        lock.lock()
        guard let input = worker?.controlIn else {
            lock.unlock()
            return "no worker is running (it is restarting)"
        }
        nextTapID += 1
        let id = nextTapID
        let waiter = TapWaiter()
        waitingTaps[id] = waiter
        // An edit the worker dies drawing (the edit may be what crashed it) is the next worker's to draw.
        if request.kind == .edit { pendingEdits.append((id, request)) }
        lock.unlock()
        defer {
            if request.kind == .edit && waiter.answered {
                lock.lock()
                pendingEdits.removeAll { $0.id == id }
                lock.unlock()
            }
        }
        DevWorkerChannel.send(
            DevWorkerChannel.ToWorker(tap: .init(id: id, request: request)), to: input,
            lock: tapLock)
        // A hung plugin call ends with the watchdog, which answers every waiting tap.
        if waiter.done.wait(timeout: .now() + options.callTimeout + 30) == .timedOut {
            lock.lock()
            waitingTaps[id] = nil
            lock.unlock()
            return "no answer from the worker"
        }
        return waiter.result
    }
    private let tapLock = NSLock()

    /// The UI states the supervisor keeps (those the worker last reported).
    public var keptUIStates: [String: String] {
        lock.lock()
        defer { lock.unlock() }
        return uiStates
    }
}
