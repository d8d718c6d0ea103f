import CHubSystem
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// The shared file a worker process writes its last plugin call into, so that its supervisor can name the
/// culprit after the worker crashed, hung or exited (Chromium's crash keys, on one page).
///
/// Layout (little-endian 64-bit words at the start, then one fixed-size slot per loaded plugin):
///
/// | word | meaning |
/// | --- | --- |
/// | 0 | magic `BlackBox.magic` |
/// | 1 | the call in progress: sequence << 32 \| `PluginCall` << 16 \| plugin slot (0: no plugin call) |
/// | 2 | the model of that call, as a `ModelLocation` code (0: none) |
/// | 3 | the event-script step (line) being applied (0: none) |
/// | 4 | the input being drawn, 1-based, for commands that draw several views (0: none) |
/// | 5 | the worker's stderr was not its own any more: 1 after the call in word 1 (checked after each call when the
/// supervisor asked), 2 at exit (0: it was) |
/// | 6 | a signal that asks the process to end, sent from outside it: sender pid << 8 \| signal (pid 0: the kernel;
/// 0: none) |
/// | 7 | the last alarm, timer or lowered limit plugin code set in a call: kind << 56 \| the call word's low 32 bits
/// (kind 1 an alarm or interval timer, 2 the file size limit, 3 the CPU time limit; 0: none); kind 4: the signal
/// plugin code meant for the supervisor (SIGSTOP, SIGKILL, SIGTSTP) << 32, sent as SIGTERM |
/// | 8 | the thread a fatal signal hit or that called exit() off the main thread: 1 the main thread, 2 another (0: none) |
/// | 9 | how many addresses follow (at most `faultAddressCapacity`) |
/// | 10… | the faulting instruction's address (a signal), then the return addresses of that thread's stack |
///
/// At byte `drawingOffset`, `drawingCapacity` bytes: what is being drawn when no view file names it (a gallery
/// story and width), a NUL-terminated line (empty: nothing noted).
///
/// Plugin slot `n` (1-based) is `slotSize` bytes at `tableOffset + (n - 1) * slotSize`: a NUL-terminated line
/// `file path \t plugin id \t version \t content digest`, written when the plugin is loaded, and in the slot's
/// last 16 bytes the addresses its image is mapped at, `[start, end)` (zero when unknown). Once the image is
/// unmapped, `start` has its top bit set (`unmappedFlag`): the range where its code was, until the slot is given
/// to another plugin.
///
/// A fault on the main thread is the plugin call in progress's (word 1). On another thread (a plugin's own), that
/// call may be another plugin's: the fault is the plugin whose image holds the innermost of its addresses.
///
/// The worker only ever stores; the supervisor only reads, while the worker runs (the watchdog) and after it
/// ended. The file is unlinked as soon as both have it open, so nothing is left on disk.
public enum BlackBox {
    public static let magic: UInt64 = 0x3130_5842_4255_48  // "HUBBX01"
    public static let tableOffset = 4096
    public static let slotSize = 512
    public static let slotCount = 4096
    public static let fileSize = tableOffset + slotSize * slotCount
    /// Word index of the fatal-signal record (see the layout).
    public static let faultWord = 8
    /// Word index of the stop-signal record (see the layout).
    public static let stopSignalWord = 6
    /// Word index of the last process-wide change plugin code made in a call (see the layout).
    public static let stateChangeWord = 7
    public static let faultAddressCapacity = 32
    /// Where the "what is being drawn" line sits, and its size with the NUL (see the layout).
    static let drawingOffset = 2048
    static let drawingCapacity = 256
    /// Bytes of a slot's line, NUL included; the image range follows.
    static let lineCapacity = slotSize - 16

    /// The environment variable that tells a worker which inherited descriptor holds its black box.
    public static let environmentKey = "HUBHOST_WORKER_BLACKBOX"

    /// A plugin as a slot describes it.
    /// A process-wide change plugin code made in a call (word 7's kinds 1 to 3), and the signals it brings later.
    public enum StateChange: UInt64, Sendable {
        case timer = 1
        case fileSizeLimit = 2
        case cpuLimit = 3

        /// As a report says it: "set an alarm or timer".
        public var what: String {
            switch self {
            case .timer: return "set an alarm or timer"
            case .fileSizeLimit: return "lowered the file size limit"
            case .cpuLimit: return "lowered the CPU time limit"
            }
        }

        public var signals: [Int32] {
            switch self {
            case .timer: return [SIGALRM, SIGVTALRM, SIGPROF]
            case .fileSizeLimit: return [SIGXFSZ]
            case .cpuLimit: return [SIGXCPU]
            }
        }
    }

    /// The plugin in slot `slot` (1-based) of the table at `table` (`tableOffset` into the box), if it was written.
    static func plugin(inTable table: UnsafeRawPointer, slot: Int) -> PluginInfo? {
        guard slot >= 1, slot <= slotCount else { return nil }
        let bytes = UnsafeRawBufferPointer(start: table + (slot - 1) * slotSize, count: lineCapacity)
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return PluginInfo(line: String(decoding: bytes[..<end], as: UTF8.self))
    }

    public struct PluginInfo: Equatable, Sendable {
        public var path: String
        public var id: String
        public var version: String
        public var digest: String
        /// The private copy hubhost loaded (empty: the file itself): the build that ran, which a rebuild of the
        /// file does not replace, so a fault report's `addr2line` reads it.
        public var copy: String = ""

        /// "libfragile.so (com.example.fragile 1.0.0)".
        public var displayName: String {
            let file = PathText.fileName(path)
            return id.isEmpty ? file : "\(file) (\(id) \(version))"
        }

        /// The slot's line; the copy only when the whole line fits (a slot line cut short would not parse).
        var line: String {
            let line = [path, id, version, digest].joined(separator: "\t")
            let withCopy = line + "\t" + copy
            return copy.isEmpty || withCopy.utf8.count >= BlackBox.lineCapacity ? line : withCopy
        }

        public init(path: String, id: String, version: String, digest: String, copy: String = "") {
            self.path = path
            self.id = id
            self.version = version
            self.digest = digest
            self.copy = copy
        }

        init?(line: String) {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 4 || parts.count == 5 else { return nil }
            self.init(
                path: parts[0], id: parts[1], version: parts[2], digest: parts[3],
                copy: parts.count == 5 ? parts[4] : "")
        }
    }

    /// Word 5's values.
    public enum StderrLoss {
        public static let none: UInt64 = 0
        /// The call in progress (word 1) closed it: found by a worker checking after every call.
        public static let inCall: UInt64 = 1
        /// It was gone when the worker exited, the call that closed it not known.
        public static let atExit: UInt64 = 2
    }

    /// What the box said when read.
    public struct Snapshot: Equatable, Sendable {
        public var call: PluginCall
        public var plugin: PluginInfo?
        public var location: ModelLocationCode
        public var step: Int
        /// Word 4: the input being drawn (1-based; 0: none).
        public var input: Int = 0
        /// Changes with every call: the watchdog's way to tell a long call from many short ones.
        public var callWord: UInt64
        /// Where a fatal signal hit or exit() was called off the main thread, when the worker noted one.
        public var faultNote: FaultNote?

        /// Word 5: whether, and when, the worker found its stderr was not its own any more.
        public var lostStderr: UInt64 = BlackBox.StderrLoss.none
        /// What was being drawn, when noted (a gallery story: "story "long" of demo:row at 414 pt").
        public var drawing: String?
        /// Word 6: a signal asking the worker to end that came from outside it, and its sender (0: the kernel).
        public var stopSignal: (signal: Int32, sender: pid_t)? {
            stopWord == 0 ? nil : (Int32(truncatingIfNeeded: stopWord & 0xFF), pid_t(truncatingIfNeeded: stopWord >> 8))
        }
        var stopWord: UInt64 = 0
        /// Word 7: the last alarm, timer or lowered limit plugin code set in a call, with that call.
        var stateChangeWord: UInt64 = 0
        /// Word 7, kind 4: the signal plugin code meant for the supervisor (SIGSTOP, SIGKILL), sent as SIGTERM.
        public var signalMeantForSupervisor: Int32? {
            stateChangeWord >> 56 == 4 ? Int32(truncatingIfNeeded: (stateChangeWord >> 32) & 0xFF_FFFF) : nil
        }
        /// What word 7 says: what was set, and the call word it was set in (its call and slot).
        public var stateChange: (change: StateChange, callWord: UInt64)? {
            StateChange(rawValue: stateChangeWord >> 56).map { ($0, stateChangeWord & 0xFFFF_FFFF) }
        }

        /// True while (or when) the worker was inside plugin code.
        public var inPluginCall: Bool { callWord & 0xFFFF != 0 }
    }

    /// The supervisor's side: a mapping of the file.
    public final class Reader: @unchecked Sendable {
        private let words: UnsafeMutablePointer<UInt64>
        private let base: UnsafeMutableRawPointer

        /// Maps `descriptor` (which stays owned by the caller).
        public init?(descriptor: Int32) {
            guard let mapped = mmap(nil, BlackBox.fileSize, PROT_READ, MAP_SHARED, descriptor, 0),
                mapped != MAP_FAILED
            else { return nil }
            base = mapped
            words = mapped.assumingMemoryBound(to: UInt64.self)
        }

        deinit { munmap(base, BlackBox.fileSize) }

        /// The words, for `csystem_guard_supervisor` (read from a signal handler).
        public var wordsForSignalHandler: UnsafePointer<UInt64> { UnsafePointer(words) }

        /// A snapshot with the call and location words given (kept when a signal arrived) instead of the current ones.
        public func read(callWord: UInt64, location: UInt64) -> Snapshot {
            var box = read()
            let slot = Int(callWord & 0xFFFF)
            box.callWord = callWord
            box.call = PluginCall(rawValue: UInt8(truncatingIfNeeded: callWord >> 16)) ?? .none
            box.plugin = slot == 0 ? nil : plugin(slot: slot)
            box.location = ModelLocationCode(location)
            return box
        }

        /// Reads the words (a racing write can only make the watchdog wait one more tick).
        public func read() -> Snapshot {
            // The worker writes the call word and the location word one after the other as a call begins and
            // ends: read them until the call word is the same on both sides of the location, or a snapshot taken
            // as a call returns pairs that call with the location of the one around it (none: "in draw", not "in
            // draw [ns:row] for body[0]").
            var callWord = csystem_load_word(words + 1)
            var location = csystem_load_word(words + 2)
            for _ in 0..<1000 {
                let again = csystem_load_word(words + 1)
                if again == callWord { break }
                callWord = again
                location = csystem_load_word(words + 2)
            }
            let slot = Int(callWord & 0xFFFF)
            return Snapshot(
                call: PluginCall(rawValue: UInt8(truncatingIfNeeded: callWord >> 16)) ?? .none,
                plugin: slot == 0 ? nil : plugin(slot: slot), location: ModelLocationCode(location),
                step: Int(truncatingIfNeeded: words[3]), input: Int(truncatingIfNeeded: words[4]), callWord: callWord,
                faultNote: readFaultNote(), lostStderr: words[5], drawing: readDrawing(),
                stopWord: words[BlackBox.stopSignalWord], stateChangeWord: words[BlackBox.stateChangeWord])
        }

        private func readDrawing() -> String? {
            let bytes = UnsafeRawBufferPointer(start: base + BlackBox.drawingOffset, count: BlackBox.drawingCapacity)
            let line = bytes.prefix { $0 != 0 }
            return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
        }

        /// The plugin in slot `slot` (1-based), if the worker wrote it.
        public func plugin(slot: Int) -> PluginInfo? {
            BlackBox.plugin(inTable: base + BlackBox.tableOffset, slot: slot)
        }

        /// The plugin whose image holds `address`, if any slot's range does. Newest first: an image loaded where an
        /// unloaded one was (a reload) is the one mapped there now.
        public func plugin(holding address: UInt64) -> PluginInfo? { image(holding: address)?.plugin }

        /// The plugin whose image holds `address`, and where that image starts (for an offset into its file).
        /// `unmapped`: among images unmapped since instead (where a plugin's code was, before its unload).
        public func image(holding address: UInt64, unmapped: Bool = false) -> (plugin: PluginInfo, start: UInt64)? {
            let slotStart = { (slot: Int) in self.base + BlackBox.tableOffset + (slot - 1) * BlackBox.slotSize }
            // Slots are written in order: the first empty one ends the table.
            let written = (1...BlackBox.slotCount).first { slotStart($0).load(as: UInt8.self) == 0 }.map { $0 - 1 }
            for slot in stride(from: written ?? BlackBox.slotCount, through: 1, by: -1) {
                let range = slotStart(slot) + BlackBox.lineCapacity
                var low = range.load(as: UInt64.self)
                let high = range.load(fromByteOffset: 8, as: UInt64.self)
                guard (low & BlackBox.unmappedFlag != 0) == unmapped else { continue }
                low &= ~BlackBox.unmappedFlag
                if low <= address && address < high, let plugin = plugin(slot: slot) { return (plugin, low) }
            }
            return nil
        }

        private func readFaultNote() -> FaultNote? {
            let thread = words[BlackBox.faultWord]
            guard thread != 0 else { return nil }
            let count = min(Int(words[BlackBox.faultWord + 1]), BlackBox.faultAddressCapacity)
            let addresses = (0..<count).map { words[BlackBox.faultWord + 2 + $0] }
            return FaultNote(onMainThread: thread == 1, addresses: addresses)
        }
    }

    /// What the worker noted of a fatal signal, or of exit() called off the main thread: the thread, the faulting
    /// instruction's address (a signal) and that stack's return addresses, innermost first.
    public struct FaultNote: Equatable, Sendable {
        public var onMainThread: Bool
        public var addresses: [UInt64]
    }

    /// Writes plugin slot `slot` (1-based) of the table at `table` (the mapping's `tableOffset`): the image range
    /// (`image`, nil: unknown), then the line, whose first byte is what says the slot is written.
    public static func writeSlot(
        _ slot: Int, plugin: PluginInfo, image: Range<UInt64>?, table: UnsafeMutableRawPointer
    ) {
        guard slot >= 1, slot <= slotCount else { return }
        let start = table + (slot - 1) * slotSize
        writeImageRange(image, at: start)
        var bytes = Array(plugin.line.utf8.prefix(lineCapacity - 1))
        bytes.append(0)
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Set in a slot's range start once its image is unmapped (user-space addresses never have it).
    static let unmappedFlag: UInt64 = 1 << 63

    /// Marks slot `slot`'s image range as unmapped, once the image is: no plugin is mapped there now (another may
    /// be later), but code of its that still runs there (a thread it did not stop) is its fault.
    public static func retireImage(slot: Int, table: UnsafeMutableRawPointer) {
        guard slot >= 1, slot <= slotCount else { return }
        let range = table + (slot - 1) * slotSize + lineCapacity
        let start = range.load(as: UInt64.self)
        if start != 0 { range.storeBytes(of: start | unmappedFlag, as: UInt64.self) }
    }

    private static func writeImageRange(_ image: Range<UInt64>?, at slotStart: UnsafeMutableRawPointer) {
        (slotStart + lineCapacity).storeBytes(of: image?.lowerBound ?? 0, as: UInt64.self)
        (slotStart + lineCapacity).storeBytes(of: image?.upperBound ?? 0, toByteOffset: 8, as: UInt64.self)
    }

    /// Creates the shared file, already unlinked: the returned descriptor is the only way to it.
    public static func create(in directory: URL = ScratchFolder.base) throws -> Int32 {
        try unlinkedFile(size: fileSize, in: directory)  // only the worker gets it (as fd 3)
    }

    /// A file of `size` zero bytes in `directory` with no name, close-on-exec from the start (children spawned side
    /// by side must not inherit one another's), for a parent and its child to share through a descriptor:
    /// `O_TMPFILE`, or a named temporary file unlinked at once where the file system has no `O_TMPFILE`.
    static func unlinkedFile(size: Int, in directory: URL) throws -> Int32 {
        var fd = open(directory.path, OutputFile.unnamedFile | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 {
            var template = Array(directory.appendingPathComponent("hubhost-shared-XXXXXX").path.utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        guard ftruncate(fd, off_t(size)) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return fd
    }
}

/// A `ModelLocation` code as read from a black box (0: the call had no model).
public typealias ModelLocationCode = UInt64
