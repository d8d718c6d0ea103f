import Dispatch
import FoundationEssentials
import HubCore

/// The gate every hubhost command puts in front of loading: each plugin file is probed in a child process once
/// per version (cached on disk), and only files that passed are loaded in the host. A plugin that crashes or
/// hangs while loading is quarantined with its reason instead of taking the command down.
///
/// Files that are not loadable ELF shared objects are let through: their probe refuses them without running any
/// of their code, and the loader rejects them with its own reason.
public final class ProbeGate: @unchecked Sendable {
    public enum Verdict: Sendable {
        /// Probed (now or earlier) and fine; the report lists what it offers.
        case passed(ProbeReport)
        case quarantined(QuarantineRecord)
        /// Not a loadable image: the loader will reject it with the reason.
        case notProbed
    }

    public let cache: ProbeCache
    public let runner: ProbeRunner
    /// Probe every file again (`--reprobe`): the cached verdicts, quarantines among them, are not used, and the
    /// new ones replace them.
    public var ignoresCachedVerdicts = false
    /// How many scanner children run at once on a cold cache.
    public var parallelism = max(2, ProcessInfo.processInfo.activeProcessorCount)

    public init(cacheDirectory: URL, runner: ProbeRunner) {
        self.runner = runner
        self.cache = Self.cache(in: cacheDirectory, executable: runner.executable)
    }

    private static func cache(in directory: URL, executable: URL) -> ProbeCache {
        let exe = FileStamp.of(executable)
        let identity = "\(executable.path)#\(exe?.size ?? 0)#\(exe?.mtimeNanos ?? 0)"
        return ProbeCache(file: directory.appendingPathComponent("probe-cache.json"), hostIdentity: identity)
    }

    /// Records a quarantine a worker's supervisor decided (a fault at run time) in the cache every command reads,
    /// so the next run does not load that file version either. A changed file clears it, as any quarantine.
    public static func persist(_ record: QuarantineRecord, cacheDirectory: URL) {
        guard let executable = ProbeRunner.defaultExecutable() else { return }
        let cache = cache(in: cacheDirectory, executable: executable)
        let url = URL(fileURLWithPath: record.file)
        guard let stamp = FileStamp.of(url) else { return }
        var entry = ProbeCache.Entry(
            size: stamp.size, mtimeNanos: stamp.mtimeNanos, inode: stamp.inode, hash: record.hash)
        entry.quarantine = record
        cache.store(url, entry)
        cache.save()
    }

    /// A gate with the default `hubhost` executable, or nil when probing is impossible or switched off
    /// (`HUBHOST_PROBE=0`, or inside a probe child).
    public static func standard(cacheDirectory: URL, timeout: Double = 5, warm: Bool = false) -> ProbeGate? {
        let environment = HostEnvironment.current
        guard environment[HostEnvironment.probe] != "0", environment[HostEnvironment.probeChild] == nil,
            let executable = ProbeRunner.defaultExecutable()
        else { return nil }
        return ProbeGate(
            cacheDirectory: cacheDirectory,
            runner: ProbeRunner(
                executable: executable, timeout: timeout,
                workDirectory: cacheDirectory.appendingPathComponent("probe-work"), warm: warm))
    }

    /// The probe cache's folder: next to the private image copies (`…/hubhost/probe` beside `…/hubhost/images`).
    public static func defaultCacheDirectory(imagesDirectory: URL?) -> URL {
        guard let imagesDirectory else {
            return PrivateCopies.defaultDirectory().deletingLastPathComponent().appendingPathComponent("probe")
        }
        return imagesDirectory.appendingPathComponent("probe")
    }

    /// Puts the gate in front of `host.loadPlugins(in:)`: quarantined files are listed, never loaded.
    public func install(on host: PluginHost) { host.probeGate = self }

    /// The verdict for one file: from the cache, or by probing it now (and caching the result).
    /// `knownHash`: the hash of the bytes the caller read; a cached verdict for other bytes is not theirs, even
    /// with the same stamp (a replacement copied with its size and mtime kept: `cp -p`, `tar x`, `rsync -t`).
    public func check(_ file: URL, knownHash: String? = nil) -> Verdict {
        guard let stamp = FileStamp.of(file) else { return .notProbed }
        if let entry = cache.lookup(file, stamp: stamp, hash: { ContentDigest.of(file: file) }),
            knownHash == nil || entry.hash == knownHash
        {
            if let quarantine = entry.quarantine { return .quarantined(quarantine) }
            if let report = entry.report { return .passed(report) }
        }
        // One read: the inspection hashes what it checked.
        guard let hash = (try? ELFInspector.inspect(file))?.contentHash else { return .notProbed }
        let verdict = runner.probe(file, stamp: stamp, hash: hash)
        return remember(verdict, for: ProbeRunner.ScanItem(file: file, stamp: stamp, hash: hash))
    }

    /// What a loader about to load bytes the gate did not read itself may do with them.
    enum Clearance {
        /// A probe passed exactly these bytes, or failed them only as the loader will itself.
        case cleared
        case quarantined(QuarantineRecord)
        /// The file changed again while it was probed: what the probe saw is not what the loader read.
        case changed
    }

    /// The clearance of exactly the bytes of `file` that hash to `hash`, probing the file now when no probe has
    /// seen them: for a loader about to load bytes the gate did not read (the file changed after `filter` looked at
    /// it, a build finishing mid-scan, or it is loaded outside `filter`).
    func clearance(of file: URL, hash: String) -> Clearance {
        func cached() -> Clearance? {
            if cache.indexPassed(file, hash: hash) { return .cleared }  // the usual answer, without the JSON
            guard let stamp = FileStamp.of(file), let entry = cache.lookup(file, stamp: stamp, hash: { hash }),
                entry.hash == hash
            else { return nil }
            if let record = entry.quarantine { return record.loaderRejectsItself ? .cleared : .quarantined(record) }
            return entry.report == nil ? nil : .cleared
        }
        if let known = cached() { return known }
        _ = check(file, knownHash: hash)
        cache.save()
        return cached() ?? .changed
    }

    /// Stores a fresh verdict in the cache (keyed by the file's stamp and hash) and returns it as the gate's.
    private func remember(_ verdict: ProbeRunner.Verdict, for item: ProbeRunner.ScanItem) -> Verdict {
        let stamp = item.stamp
        var entry = ProbeCache.Entry(
            size: stamp.size, mtimeNanos: stamp.mtimeNanos, inode: stamp.inode, hash: item.hash)
        switch verdict {
        case .passed(let report):
            entry.report = report
            cache.store(item.file, entry)
            return .passed(report)
        case .quarantined(var record, _):
            record.hash = item.hash  // the caller's: a scanner may start before the caller has hashed the file
            if record.endedFromOutside { return .quarantined(record) }
            entry.quarantine = record
            cache.store(item.file, entry)
            return .quarantined(record)
        }
    }

    /// Splits `files` into those the host may load and the quarantined ones, probing what the cache does not
    /// know (in one scanner child when there are several, see `ProbeScanner`) and saving the cache.
    public func filter(_ files: [URL]) -> (ok: [URL], quarantined: [QuarantineRecord]) {
        filter(files, inspected: { _, _ in })
    }

    /// `filter`, handing each file it read and checked to `inspected` (the loader then loads those bytes rather
    /// than reading the file again), and running `whileProbing` on the calling thread while probe children run
    /// (the loader makes its private copies of those bytes then, rather than after: on ext4 creating a file can
    /// cost as much as probing it, and the calling thread only waits for the children).
    func filter(
        _ files: [URL], inspected: (URL, PluginImageInfo) -> Void, whileProbing: () -> Void = {}
    ) -> (ok: [URL], quarantined: [QuarantineRecord]) {
        // Only quarantines matter here: a passed or unprobed file is loaded (and the loader judges the latter).
        var quarantines = [QuarantineRecord?](repeating: nil, count: files.count)
        // Stamps and the cache first: the children start before this thread reads and hashes the files (starting
        // a process costs about what reading a folder of small plugins does).
        var unknown: [(index: Int, item: ProbeRunner.ScanItem)] = []
        for (index, file) in files.enumerated() {
            guard let stamp = FileStamp.of(file) else { continue }
            let known =
                ignoresCachedVerdicts ? nil : cache.status(file, stamp: stamp, hash: { ContentDigest.of(file: file) })
            switch known {
            case .passed?: continue
            case .quarantined(let record)?:
                quarantines[index] = record
                continue
            case nil: unknown.append((index, ProbeRunner.ScanItem(file: file, stamp: stamp, hash: "")))
            }
        }
        if !unknown.isEmpty {
            let probing = startProbing(unknown.map(\.item))
            // One read: the inspection hashes what it checked.
            for (k, (_, item)) in unknown.enumerated() {
                guard let image = try? ELFInspector.inspect(item.file) else { continue }
                inspected(item.file, image)
                unknown[k].item.hash = image.contentHash
            }
            whileProbing()
            probing.children.wait()
            for ((index, item), verdict) in zip(unknown, probing.parts.joined()) {
                var item = item
                // Not an image to this process: the verdict is kept under the hash of what the probe read (mostly
                // a refusal, made without running any of it, that the loader will repeat; if a build finished in
                // between, the loader's bytes load only when their hash has a verdict, see `clearance`).
                if item.hash.isEmpty {
                    guard let hash = verdict.report?.hash else { continue }
                    item.hash = hash
                }
                if case .quarantined(let record) = remember(verdict, for: item) { quarantines[index] = record }
            }
        }
        cache.save()
        var ok: [URL] = []
        var quarantined: [QuarantineRecord] = []
        for (file, quarantine) in zip(files, quarantines) {
            // A plugin whose init merely fails is safe to load: the loader rejects it with the same reason.
            if let record = quarantine, !record.loaderRejectsItself {
                quarantined.append(record)
            } else {
                ok.append(file)
            }
        }
        return (ok, quarantined)
    }
}

extension ProbeGate {
    /// Starts the children that probe `items` (their hashes may still be empty), each waited for on a thread of its
    /// own: one probe child for one file (forked from the warm server when there is one), else a scanner per core
    /// (each costs a process start, so not for a handful of files). Verdicts come in the order of `items`.
    fileprivate func startProbing(_ items: [ProbeRunner.ScanItem]) -> ScanResults {
        let scanners = items.count == 1 ? 1 : min(max(1, parallelism), (items.count + 31) / 32)
        let chunk = (items.count + scanners - 1) / scanners
        let results = ScanResults(parts: scanners)
        let runner = runner
        for part in 0..<scanners {
            let share = Array(items[min(items.count, part * chunk)..<min(items.count, (part + 1) * chunk)])
            // A thread, not Dispatch's pool: it only waits, and the caller may be a pool thread itself.
            let wait: @Sendable () -> Void = {
                if items.count == 1, let item = share.first {
                    results.store([runner.probe(item.file, stamp: item.stamp, hash: item.hash)], part: part)
                } else {
                    results.store(runner.scan(share), part: part)
                }
            }
            results.children.enter()
            if !Threads.detach(name: "hubhost-probe", wait) { wait() }
        }
        return results
    }
}

/// The verdicts of the probe children, each stored by the thread that waited for it.
private final class ScanResults: @unchecked Sendable {
    let children = DispatchGroup()
    private let lock = Lock()
    private var stored: [[ProbeRunner.Verdict]]

    init(parts: Int) { stored = Array(repeating: [], count: parts) }

    func store(_ verdicts: [ProbeRunner.Verdict], part: Int) {
        lock.withLock { stored[part] = verdicts }
        children.leave()
    }

    /// Read once `children` has been waited for.
    var parts: [[ProbeRunner.Verdict]] { lock.withLock { stored } }
}
