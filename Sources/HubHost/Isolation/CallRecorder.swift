import CHubSystem
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Notes, before each call into plugin code, which plugin, which call and which model, and clears it after: in a
/// worker, into the shared `BlackBox` page its supervisor reads after a crash or while watching for a hang; in any
/// other process, into a private page (so the cost is the same two stores, and `BoundaryValues` can still name
/// the plugin a bad value came from).
///
/// # Thread safety
/// Main thread only, as every plugin call is (the header's thread rule).
public enum CallRecorder {
    /// Word 1: the call; word 2: the model; word 3: the event step (see `BlackBox`).
    /// nil until the first plugin is registered (a constant initial value: no lazy-initialisation check on the
    /// hot path, which a computed initial value would cost on every call).
    @exclusivity(unchecked) nonisolated(unsafe) private static var words: UnsafeMutablePointer<UInt64>? = nil
    /// The shared plugin table, in a worker.
    nonisolated(unsafe) private static var table: UnsafeMutableRawPointer?
    @exclusivity(unchecked) nonisolated(unsafe) private static var sequence: UInt64 = 0
    /// A worker run again to find the plugin call that closes its stderr checks after every call.
    @exclusivity(unchecked) nonisolated(unsafe) private static var watchesDescriptors = false
    /// The device and inode of the worker's stderr when it started (a pipe to its supervisor).
    nonisolated(unsafe) private static var stderrIdentity: FileIdentity?
    /// The plugins by slot (index 0 unused), in every process; their display names are made only for a message.
    nonisolated(unsafe) private static var names: [BlackBox.PluginInfo?] = [nil]

    /// True in a worker process whose supervisor reads the black box.
    public static var isWorker: Bool { table != nil }

    /// Maps the black box a supervisor handed this process (`BlackBox.environmentKey` names the descriptor).
    /// Call once, at start, before any plugin is loaded. Returns false when there is none.
    @discardableResult
    public static func attachFromEnvironment() -> Bool {
        guard let value = HostEnvironment.variable(BlackBox.environmentKey) else { return false }
        guard let fd = Int32(value),
            let mapped = mmap(nil, BlackBox.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED
        else {
            // Started as a worker without a usable box: running on as a supervisor would start workers of its own.
            let message = "hubhost: started as a worker, but descriptor \(value) is not a black box; exiting\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            exit(70)
        }
        // A worker dies with its supervisor: stopped (Ctrl-C, a CI timeout's SIGTERM, kill), the command must not
        // go on writing in the background, nor replace the output file minutes later.
        if let parent = HostEnvironment.variable(WorkerEnvironment.parentKey).flatMap(Int32.init) {
            if !csystem_die_with_parent(parent) { _exit(70) }
            csystem_parent_guards_worker(parent)
        }
        unsetenv(WorkerEnvironment.parentKey)
        // The mapping is all we need: children (probes) must neither inherit the descriptor nor see the variable,
        // or they would write their own calls into our box.
        close(fd)
        unsetenv(BlackBox.environmentKey)
        let shared = mapped.assumingMemoryBound(to: UInt64.self)
        shared[0] = BlackBox.magic
        words = shared
        table = mapped + BlackBox.tableOffset
        // A plugin's own thread may crash or exit() while the main thread is in another plugin's call: where it
        // happened names the culprit (`BlackBox.FaultNote`).
        csystem_note_faults(shared + BlackBox.faultWord, Int32(BlackBox.faultAddressCapacity))
        // A worker ended from outside (a user's kill of the busy process, a terminal closed) is not a plugin fault.
        csystem_note_stop_signals(shared + BlackBox.stopSignalWord)
        csystem_note_process_state_changes(shared + BlackBox.stateChangeWord, shared + 1)
        // Plugin code that closes descriptors it did not open leaves the worker unable to finish or to say why:
        // its stderr, the supervisor's pipe, is the one it can check (the worker never closes it).
        stderrIdentity = FileIdentity(descriptor: 2)
        watchesDescriptors = HostEnvironment.variable(WorkerEnvironment.watchDescriptorsKey) == "1"
        atexit { CallRecorder.noteLostStderrAtExit() }
        exitCheckRegistered = true
        return true
    }

    private static var stderrIsOurs: Bool {
        guard let stderrIdentity, let now = FileIdentity(descriptor: 2) else { return false }
        return now == stderrIdentity
    }

    /// After a call, when watching: a stderr that is not ours any more was closed (or replaced) by that call. The
    /// worker ends at once with the call still noted, for the supervisor to name it.
    private static func checkDescriptorsAfterCall() {
        guard let words, !stderrIsOurs || !OwnDescriptors.intact else { return }
        words[5] = BlackBox.StderrLoss.inCall
        _exit(70)
    }

    /// Whether this worker checks its stderr as it exits (`noteLostStderrAtExit`).
    nonisolated(unsafe) private static var exitCheckRegistered = false

    /// What this process's exit handlers would do for hubhost, for a process that ends with `_exit` (no exit
    /// handler runs, plugins' included).
    public static func noteExitWithoutHandlers() {
        if exitCheckRegistered { noteLostStderrAtExit() }
    }

    private static func noteLostStderrAtExit() {
        guard let words, stderrIdentity != nil, !stderrIsOurs || !OwnDescriptors.intact else { return }
        words[5] = BlackBox.StderrLoss.atExit
    }

    /// What was in progress before a nested call began (a plugin calling the host, which calls another plugin).
    public struct Saved {
        @usableFromInline let call: UInt64
        @usableFromInline let location: UInt64
        @usableFromInline var slot: UInt16 = 0
    }

    /// How deep each plugin (by slot) is in calls the host made into it: a plugin's calls are made on its host's
    /// thread only, so each count is that thread's, however many hosts a process has.
    /// (A buffer, not an array: hosts on several threads each touch their own slots, with no copy-on-write check
    /// or exclusivity check between them.)
    nonisolated(unsafe) private static let depthBySlot: UnsafeMutablePointer<Int32> = {
        let counts = UnsafeMutablePointer<Int32>.allocate(capacity: BlackBox.slotCount + 1)
        counts.initialize(repeating: 0, count: BlackBox.slotCount + 1)
        return counts
    }()

    /// Notes that `call` of the plugin in `slot` starts, for `location` (a `ModelLocation` code, or 0).
    @inline(__always)
    public static func enter(_ call: PluginCall, slot: UInt16, location: UInt64 = 0) -> Saved {
        if slot != 0 { depthBySlot[Int(slot)] += 1 }
        guard let words else { return Saved(call: 0, location: 0, slot: slot) }  // no plugin registered yet
        let saved = Saved(call: words[1], location: words[2], slot: slot)
        sequence &+= 1
        words[2] = location
        words[1] = sequence << 32 | UInt64(call.rawValue) << 16 | UInt64(slot)
        return saved
    }

    /// Set in the child of a `fork()` plugin code made inside one of its calls (`installForkGuard`).
    nonisolated(unsafe) private static var forkedInsidePluginCall = false

    /// Makes a child that plugin code forked, and that returns from the plugin's call instead of calling `exec` or
    /// `_exit`, end there: it is a copy of hubhost, which would go on rendering and write the output a second time
    /// (two JSON documents in one file, exit 0). Installed once, before any plugin loads.
    public static let installForkGuard: Void = {
        pthread_atfork(nil, nil) {
            // Inside a plugin call: some plugin's depth is not zero (hubhost's own forks happen outside calls).
            for slot in 0...BlackBox.slotCount where CallRecorder.depthBySlot[slot] > 0 {
                CallRecorder.forkedInsidePluginCall = true
                return
            }
        }
    }()

    /// Set when plugin code in a call tried to replace a fault signal's handler (see `csystem_take_refused_handler`).
    nonisolated(unsafe) private static let refusedHandler = csystem_refused_handler_flag()!

    /// Plugins (by file) and signals already told of a refused handler.
    nonisolated(unsafe) private static var refusalsSaid = Set<String>()

    @inline(never)
    private static func sayRefusedHandler(slot: UInt16) {
        let signal = csystem_take_refused_handler()
        let name =
            table.flatMap { BlackBox.plugin(inTable: $0, slot: Int(slot)) }.map { PathText.fileName($0.path) }
            ?? "plugin code"
        let signalName = ProbeRunner.signalName(signal)
        guard refusalsSaid.insert(name + signalName).inserted else { return }
        StandardError.writeLine(
            "hubhost: \(TerminalText.escaped(name)) set its own \(signalName) handler in a call; refused (hubhost's own "
                + "handler tells whose code faults: with another, a crash read as a hang)")
    }

    @inline(never)
    private static func endForkedChild() -> Never {
        let line = Array(
            ("hubhost: a process plugin code forked returned from the plugin's call into hubhost; it was ended there "
                + "(a forked child must call exec or _exit)\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        _exit(0)
    }

    /// Notes that the call `enter` returned `saved` for has returned; when it was the outermost, runs the work
    /// deferred until then (`afterCurrentCalls`).
    @inline(__always)
    public static func leave(_ saved: Saved) {
        if forkedInsidePluginCall { endForkedChild() }
        if refusedHandler.pointee != 0 { sayRefusedHandler(slot: saved.slot) }
        if saved.slot != 0 {
            depthBySlot[Int(saved.slot)] -= 1
            if !deferred.isEmpty && depthBySlot[Int(saved.slot)] == 0 { runDeferred(slot: saved.slot) }
        }
        guard let words else { return }
        if watchesDescriptors { checkDescriptorsAfterCall() }
        words[1] = saved.call
        words[2] = saved.location
    }

    /// Work waiting for a plugin's calls in progress to return, by its slot.
    nonisolated(unsafe) private static var deferred: [(slot: UInt16, work: () -> Void)] = []

    /// Runs `work` now unless the plugin in `slot` is in a call the host made into it, else once its outermost call
    /// returns (on the same thread: its host's): what a plugin asks for from inside one of its calls that would
    /// pull that call's own instance from under it (its namespace unregistered from its component's draw destroyed
    /// the component mid-call).
    public static func afterCurrentCalls(of slot: UInt16, _ work: @escaping () -> Void) {
        guard slot != 0, depthBySlot[Int(slot)] > 0 else { return work() }
        deferred.append((slot, work))
    }

    @inline(never)
    private static func runDeferred(slot: UInt16) {
        let mine = deferred.filter { $0.slot == slot }
        guard !mine.isEmpty else { return }
        deferred.removeAll { $0.slot == slot }
        for item in mine { item.work() }
    }

    /// Runs `body` (a call into the plugin in `slot`) between `enter` and `leave`.
    @inline(__always)
    public static func during<R>(
        _ call: PluginCall, slot: UInt16, model: ComponentModel? = nil, _ body: () throws -> R
    ) rethrows -> R {
        let saved = enter(call, slot: slot, location: model?.locationCode ?? ModelInProgress.location)
        defer { leave(saved) }
        return try body()
    }

    /// `during`, for calls that may come from any thread (services, which host Swift code may use anywhere): noted
    /// only on the main thread, where every other plugin call is (the page has one writer).
    public static func duringOnMainThread<R>(_ call: PluginCall, slot: UInt16, _ body: () throws -> R) rethrows -> R {
        guard Threads.isMainThread else { return try body() }
        return try during(call, slot: slot, body)
    }

    /// The input being drawn by a command that draws several views (1-based; 0: none), for the supervisor to
    /// name the view a fault happened in.
    public static func noteInput(_ number: Int) { words?[4] = UInt64(clamping: max(0, number)) }

    /// The text `noteDrawing` last wrote (to put back after a nested note).
    nonisolated(unsafe) private static var currentNote: String?

    /// Runs `body` with `text` noted as what is being done (a binding's function), then puts back the note before.
    public static func withNote<R>(_ text: String, _ body: () throws -> R) rethrows -> R {
        guard table != nil else { return try body() }
        let before = currentNote
        noteDrawing(text)
        defer { noteDrawing(before) }
        return try body()
    }

    /// What is being drawn, for a fault report when no view file names it (nil: nothing). Cut to fit.
    public static func noteDrawing(_ text: String?) {
        // Only in a worker's black box: without a supervisor, `words` is a private page of a few words.
        guard let words, table != nil else { return }
        currentNote = text
        let area = UnsafeMutableRawPointer(words) + BlackBox.drawingOffset
        let bytes = Array((text ?? "").utf8.prefix(BlackBox.drawingCapacity - 1))
        bytes.withUnsafeBytes { area.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        area.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
    }

    /// The event-script step being applied (0: none).
    public static func noteStep(_ step: Int) { words?[3] = UInt64(clamping: max(0, step)) }

    /// Slots whose image was unmapped, oldest first, to give to the next plugin loaded: a dev worker reloads a
    /// plugin thousands of times, and slots used once each ran out after 4,096 loads (a crash then named no
    /// plugin). The newest `unmappedKept` stay as they are, so a crash in an unloaded image's code (a thread the
    /// plugin did not stop) still names it.
    nonisolated(unsafe) private static var freeSlots: [Int] = []
    static let unmappedKept = 16

    /// In a probe child (`csystem_report_faults`): a fault is located in the image of the plugin registered last,
    /// the one the probe exercises.
    nonisolated(unsafe) static var locatesFaultsInLastImage = false

    /// A slot for a loaded plugin, written to the shared table in a worker. Slot 0 means "unknown" (past the
    /// table's end: more than 4,096 plugins loaded at once).
    /// `image`: the plugin's dlopen handle, whose mapped range the slot records (nil: not loaded from a file).
    static func register(
        path: String, id: String, version: String, digest: String, copy: String? = nil,
        image: UnsafeMutableRawPointer? = nil
    ) -> UInt16 {
        _ = callWord
        let info = BlackBox.PluginInfo(path: path, id: id, version: version, digest: digest, copy: copy ?? "")
        let slot: Int
        if freeSlots.count > unmappedKept {
            slot = freeSlots.removeFirst()
            names[slot] = info
        } else {
            guard names.count <= BlackBox.slotCount else { return 0 }
            names.append(info)
            slot = names.count - 1
        }
        if table != nil || locatesFaultsInLastImage {
            var (low, high): (UInt64, UInt64) = (0, 0)
            let range = image.flatMap { csystem_image_range($0, &low, &high) ? low..<high : nil }
            if let table { BlackBox.writeSlot(slot, plugin: info, image: range, table: table) }
            if locatesFaultsInLastImage, let range { csystem_set_fault_image(range.lowerBound, range.upperBound) }
        }
        return UInt16(slot)
    }

    /// Forgets the mapped range of the image in `slot`, once it is unmapped (another image may be mapped there).
    /// Its slot is then given to the next plugin loaded: no call can be made into an unmapped image.
    static func imageUnmapped(slot: UInt16) {
        guard slot > 0, Int(slot) < names.count, names[Int(slot)] != nil else { return }
        names[Int(slot)] = nil
        freeSlots.append(Int(slot))
        guard let table else { return }
        BlackBox.retireImage(slot: Int(slot), table: table)
    }

    /// The word that names the call in progress (0 between calls), for a watchdog on another thread to read; in a
    /// process no supervisor reads, a private page made on first use.
    public static var callWord: UnsafePointer<UInt64> {
        if let words { return UnsafePointer(words + 1) }
        let local = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
        local.initialize(repeating: 0, count: 8)
        words = local
        return UnsafePointer(local + 1)
    }

    /// The slot of the plugin whose call is in progress (nil between calls or when its slot is unknown), read on
    /// the main thread, where plugin calls are made.
    static var currentSlot: UInt16? {
        guard let word = words?[1], word & 0xFFFF != 0 else { return nil }
        return UInt16(truncatingIfNeeded: word)
    }

    /// The plugin and call in progress, "libx.so (com.x 1.0) in draw", for messages about values it handed over.
    static var currentCallDescription: String? {
        guard let word = words?[1] else { return nil }
        let slot = Int(word & 0xFFFF)
        guard slot > 0, slot < names.count, let plugin = names[slot] else { return nil }
        let call = PluginCall(rawValue: UInt8(truncatingIfNeeded: word >> 16)) ?? .none
        return "\(plugin.displayName) in \(call.name)"
    }
}
