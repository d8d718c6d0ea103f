import CHubSystem
import Dispatch
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A cold folder probed by one scanner child for all its plugins, as GStreamer's plugin scanner does: one
/// `hubhost probe --scan FILE…` runs the conformance suite on each file in turn, announcing each with a line of
/// its own, so that when it crashes or hangs the parent knows which plugin did it. That plugin is quarantined
/// (with the phase it died in and the tail of stderr) and a new scanner goes on at the next file.
///
/// Starting hubhost costs tens of milliseconds and a fork several; a folder of hundreds of plugins pays that once.
/// The price is the one GStreamer pays: plugins probed in the same process can disturb one another, so a plugin
/// that breaks the process for the next one costs that one a rescan, never the host.
enum ProbeScanner {
    /// The line the scanner writes before probing `files[index]`: `{"scan":INDEX,"stderr":OFFSET}`, where OFFSET is
    /// how far its stderr file was written then. The parent reads the line later than the child goes on, so only
    /// the child can say where a file's stderr starts. Without a file for stderr (a terminal), `{"scan":INDEX}`.
    static func beginLine(_ index: Int, stderrOffset: Int?) -> [UInt8] {
        Array("{\"scan\":\(index)\(stderrOffset.map { ",\"stderr\":\($0)" } ?? "")}\n".utf8)
    }

    /// The index of a begin line and the stderr offset it gives.
    static func begin(_ line: Substring) -> (index: Int, stderrOffset: Int?)? {
        guard line.hasPrefix("{\"scan\":"), line.hasSuffix("}") else { return nil }
        let fields = line.dropFirst(8).dropLast().split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
        guard let index = fields.first.flatMap({ Int($0) }) else { return nil }
        guard fields.count == 2 else { return (index, nil) }
        guard fields[1].hasPrefix("\"stderr\":"), let offset = Int(fields[1].dropFirst(9)) else { return nil }
        return (index, offset)
    }

    /// The child side (`hubhost probe --scan`): probes every file, each announced first; exits 0.
    static func scan(_ files: [URL], cacheDirectory: URL) -> Never {
        let phases = PhaseBox.Writer()
        for (index, file) in files.enumerated() {
            let offset = lseek(2, 0, SEEK_CUR)
            let line = beginLine(index, stderrOffset: offset < 0 ? nil : Int(offset))
            line.withUnsafeBytes(ProbeOutput.write)
            phases?.begin(index)
            _ = ConformanceSuite.runPrinting(file: file, cacheDirectory: cacheDirectory, view: nil, phases: phases)
            // The next plugin would be probed in a process this one damaged: the parent probes the rest afresh.
            if PluginHost.processDamaged { _exit(0) }
        }
        _exit(0)
    }
}

extension ProbeRunner {
    /// `hubhost probe --scan`: the scanner child's side.
    public static func scanChild(_ files: [URL], cache: URL) -> Never {
        ProbeScanner.scan(files, cacheDirectory: cache)
    }

    /// A file to scan: its stamp and content hash, read by the caller. The hash only goes into quarantine records,
    /// so a caller that hashes while the children run (`ProbeGate`) may pass it empty and set it in the records.
    public struct ScanItem: Sendable {
        public var file: URL
        public var stamp: FileStamp
        public var hash: String
        public init(file: URL, stamp: FileStamp, hash: String) {
            self.file = file
            self.stamp = stamp
            self.hash = hash
        }
    }

    /// How many more scanners a scan may add to wait out hangs side by side.
    static let extraScannersForHangs = 6

    /// Probes `items` with as few scanner children as their crashes and hangs allow (one when none does); the
    /// verdicts come back in the order of `items`. Each file gets `timeout` seconds. After a hang, the files left
    /// are split between two scanners (while `extraScannersForHangs` allows), so plugins that all hang are waited
    /// out side by side: ten took 50 s one after another.
    public func scan(_ items: [ScanItem]) -> [Verdict] { scan(items[...], spare: Self.extraScannersForHangs) }

    private func scan(_ items: ArraySlice<ScanItem>, spare: Int) -> [Verdict] {
        let items = Array(items)
        var verdicts = [Verdict?](repeating: nil, count: items.count)
        var next = 0
        while next < items.count {
            let run = scanChild(items[next...].map(\.file))
            for (offset, child) in run.finished {
                verdicts[next + offset] = verdict(
                    items[next + offset].file, stamp: items[next + offset].stamp, hash: items[next + offset].hash,
                    child: child)
            }
            // The file in progress when the scanner died or hung is its culprit; the next scanner starts after it.
            // A scanner that could not start at all leaves its first file to the one-child-per-file probe.
            guard let stopped = run.stopped else { break }
            let index = next + stopped.offset
            verdicts[index] =
                stopped.neverStarted
                ? probe(items[index].file, stamp: items[index].stamp, hash: items[index].hash)
                : verdict(items[index].file, stamp: items[index].stamp, hash: items[index].hash, child: stopped.child)
            // A crash after other plugins ran in the same scanner may be their doing (a limit or a handler one of
            // them left): the file is probed again alone before it is blamed. Hangs are not (another full timeout).
            if stopped.offset > 0, !stopped.child.timedOut, !stopped.neverStarted,
                case .quarantined? = verdicts[index]
            {
                let alone = probe(items[index].file, stamp: items[index].stamp, hash: items[index].hash)
                // Blamed only when it fails alone too, with what the scanner saw (it tells more: the phase box).
                if case .passed = alone { verdicts[index] = alone }
            }
            next = index + 1
            let left = items.count - next
            if stopped.child.timedOut, spare > 0, left >= 2 {
                // Every other file to a second scanner, on a thread of its own (it only waits), each with half of
                // what is spare: files that hang often come together (one bug, one prefix), and halves would leave
                // them all to one side.
                let mine = Array(stride(from: next, to: items.count, by: 2))
                let theirs = Array(stride(from: next + 1, to: items.count, by: 2))
                let other = Locked<[Verdict]>([])
                let done = DispatchSemaphore(value: 0)
                let theirItems = theirs.map { items[$0] }[...]
                let waitForOther: @Sendable () -> Void = { [self] in
                    let found = scan(theirItems, spare: (spare - 1) / 2)
                    other.withLock { $0 = found }
                    done.signal()
                }
                if !Threads.detach(name: "hubhost-probe", waitForOther) { waitForOther() }
                let found = scan(mine.map { items[$0] }[...], spare: (spare - 1) - (spare - 1) / 2)
                done.wait()
                for (index, verdict) in zip(mine, found) { verdicts[index] = verdict }
                for (index, verdict) in zip(theirs, other.withLock { $0 }) { verdicts[index] = verdict }
                next = items.count
            }
        }
        // A scanner that ended early without a crash (it cannot happen, but must not lose files) probes the rest.
        return verdicts.enumerated().map { index, verdict in
            verdict ?? probe(items[index].file, stamp: items[index].stamp, hash: items[index].hash)
        }
    }

    struct ScanRun {
        /// Files the scanner finished (their offset in its list), with their output.
        var finished: [(Int, ChildResult)] = []
        /// The file it was on when it crashed, hung or could not start.
        var stopped: (offset: Int, child: ChildResult, neverStarted: Bool)?
    }

    /// One scanner child over `files`, read line by line until it ends, crashes or hangs on a file.
    private func scanChild(_ files: [URL]) -> ScanRun {
        counter.increment()
        var run = ScanRun()
        ProbeRunner.removeStaleScratch(in: workDirectory)
        let scratch = workDirectory.appendingPathComponent("scan-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let errPath = scratch.appendingPathComponent("stderr").path

        var output: [Int32] = [0, 0]
        guard pipe(&output) == 0 else {
            run.stopped = (0, ChildResult(), true)
            return run
        }
        // Scanners start side by side: one must not inherit another's pipe (its reader would wait for both).
        for fd in output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addclose(&actions, output[0])
        // The phases go to a shared page rather than down the pipe (see `PhaseBox`).
        let phaseBox = PhaseBox.create(in: scratch)
        defer { phaseBox.map { _ = close($0) } }
        if let phaseBox { posix_spawn_file_actions_adddup2(&actions, phaseBox, PhaseBox.childDescriptor) }
        let spawned = Self.spawnChild(
            executable,
            ["probe", "--scan", "--cache", scratch.appendingPathComponent("cache").path] + files.map(\.path),
            actions: &actions,
            environment: phaseBox == nil ? [:] : [PhaseBox.environmentKey: String(PhaseBox.childDescriptor)])
        close(output[1])
        defer { close(output[0]) }
        guard case .success(let pid) = spawned else {
            run.stopped = (0, ChildResult(), true)
            return run
        }

        var current: Int?
        var lines = ""
        var stderrStart = 0
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var timer = ChildTimer(pid: pid)
        var timedOut = false
        // Readable once the scanner has ended: a process its plugin code forked may hold the pipe open after it
        // (one that left the scanner's process group, which the scanner itself does not end), so the end of the
        // pipe alone would wait out the budget and blame the last plugin.
        let exitDescriptor = csystem_pidfd_open(pid)
        defer { if exitDescriptor >= 0 { close(exitDescriptor) } }
        var scannerEnded = false
        var slowNoted: Int?

        /// The end of stderr between `offset` and `end` (the end of the file when nil), as `CrashText.tail` cuts it
        /// (read from 16 KiB back: a Swift trap's reason comes before a backtrace of some 3 KiB).
        func stderrTail(from offset: Int, to end: Int? = nil) -> String {
            let end = end ?? stderrSize()
            guard end > offset else { return "" }
            let fd = open(errPath, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return "" }
            defer { close(fd) }
            let start = max(offset, end - 16_384)
            let bytes = readBytes(fd, count: end - start, at: start) ?? []
            return CrashText.tail(of: String(decoding: bytes, as: UTF8.self))
        }
        func stderrSize() -> Int {
            var status = stat()
            return stat(errPath, &status) == 0 ? Int(status.st_size) : 0
        }
        /// Ends the current file's output; `stderrEnd` is where the next file's stderr starts, when known.
        func finishCurrent(stderrEnd: Int? = nil) {
            guard let index = current else { return }
            var child = ChildResult()
            child.exitStatus = 0
            child.stdout = lines
            // Most plugins say nothing on stderr: the offsets, or a stat, tell without opening the file.
            child.stderrTail = stderrTail(from: stderrStart, to: stderrEnd)
            run.finished.append((index, child))
            current = nil
        }

        reading: while true {
            // Whole lines first: a file's begin line ends the previous file's output.
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if let begin = ProbeScanner.begin(line[...]) {
                    finishCurrent(stderrEnd: begin.stderrOffset)
                    current = begin.index
                    lines = ""
                    stderrStart = begin.stderrOffset ?? stderrSize()
                    timer.restart()
                } else {
                    lines += line + "\n"
                }
            }
            let left = timeout - timer.look()
            if let index = current, index != slowNoted, index < files.count,
                timeout - left >= ProbeRunner.slowProbeNoticeSeconds
            {
                slowNoted = index
                saySlow(files[index], phase: phaseBox.flatMap { PhaseBox.phase(in: $0, file: index) }?.phase)
            }
            if left <= 0 {
                kill(-pid, SIGKILL)  // its group: what its plugins forked too (`OwnProcessGroup`)
                kill(pid, SIGKILL)
                timedOut = true
                break
            }
            var fds = [
                pollfd(fd: output[0], events: Int16(POLLIN), revents: 0),
                pollfd(fd: scannerEnded ? -1 : exitDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            // Once the scanner has ended, what is left in the pipe is already there.
            let wait = scannerEnded ? 100 : Int32(min(left * 1000, 1000).rounded(.up))
            let ready = poll(&fds, 2, wait)
            if ready < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 {
                scannerEnded = true
                kill(-pid, SIGKILL)  // still its group's id: the scanner is not reaped yet
            }
            if scannerEnded && fds[0].revents == 0 { break reading }
            guard fds[0].revents != 0 else { continue }
            let n = read(output[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break reading }
            pending += buffer[0..<n]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        OwnProcessGroup.ended(pid)
        let signal = status & 0x7F
        let exitStatus = (status >> 8) & 0xFF
        if !pending.isEmpty { lines += String(decoding: pending, as: UTF8.self) }  // a last line with no newline
        // A file whose report line came out is done, whatever happened next. One without it is not, even at
        // status 0: plugin code called exit(0) (or hid the report by redirecting stdout) in the phase noted.
        if current != nil, !timedOut, signal == 0, lines.contains("{\"report\":") {
            finishCurrent()
        }
        if let index = current {
            var child = ChildResult()
            child.stdout = lines
            // Where it stopped, and what it said on the way, for the verdict to name.
            child.phase = phaseBox.flatMap { PhaseBox.phase(in: $0, file: index) }
            child.stderrTail = stderrTail(from: stderrStart)
            if timedOut {
                child.timedOut = true
            } else if signal != 0 {
                child.signal = signal
                child.stopSignalFromOutside = phaseBox.map { PhaseBox.stopSignalFromOutside(in: $0) }
            } else {
                child.exitStatus = exitStatus
            }
            run.stopped = (index, child, false)
        } else if run.finished.count < files.count, let last = run.finished.last?.0 {
            // Ended between files (e.g. killed from outside): the next scanner starts at the next file.
            run.stopped = nil
            if last + 1 < files.count { run.stopped = (last + 1, ChildResult(), true) }
        } else if run.finished.isEmpty {
            run.stopped = (0, ChildResult(), true)
        }
        return run
    }
}

/// Where a scanner child keeps the phase it is in, for its parent to read after a crash or hang: one page of a
/// file they share (unlinked, inherited as descriptor 3), instead of a line down the pipe before every phase.
/// A plugin goes through a dozen phases; a line each cost the child a write and woke the parent for it, a
/// sixth of a cold scan. A store into shared memory survives the child's death just as well.
///
/// Layout: bytes 0–7 `magic`, 8–11 the file's index in the scan plus one (little-endian `UInt32`), 12–15 the
/// length of the phase line, 16–23 a stop signal that came from outside the child (sender pid << 8 | signal, as a
/// worker's black box notes it; 0: none), then the phase line (the JSON of a progress line, without newline).
enum PhaseBox {
    static let size = 4096
    static let magic: UInt64 = 0x3130_5345_5341_4850  // "PHASES01"
    static let environmentKey = "HUBHOST_SCAN_PHASES"
    /// The descriptor the child finds it on.
    static let childDescriptor: Int32 = 3
    private static let header = 24
    private static let stopWordOffset = 16

    /// The parent's side: an unlinked file of `size` bytes in `directory`, close-on-exec; nil when none can be made
    /// (the scanner then prints its phases).
    static func create(in directory: URL) -> Int32? { try? BlackBox.unlinkedFile(size: size, in: directory) }

    /// The phase the child last stored while on file `index`, read from the shared file.
    static func phase(in fd: Int32, file index: Int) -> ProbePhase? {
        var page = [UInt8](repeating: 0, count: size)
        guard pread(fd, &page, size, 0) == size else { return nil }
        let word = page.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let file = page.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self) }
        let length = Int(page.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) })
        guard word == magic, Int(file) == index + 1, length > 0, length <= size - header else { return nil }
        return ProbeJSON.phaseLine(Substring(decoding: page[header..<header + length], as: UTF8.self))
    }

    /// Whether the child noted a stop signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT) sent from outside it. A child ended
    /// by one that noted none sent it itself: plugin code's `kill(0, SIGTERM)` or `raise`. (SIGKILL is never
    /// noted: it cannot be caught.)
    static func stopSignalFromOutside(in fd: Int32) -> Bool {
        var word: UInt64 = 0
        guard pread(fd, &word, 8, off_t(stopWordOffset)) == 8 else { return true }
        return UInt64(littleEndian: word) != 0
    }

    /// The child's side: the mapped page, when the parent passed one.
    final class Writer {
        private let page: UnsafeMutableRawPointer

        init?(environment: HostEnvironment = .current) {
            guard environment[PhaseBox.environmentKey] == String(PhaseBox.childDescriptor),
                let mapped = mmap(nil, PhaseBox.size, PROT_READ | PROT_WRITE, MAP_SHARED, PhaseBox.childDescriptor, 0),
                mapped != MAP_FAILED
            else { return nil }
            page = mapped
            page.storeBytes(of: PhaseBox.magic.littleEndian, as: UInt64.self)
            page.storeBytes(of: UInt64(0), toByteOffset: PhaseBox.stopWordOffset, as: UInt64.self)
            // A stop signal from outside (a user's kill) is noted; one plugin code sends its own process is not.
            csystem_note_stop_signals((page + PhaseBox.stopWordOffset).assumingMemoryBound(to: UInt64.self))
        }

        deinit { munmap(page, PhaseBox.size) }

        /// Starts file `index`: no phase yet.
        func begin(_ index: Int) {
            page.storeBytes(of: UInt32(0), toByteOffset: 12, as: UInt32.self)
            page.storeBytes(of: UInt32(truncatingIfNeeded: index + 1).littleEndian, toByteOffset: 8, as: UInt32.self)
        }

        /// Stores `phase` (without its component when the line would not fit the page).
        func store(_ phase: ProbePhase) {
            var line = ProbeJSON.bytes { ConformanceSuite.writePhaseLine(phase, to: &$0) }
            if line.count > PhaseBox.size - PhaseBox.header {
                line = ProbeJSON.bytes { ConformanceSuite.writePhaseLine(ProbePhase(phase: phase.phase), to: &$0) }
            }
            guard line.count <= PhaseBox.size - PhaseBox.header else { return }
            line.withUnsafeBytes { (page + PhaseBox.header).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            page.storeBytes(of: UInt32(line.count).littleEndian, toByteOffset: 12, as: UInt32.self)
        }
    }
}
