import Foundation

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
    /// The line the scanner writes before probing `files[index]`.
    struct Begin: Codable { var scan: Int }

    /// The child side (`hubhost probe --scan`): probes every file, each announced first; exits 0.
    static func scan(_ files: [URL], cacheDirectory: URL) -> Never {
        for (index, file) in files.enumerated() {
            var line = (try? JSONEncoder().encode(Begin(scan: index))) ?? Data()
            line.append(0x0A)
            _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            _ = ConformanceSuite.runPrinting(file: file, cacheDirectory: cacheDirectory)
        }
        _exit(0)
    }
}

extension ProbeRunner {
    /// `hubhost probe --scan`: the scanner child's side.
    public static func scanChild(_ files: [URL], cache: URL) -> Never {
        ProbeScanner.scan(files, cacheDirectory: cache)
    }

    /// A file to scan: its stamp and content hash, read by the caller.
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

    /// Probes `items` with as few scanner children as their crashes and hangs allow (one when none does); the
    /// verdicts come back in the order of `items`. Each file gets `timeout` seconds.
    public func scan(_ items: [ScanItem]) -> [Verdict] {
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
            next = index + 1
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
        let spawned = Self.spawnChild(
            executable,
            ["probe", "--scan", "--cache", scratch.appendingPathComponent("cache").path] + files.map(\.path),
            actions: &actions)
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
        var deadline = Monotonic.now() + timeout
        var timedOut = false
        let decoder = JSONDecoder()

        func stderrTail(from offset: Int) -> String {
            guard let handle = FileHandle(forReadingAtPath: errPath) else { return "" }
            defer { try? handle.close() }
            try? handle.seek(toOffset: UInt64(offset))
            let text = String(decoding: handle.readDataToEndOfFile().suffix(2000), as: UTF8.self)
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func stderrSize() -> Int {
            var status = stat()
            return stat(errPath, &status) == 0 ? Int(status.st_size) : 0
        }
        func finishCurrent() {
            guard let index = current else { return }
            var child = ChildResult()
            child.exitStatus = 0
            child.stdout = lines
            child.stderrTail = stderrTail(from: stderrStart)
            run.finished.append((index, child))
            current = nil
        }

        reading: while true {
            // Whole lines first: a file's begin line ends the previous file's output.
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("{\"scan\":"),
                    let begin = try? decoder.decode(ProbeScanner.Begin.self, from: Data(line.utf8))
                {
                    finishCurrent()
                    current = begin.scan
                    lines = ""
                    stderrStart = stderrSize()
                    deadline = Monotonic.now() + timeout
                } else {
                    lines += line + "\n"
                }
            }
            let left = deadline - Monotonic.now()
            if left <= 0 {
                kill(pid, SIGKILL)
                timedOut = true
                break
            }
            var fds = [pollfd(fd: output[0], events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, Int32(min(left * 1000, 1000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let n = read(output[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break reading }
            pending += buffer[0..<n]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        let exitStatus = (status >> 8) & 0xFF
        // A file whose report line came out is done, whatever happened next.
        if current != nil, !timedOut, signal == 0, exitStatus == 0 || lines.contains("{\"report\":") {
            finishCurrent()
        }
        if let index = current {
            var child = ChildResult()
            child.stdout = lines
            child.stderrTail = stderrTail(from: stderrStart)
            if timedOut {
                child.timedOut = true
            } else if signal != 0 {
                child.signal = signal
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
