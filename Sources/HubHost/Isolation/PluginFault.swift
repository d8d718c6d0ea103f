import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin fault the supervisor saw: what happened (crash, hang, exit), in which plugin, call and model.
public struct PluginFault: Sendable, Error {
    /// `closedDescriptors`: plugin code closed the worker's standard error (a plugin "daemonizing", or closing
    /// every descriptor it finds), and the worker could not finish without its descriptors.
    public enum Kind: String, Sendable { case crash, hang, exit, closedDescriptors }

    public var kind: Kind
    /// nil when the worker was not inside plugin code: then hubhost itself failed.
    public var plugin: BlackBox.PluginInfo?
    public var call: PluginCall
    public var location: ModelLocation?
    /// The event-script line being applied (0: none).
    public var step: Int
    public var signal: Int32?
    public var exitStatus: Int32?
    public var timeout: Double?
    public var stderrTail: [String]
    /// The input being drawn (1-based; 0: none or the only one), for commands that draw several views.
    public var input: Int
    /// The view file the model is in, named in reports when the command drew several.
    public var viewFileName: String?
    /// Filled by the supervisor from its copy of the view: the model's id and component identifier.
    public var modelID: String?
    public var componentIdentifier: String?
    /// Set when the code that faulted is another plugin's than the call's: the plugin whose call it was (a
    /// consumer calling a provider's service function), `plugin` being the one whose code faulted.
    public var calledFrom: BlackBox.PluginInfo?
    /// What was being drawn when no view file names it ("story "long" of demo:row at 414 pt").
    public var drawing: String?

    init(
        kind: Kind, box: BlackBox.Snapshot, signal: Int32?, exitStatus: Int32?, timeout: Double?,
        stderrTail: [String]
    ) {
        self.kind = kind
        self.plugin = box.inPluginCall ? box.plugin : nil
        self.call = box.inPluginCall ? box.call : .none
        self.location = box.inPluginCall ? ModelLocation(code: box.location) : nil
        self.step = box.step
        self.input = box.input
        self.signal = signal
        self.exitStatus = exitStatus
        self.timeout = timeout
        self.stderrTail = stderrTail
        self.drawing = box.inPluginCall ? box.drawing : nil
    }

    /// True when a plugin is to blame (and can be quarantined).
    public var isAttributed: Bool { plugin != nil }

    /// A fault on a thread other than the main one: `plugin` (nil: no plugin's code was on that thread's stack)
    /// is to blame, not the call the main thread was in.
    mutating func blameAnotherThread(on plugin: BlackBox.PluginInfo?) {
        self.plugin = plugin
        call = plugin == nil ? .none : .ownThread
        location = nil
    }

    /// The main thread faulted inside a call of one plugin, in another plugin's code (a service function the caller
    /// got from a provider): the provider is to blame; the call stays, to say where.
    mutating func blameCodeCalledFromACall(on plugin: BlackBox.PluginInfo) {
        calledFrom = self.plugin
        self.plugin = plugin
    }

    /// The main thread faulted between calls, in `plugin`'s code (its destructor or atexit handler as the worker
    /// ended): that plugin's, not hubhost's.
    mutating func blameCodeOutsideCalls(on plugin: BlackBox.PluginInfo) {
        self.plugin = plugin
        call = .outsideCalls
        location = nil
    }

    /// A fault where `plugin`'s code was before its image was unmapped (no image holds the address now): its
    /// thread, still running, not hubhost's code.
    mutating func blameCodeAfterUnload(on plugin: BlackBox.PluginInfo) {
        self.plugin = plugin
        call = .afterUnload
        location = nil
    }

    /// Signals hubhost never raises against itself: when one ends the worker outside any call, plugin code asked
    /// for it (alarm, setitimer, a file size or CPU limit) even though the plugin cannot be named.
    /// SIGKILL outside plugin code: it cannot be caught, so nobody can say who sent it, but no code of the worker
    /// sends it: the kernel's out-of-memory killer, a CI job's timeout, a user's `kill -9`.
    public var isKillFromOutside: Bool { kind == .crash && plugin == nil && signal == SIGKILL }

    public var isSignalOnlyPluginsCause: Bool {
        guard kind == .crash, plugin == nil, let signal else { return false }
        return [SIGALRM, SIGXFSZ, SIGXCPU, SIGVTALRM, SIGPROF].contains(signal)
    }

    /// Names the model from the view file the worker was given (read again, quietly: a view that cannot be
    /// read or decoded leaves the model unnamed).
    public mutating func locate(inViewFile path: String) {
        guard location != nil, !path.isEmpty, let data = FileManager.default.contents(atPath: path) else { return }
        let name = PathText.fileName(path)
        locate(in: try? ViewModelDecoder(file: name, maxIssues: 1).decode(data).viewModel)
    }

    /// Names the model from the view the worker was given (the supervisor's copy).
    public mutating func locate(in view: ViewModel?) {
        guard let view, let location, let model = location.model(in: view) else { return }
        modelID = model.identifier
        componentIdentifier = model.componentIdentifier.description
    }

    /// Why the culprit is kept out of this run only (its quarantine is not remembered), or nil when it is kept out
    /// until the file changes: a call that outlasted --call-timeout may have been the machine's, and SIGKILL may
    /// have come from the kernel's out-of-memory killer or a user (nobody can say who sent it).
    public var forThisRunOnly: String? {
        if kind == .hang { return "a slow machine can cause a hang" }
        if kind == .crash && signal == SIGKILL { return "the kernel's out-of-memory killer may have killed it" }
        return nil
    }

    /// The signal was one plugin code sent hubhost's supervising process (its worker was killed instead).
    public var signalledSupervisor = false
    /// The signal came later, outside plugin code, from what the call named here set ("set an alarm or timer").
    public var setInCall: String?

    /// "crashed with SIGSEGV", "hung (killed after 2 s)", "exited with status 3".
    public var what: String {
        let signalName = signal.map(ProbeRunner.signalName) ?? "a signal"
        switch kind {
        case .crash:
            if let setInCall { return "\(setInCall), which ended hubhost's worker later with \(signalName)," }
            if signalledSupervisor { return "sent \(signalName) to hubhost's supervising process" }
            return "crashed with \(signalName)"
        case .hang: return "hung"
        case .exit: return "exited the process with status \(exitStatus ?? 0)"
        case .closedDescriptors: return "closed descriptors it did not open (hubhost's standard error or output)"
        }
    }

    /// "draw [fragile:card] for body[2] (id "c")".
    public var place: String {
        var text = calledFrom.map { "its own code, called from \($0.displayName)'s " + call.name } ?? call.name
        if let componentIdentifier { text += " [\(componentIdentifier)]" }
        if let drawing {
            // A gallery's models have no view file: the story and width say where.
            text += " for \(drawing)"
        } else if let location {
            text += " for \(location)"
            if let modelID { text += " (id \(TerminalText.quoted(modelID)))" }
            if let viewFileName { text += " of \(viewFileName)" }
        }
        return text
    }

    /// Where in the plugin's file the fault was: the first address of the faulting thread's stack (the faulting
    /// instruction first) inside the blamed plugin's image, as an offset `addr2line` takes.
    public var codeOffset: UInt64?

    /// The one-line report: `libfragile.so (com.example.fragile 1.0.0) crashed with SIGSEGV in draw [fragile:card]
    /// for body[2] (id "c")`, or, outside plugin code, `hubhost's worker crashed with SIGSEGV outside plugin code`.
    public var summary: String {
        guard let plugin else {
            if signalledSupervisor {
                return "plugin code in hubhost's worker \(what), after its call had returned (no plugin can be named)"
            }
            return "hubhost's worker \(what) outside plugin code"
        }
        var line = "\(plugin.displayName) \(what) in \(place)"
        if kind == .hang, let timeout { line += " (killed after \(timeout.compactSeconds), --call-timeout)" }
        if kind == .crash, let fatal = CrashText.fatalError(in: stderrTail) { line += ": " + fatal }
        return line
    }

    /// The summary and the tail of the worker's stderr, indented, as the terminal shows a fault.
    public var report: String {
        let tail = stderrTail.suffix(8).map { "  | " + TerminalText.line($0) }
        var lines = [summary]
        // A Rust panic names its own file and line; the address would be Rust's abort code, in the plugin too.
        if let codeOffset, let plugin, !stderrTail.contains(where: CrashText.isRustPanic) {
            let offset = "0x" + String(codeOffset, radix: 16)
            // The copy that ran, when there is one: the file may be rebuilt before anyone reads the report.
            let image =
                plugin.copy.isEmpty || !FileManager.default.fileExists(atPath: plugin.copy) ? plugin.path : plugin.copy
            lines.append(
                "  at \(PathText.fileName(plugin.path))+\(offset) (`addr2line -f -C -e \(TerminalText.line(image)) \(offset)` "
                    + "names the function and line of a plugin built with -g"
                    + (image == plugin.copy ? "; that is the copy of the build that ran, kept by hubhost)" : ")"))
        }
        return (lines + (tail.isEmpty ? [] : ["  last lines of its stderr:"] + tail)).joined(separator: "\n")
    }

    private static let recordKind: [Kind: QuarantineRecord.Kind] = [
        .crash: .crash, .hang: .hang, .exit: .exit, .closedDescriptors: .failure,
    ]

    /// The quarantine record for the culprit's file version, or nil when there is no culprit or the file changed
    /// since (a new build is not the one that faulted; it gets its own probe).
    /// With `checkingFile` false, the record is for this run only (no stamp: it matches by digest).
    public func quarantineRecord(now: Date = Date(), checkingFile: Bool = true) -> QuarantineRecord? {
        guard let plugin else { return nil }
        let url = URL(fileURLWithPath: plugin.path)
        var stamp = FileStamp(size: -1, mtimeNanos: 0, inode: 0)
        if checkingFile {
            guard let current = FileStamp.of(url), ContentDigest.of(file: url) == plugin.digest else { return nil }
            stamp = current
        }
        let model =
            drawing ?? location.map { "\($0)" + (modelID.map { " (id \(TerminalText.quoted($0)))" } ?? "") }
        let message: String
        switch kind {
        case .hang: message = "killed after \((timeout ?? 0).compactSeconds)"
        case .exit: message = "status \(exitStatus ?? 0)"
        case .crash: message = CrashText.fatalError(in: stderrTail) ?? ""
        case .closedDescriptors: message = "closed descriptors it did not open (hubhost's standard error or output)"
        }
        var record = QuarantineRecord(
            file: plugin.path, size: stamp.size, mtimeNanos: stamp.mtimeNanos, hash: plugin.digest,
            kind: Self.recordKind[kind]!, phase: call.name,
            component: componentIdentifier, model: model, signal: signal.map(ProbeRunner.signalName), message: message,
            stderrTail: stderrTail.suffix(8).joined(separator: "\n"), date: now)
        if call == .exportedFunction {
            record.moduleFilesDigest = ModuleFile.digest(ofFilesIn: url.deletingLastPathComponent())
        }
        return record
    }
}
