import Dispatch
import FoundationEssentials
import HubCore

/// The gate every hubhost command puts in front of loading: each plugin file is probed in a child process once
/// per version (cached on disk), and only files that passed are loaded in the host. A plugin that crashes or
/// hangs while loading is quarantined with its reason instead of taking the command down.
///
/// Files that are not loadable ELF shared objects are let through unprobed: the loader rejects them with its
/// own reason without running any of their code.
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
    public func check(_ file: URL) -> Verdict {
        guard let stamp = FileStamp.of(file) else { return .notProbed }
        if let entry = cache.lookup(file, stamp: stamp, hash: { ContentDigest.of(file: file) }) {
            if let quarantine = entry.quarantine { return .quarantined(quarantine) }
            if let report = entry.report { return .passed(report) }
        }
        // One read: the inspection hashes what it checked.
        guard let hash = (try? ELFInspector.inspect(file))?.contentHash else { return .notProbed }
        let verdict = runner.probe(file, stamp: stamp, hash: hash)
        return remember(verdict, for: ProbeRunner.ScanItem(file: file, stamp: stamp, hash: hash))
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
        case .quarantined(let record, _):
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
    /// than reading the file again).
    func filter(_ files: [URL], inspected: (URL, PluginImageInfo) -> Void) -> (
        ok: [URL], quarantined: [QuarantineRecord]
    ) {
        // Only quarantines matter here: a passed or unprobed file is loaded (and the loader judges the latter).
        var quarantines = [QuarantineRecord?](repeating: nil, count: files.count)
        var unknown: [(index: Int, item: ProbeRunner.ScanItem)] = []
        for (index, file) in files.enumerated() {
            guard let stamp = FileStamp.of(file) else { continue }
            switch cache.status(file, stamp: stamp, hash: { ContentDigest.of(file: file) }) {
            case .passed?: continue
            case .quarantined(let record)?:
                quarantines[index] = record
                continue
            case nil: break
            }
            // One read: the inspection hashes what it checked. Not an image: the loader says why.
            guard let image = try? ELFInspector.inspect(file) else { continue }
            inspected(file, image)
            let hash = image.contentHash
            unknown.append((index, ProbeRunner.ScanItem(file: file, stamp: stamp, hash: hash)))
        }
        func note(_ verdict: Verdict, at index: Int) {
            if case .quarantined(let record) = verdict { quarantines[index] = record }
        }
        if unknown.count == 1, let only = unknown.first {
            // One file: a probe child (forked from the warm server when there is one) rather than a scanner.
            let item = only.item
            note(remember(runner.probe(item.file, stamp: item.stamp, hash: item.hash), for: item), at: only.index)
        } else if !unknown.isEmpty {
            // A scanner per core for a big folder (each costs a process start, so not for a handful of files).
            let scanners = min(max(1, parallelism), (unknown.count + 31) / 32)
            let chunk = (unknown.count + scanners - 1) / scanners
            var scanned = [[ProbeRunner.Verdict]](repeating: [], count: scanners)
            let lock = Lock()
            DispatchQueue.concurrentPerform(iterations: scanners) { part in
                let items = unknown[min(unknown.count, part * chunk)..<min(unknown.count, (part + 1) * chunk)]
                let result = runner.scan(items.map(\.item))
                lock.withLock { scanned[part] = result }
            }
            for ((index, item), verdict) in zip(unknown, scanned.joined()) {
                note(remember(verdict, for: item), at: index)
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
