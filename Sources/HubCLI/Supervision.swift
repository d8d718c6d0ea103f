import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// `--in-process` and `--call-timeout`, shared by every command that runs plugin code in a worker.
struct IsolationOptions: ParsableArguments {
    @Flag(
        name: .customLong("in-process"),
        help: ArgumentHelp(
            "Run plugin code in this process, without a worker (for gdb or lldb): a plugin fault then ends hubhost.",
            discussion: "Plugins are then loaded as they are: not probed first (a probe runs in a child the debugger "
                + "does not follow) and not kept out by an earlier quarantine, so the debugger sees the fault."))
    var inProcess = false

    @Option(
        name: .customLong("call-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds one plugin call may take before its worker is killed as hung.", valueName: "seconds"))
    var callTimeout: Double = 2

    func validate() throws {
        if let problem = InputLimits.problem(callTimeout, in: 0...InputLimits.seconds, excludingLowerBound: true) {
            throw ValidationError("--call-timeout: \(problem)")
        }
        // For a debugger: the plugin that crashed is loaded and run here, not probed in a child or skipped as
        // quarantined (the probe cache, where quarantines are kept, is the gate's, which this turns off).
        if inProcess && !CallRecorder.isWorker { setenv(HostEnvironment.probe, "0", 1) }
    }

    /// True in the process that should supervise a worker: not a worker itself, and not told to stay in-process.
    var supervises: Bool { !inProcess && !CallRecorder.isWorker }
}

/// Runs a one-shot command (`render`, `events`) in workers: the first worker does the whole command; when
/// plugin code crashes, hangs or exits it, the culprit is named, quarantined (persisted with the probe cache, so
/// the next run does not crash either) and the command runs again in a fresh worker without it, its components
/// falling back by category. hubhost itself never runs plugin code here.
struct OneShotSupervisor {
    let isolation: IsolationOptions
    let plugins: PluginOptions
    /// The view file, to name the model of a fault ("body[2] (id "c")").
    let viewFile: String
    /// `events --keep-going`: after a fault in a step, go on with the next step (else stop there).
    var keepGoing = false
    var isEventScript = false
    /// For a command that draws several views (`snapshot`): the view file of input N (1-based), to name the model.
    var viewFileOfInput: ((Int) -> String?)?
    /// Said with a fault (what the worker was doing, e.g. the call `hubhost call` made).
    var context: String?
    /// Quarantine the culprit and run again without it (render, events). Off for `call` and `inject`, where the
    /// fault is most often the caller's (a wrong signature), not the plugin's: report it and stop.
    var recovers = true
    /// Without `recovers`: whether the culprit is still quarantined (`inject`: a fault of a bound function is the
    /// plugin's or its module file's). `call` says no: the signature that crashed is the user's guess.
    var quarantinesWithoutRecovering = true
    /// Told when the command is done, before the supervisor exits, with the plugin faults met on the way.
    var finished: ((_ faults: [PluginFault]) -> Void)?

    /// Supervises workers until the command is done, then exits with its status. Never returns.
    func run() -> Never {
        var faults: [PluginFault] = []
        var quarantined: [QuarantineRecord] = []
        var resumeAfter = 0
        var watchesDescriptors = false
        var leftProcesses = false
        while true {
            var options = WorkerProcess.Options(arguments: Array(CommandLine.arguments.dropFirst()))
            options.callTimeout = isolation.callTimeout
            options.endsLeftoverProcesses = true  // this process starts nothing but its workers
            options.environment = WorkerEnvironment.entries(restarts: faults.count, quarantined: quarantined)
            if resumeAfter > 0 { options.environment[WorkerEnvironment.resumeKey] = "\(resumeAfter)" }
            if watchesDescriptors { options.environment[WorkerEnvironment.watchDescriptorsKey] = "1" }
            let worker: WorkerProcess
            do { worker = try WorkerProcess(options) } catch {
                Diagnostics.print(
                    "hubhost: cannot start a worker process: \(ErrorText.describe(error)) (--in-process runs without one)"
                )
                exit(ExitStatus.failed.rawValue)
            }
            let outcome = worker.wait()
            if let report = outcome.leftoverReport {
                leftProcesses = true
                Diagnostics.print("hubhost: " + report)
            }
            if outcome.outputClosed {
                // End as the worker did, so the shell sees what it sees of any tool whose reader went away.
                signal(SIGPIPE, SIG_DFL)
                kill(getpid(), SIGPIPE)
                exit(ExitStatus.failed.rawValue)
            }
            if let stop = outcome.stoppedFromOutside {
                // A user's kill of the busy process (the worker), or a closed terminal: the command stops, as it
                // would have had the signal reached this process; no plugin is blamed, no output is written.
                Diagnostics.print(
                    "hubhost: the worker process was ended by \(stop.description), not by plugin code; stopping "
                        + "(no plugin is blamed)")
                signal(stop.signal, SIG_DFL)
                kill(getpid(), stop.signal)
                exit(128 + stop.signal)
            }
            guard var fault = outcome.fault else {
                let status = outcome.exitStatus ?? ExitStatus.failed.rawValue
                if outcome.lostStderr {
                    // Its descriptors were closed or replaced, and no call was seen doing it: once more, checking
                    // after each plugin call, to find the one (slower, so only now). Even at status 0: the output
                    // may have gone to /dev/null.
                    guard watchesDescriptors else {
                        Diagnostics.print(
                            "hubhost: plugin code closed or replaced the worker's descriptors (its standard error or "
                                + "output); running again to find which")
                        watchesDescriptors = true
                        continue
                    }
                    Diagnostics.print(
                        "hubhost: the worker ended with status \(status) after plugin code closed or replaced its "
                            + "descriptors, and running it again did not find the call that did")
                    // Not "done": its output may have gone where the plugin pointed the descriptor.
                    if status == 0 { exit(ExitStatus.failed.rawValue) }
                }
                finished?(faults)
                // Done: a run that survived a fault says so with its own status, unless it failed for another reason.
                if !faults.isEmpty && status <= ExitStatus.problems.rawValue { exit(ExitStatus.pluginFault.rawValue) }
                // Processes left behind were reported: done, with a problem.
                if leftProcesses && status == ExitStatus.ok.rawValue { exit(ExitStatus.problems.rawValue) }
                exit(status)
            }
            fault.locate(inViewFile: viewFile)
            if fault.input > 0, let file = viewFileOfInput?(fault.input) {
                fault.locate(inViewFile: file)
                fault.viewFileName = PathText.fileName(file)
            }
            let stepNote = isEventScript && fault.step > 0 ? "script line \(fault.step): " : ""
            Diagnostics.printBlock("hubhost: \(stepNote)\(fault.report)")
            if let context { Diagnostics.print("hubhost: \(context)") }
            guard fault.isAttributed, let plugin = fault.plugin else {
                if fault.isKillFromOutside {
                    Diagnostics.print(
                        "hubhost: SIGKILL comes from outside the worker: the kernel's out-of-memory killer (see "
                            + "`dmesg`), a job's time limit or a `kill -9`; no plugin is blamed")
                } else if fault.signalledSupervisor {
                    Diagnostics.print(
                        "hubhost: hubhost never signals its own supervisor: plugin code did (kill(getppid(), …)); the "
                            + "worker was ended instead; `hubhost validate` each plugin, or run --in-process under gdb, "
                            + "to find which")
                } else if fault.isSignalOnlyPluginsCause {
                    Diagnostics.print(
                        "hubhost: hubhost sets no alarm, timer or resource limit itself: plugin code did (alarm, "
                            + "setitimer, setrlimit); `hubhost validate` each plugin, or run --in-process under gdb, "
                            + "to find which")
                } else {
                    Diagnostics.print(
                        "hubhost: this is a hubhost bug, not a plugin's; run with --in-process under gdb to see it")
                }
                exit(ExitStatus.failed.rawValue)
            }
            guard recovers else {
                // Not run again, but quarantined as any fault is (until the plugin or its module files change).
                if quarantinesWithoutRecovering {
                    _ = quarantine(fault, plugin: plugin)
                    let howLong = fault.forThisRunOnly.map { " for this run only (\($0))" } ?? ""
                    Diagnostics.print("hubhost: \(plugin.displayName) quarantined\(howLong)")
                }
                finished?(faults + [fault])
                exit(ExitStatus.pluginFault.rawValue)
            }
            faults.append(fault)
            let record = quarantine(fault, plugin: plugin)
            quarantined.append(record)
            if faults.count > 64 {
                Diagnostics.print("hubhost: giving up after \(faults.count) plugin faults")
                exit(ExitStatus.pluginFault.rawValue)
            }
            if isEventScript && fault.step > 0 {
                guard keepGoing else {
                    Diagnostics.print(
                        "hubhost: replay stopped at line \(fault.step) (--keep-going goes on without \(plugin.displayName))"
                    )
                    exit(ExitStatus.pluginFault.rawValue)
                }
                resumeAfter = fault.step
            } else if isEventScript && !keepGoing {
                // Outside a script line (loading the view, or the final drawing after the last line): running the
                // whole replay again would print its trace twice. Stopped, as at a line.
                Diagnostics.print(
                    "hubhost: replay stopped (--keep-going runs it again without \(plugin.displayName))")
                exit(ExitStatus.pluginFault.rawValue)
            }
            let howLong = fault.forThisRunOnly.map { " for this run only (\($0))" } ?? ""
            Diagnostics.print("hubhost: \(plugin.displayName) quarantined\(howLong); running again without it")
            if faults.count == 1 {
                Diagnostics.print(
                    "hubhost: to debug it, run the same command with --in-process under gdb or lldb (the plugin is "
                        + "then loaded as it is, quarantined or not)")
            }
        }
    }

    /// Quarantines the culprit's file version: persisted with the probe cache when the file is still the one that
    /// faulted, and in any case for this run's next workers.
    private func quarantine(_ fault: PluginFault, plugin: BlackBox.PluginInfo) -> QuarantineRecord {
        // A hang or a SIGKILL may not be the plugin's doing (`PluginFault.forThisRunOnly`): kept out of this run only.
        // A crash or an exit is the plugin's, and is remembered.
        if fault.forThisRunOnly != nil { return fault.quarantineRecord(checkingFile: false)! }
        if let record = fault.quarantineRecord() {
            let (cache, _) = CacheFolder.usable(plugins.cacheDirectory.map { URL(fileURLWithPath: $0) })
            ProbeGate.persist(record, cacheDirectory: ProbeGate.defaultCacheDirectory(imagesDirectory: cache))
            return record
        }
        // The file changed since it was loaded: quarantine exactly the version that faulted, for this run only.
        return fault.quarantineRecord(checkingFile: false)!
    }
}
