import FoundationEssentials
import HubCore
import Logging

/// Reload coordination for `hubhost dev`: which plugin version serves each file, and how a new build replaces it.
///
/// A changed file is checked for trust, probed in a child process (a crash, hang or failure quarantines that
/// version and the old one keeps serving), loaded beside the old version with its registrations held, and swapped
/// in only when its init succeeded. The session (`DevLoop`) owns the view, the engine and the UI states; it wraps
/// each swap so states survive it.
///
/// # Thread safety
/// On the dev loop's queue only, like the host it drives.
final class PluginReloader {
    let host: PluginHost
    let gate: ProbeGate?
    private(set) var quarantines: [String: QuarantineRecord] = [:]
    private(set) var loaded: [String: PluginRecord] = [:]
    /// Files whose last build was refused for its permissions or owner: the same bytes may load once they are fixed.
    private(set) var refusedByTrust: Set<String> = []
    /// What was wrong with the module files when they were bound (a file that is not JSON, a binding to a
    /// missing symbol…): every other command prints it, and `dev` shows it with the view's warnings.
    var moduleFileProblems: [ModuleFile.Failure] { host.services.moduleFileProblems }
    /// Swift images unloaded but still mapped (they can never be unmapped).
    private(set) var retired: [PluginRecord] = []

    init(host: PluginHost, gate: ProbeGate?) {
        self.host = host
        self.gate = gate
    }

    /// Loads every plugin of `folders` through the probe gate; returns what to say about it.
    func loadAll(in folders: [URL]) -> String {
        gate?.install(on: host)
        host.services.registry.holdingNotices {
            host.loadPlugins(in: folders)
            host.services.loadModuleFiles(in: folders)
        }
        for record in host.plugins {
            if record.isLoaded { loaded[record.file.path] = record }
            if case .quarantined = record.state,
                let q = host.quarantinedVersions.last(where: { $0.file == record.file.path })
                    ?? gate?.cache.quarantined.first(where: { $0.file == record.file.path })
            {
                quarantines[record.file.path] = q
            }
        }
        return summary(namingServing: false)
    }

    /// "2 plugin(s) loaded, 1 quarantined"; naming what serves, by file and version, the first eight ("2 plugin(s)
    /// loaded (libHubDemoC.so 1.0.0, libloop.so 1.802), 1 quarantined"): after a restart, the terminal's answer to
    /// "which build is this?".
    func summary(namingServing: Bool) -> String {
        var loadedText = "\(loaded.count) plugin(s) loaded"
        if namingServing && !loaded.isEmpty {
            let serving = loaded.values.sorted { $0.file.lastPathComponent < $1.file.lastPathComponent }
            let named = serving.prefix(8).map { "\($0.file.lastPathComponent) \($0.version ?? "?")" }
            loadedText +=
                " (" + named.joined(separator: ", ") + (serving.count > 8 ? ", … \(serving.count - 8) more" : "") + ")"
        }
        return loadedText + ", \(quarantines.count) quarantined"
    }

    /// Old names of served files renamed: their deletion, seen later, is the rename's, not an unload.
    private var renamedTo: [String: String] = [:]

    /// A new or changed plugin file: trust, probe, load beside the old version, swap when its init succeeded.
    /// `aroundSwap` runs the unload-and-register step (the session keeps UI states across it).
    ///
    /// `verdict` is the probe's, when the caller ran it already (off the loop's queue, so that taps and view
    /// edits are served while a probe runs); nil runs it here.
    func pluginChanged(
        _ change: FileChange, verdict: ProbeGate.Verdict? = nil, aroundSwap: (() -> Void) -> Void
    ) -> DevLoop.Reload {
        let path = change.url.path
        var reload = DevLoop.Reload(
            file: change.url.lastPathComponent, result: .loaded,
            lastEventAt: change.lastEventAt, settledAt: change.settledAt)
        let old = loaded[path]
        reload.previousVersion = old?.version

        // 0. Trust: a build others could have written is refused before any of it runs, even in a child.
        if let why = host.trust.refusal(of: change.url) {
            refusedByTrust.insert(path)
            reload.result = .rejected
            reload.detail = why + (old != nil ? "; \(old!.version ?? "the old version") keeps serving" : "")
            return reload
        }

        refusedByTrust.remove(path)

        // The build that is serving, put back (after a bad one was quarantined): nothing to load.
        if let old, old.isLoaded, let hash = change.hash, old.contentHash == hash {
            quarantines[path] = nil
            reload.result = .unchanged
            reload.version = old.version
            reload.detail = "the build that is serving (\(hash.prefix(12))); it keeps serving"
            return reload
        }

        // 1. Probe the new build in a child process.
        if let gate, case .quarantined(let record) = verdict ?? gate.check(change.url) {
            gate.cache.save()
            if !record.loaderRejectsItself {
                quarantines[path] = record
                reload.result = .quarantined
                reload.detail =
                    record.reason + (old != nil ? "; \(old!.version ?? "the old version") keeps serving" : "")
                return reload
            }
        }
        gate?.cache.save()
        quarantines[path] = nil

        // A served file renamed (`mv libx.so liby.so`): the new name is seen at once, the old one's deletion only
        // after the quiet period, and the same image cannot load twice. The old name's plugin goes first.
        var renamedFrom: String?
        if old == nil, let hash = change.hash,
            let (oldPath, record) = loaded.first(where: { other, record in
                other != path && record.isLoaded && record.contentHash == hash
                    && !FileManager.default.fileExists(atPath: other)
            })
        {
            aroundSwap { _ = host.unload(record) }
            if record.isSwiftImage { retired.append(record) }
            loaded[oldPath] = nil
            renamedFrom = PathText.fileName(oldPath)
            renamedTo[oldPath] = change.url.lastPathComponent
        }

        // 2. Load beside the old version; 3. swap only when its init succeeded.
        guard let old, old.isLoaded else {
            // Its module-file bindings (if a module file names it) are in before observers hear of its services.
            // Around a swap as well: a new provider's consumers are configured again (`DevLoop.keepingUIStates`).
            var loadedRecord: PluginRecord?
            aroundSwap {
                loadedRecord = host.services.registry.holdingNotices { () -> PluginRecord in
                    let record = host.load(file: change.url)
                    if record.isLoaded { host.services.pluginDidLoad(record) }
                    return record
                }
            }
            guard let record = loadedRecord else { return reload }
            reload.version = record.version
            if record.isLoaded {
                loaded[path] = record
                host.pruneOlderCopies(of: record)
                if let renamedFrom { reload.detail = "renamed from \(renamedFrom)" }
            } else if Self.changedSince(change) {
                reload.result = .waiting
                reload.detail = Self.stillBeingWritten
            } else {
                reload.result = .rejected
                reload.detail = record.reason
            }
            return reload
        }
        let successor = HotSwap.loadBeside(old, file: change.url, in: host)
        reload.version = successor.record.version
        // A rebuild that kept its version number: the builds tell the two apart ("1.0.0 #1a2b3c4d → 1.0.0 #…").
        if reload.version == reload.previousVersion, let new = successor.record.contentHash, let was = old.contentHash {
            reload.previousVersion = reload.previousVersion.map { "\($0) #\(was.prefix(8))" }
            reload.version = reload.version.map { "\($0) #\(new.prefix(8))" }
        }
        guard successor.record.isLoaded else {
            // The file was written back to the build that serves while it settled (a build that deletes and
            // writes again): refused as its own twin, it is the serving build, unchanged.
            if let hash = successor.record.contentHash, hash == old.contentHash {
                reload.result = .unchanged
                reload.version = old.version
                reload.previousVersion = nil
                reload.detail = "the build that is serving (\(hash.prefix(12))); it keeps serving"
                return reload
            }
            // Not this build's fault when the file is not this build any more: the next write is on its way.
            if Self.changedSince(change) {
                reload.result = .waiting
                reload.detail = Self.stillBeingWritten + "; \(old.version ?? "the old version") keeps serving"
                return reload
            }
            reload.result = .rejected
            reload.detail =
                (successor.record.reason ?? "not loaded") + "; \(old.version ?? "the old version") keeps serving"
            return reload
        }
        var outcome: (unload: UnloadReport, failed: [String])?
        aroundSwap { outcome = HotSwap.commit(successor, in: host) }
        guard let (unload, failed) = outcome else { return reload }
        loaded[path] = successor.record
        host.pruneOlderCopies(of: successor.record)
        reload.result = .swapped
        var notes = [unload.description]
        if old.isSwiftImage { retired.append(old) }
        notes += failed.map { "not re-registered: \($0)" }
        reload.detail = notes.joined(separator: "; ")
        return reload
    }

    /// Files refused because what they register was taken (a namespace, a service): tried again after a plugin
    /// changed or went, as the one that held it may have let go. Only the ones that load now are reported.
    func retryRefusedForConflicts(aroundSwap: (() -> Void) -> Void) -> [DevLoop.Reload] {
        var latest: [String: PluginRecord] = [:]
        for record in host.plugins { latest[record.file.path] = record }
        var reloads: [DevLoop.Reload] = []
        // A new build refused while an older one serves is retried too (a binding moved from one plugin to
        // another, the taker's build landing first), and so is one refused for a key bound elsewhere.
        for (path, record) in latest.sorted(by: { $0.key < $1.key }) where !record.isLoaded && loaded[path] !== record {
            guard let reason = record.reason,
                reason.contains("is already registered by") || reason.contains("is already provided by")
                    || reason.contains("already bound by"),
                quarantines[path] == nil, !refusedByTrust.contains(path)
            else { continue }
            let url = URL(fileURLWithPath: path)
            guard let hash = ContentDigest.of(file: url) else { continue }
            let now = Monotonic.now()
            var reload = pluginChanged(
                FileChange(
                    url: url, kind: .changed, hash: hash, stamp: FileStamp.of(url), lastEventAt: now, settledAt: now),
                aroundSwap: aroundSwap)
            guard reload.result == .loaded || reload.result == .swapped else { continue }
            reload.detail = "refused before because what it registers was taken; it is free now"
            reloads.append(reload)
        }
        return reloads
    }

    /// True when the file's bytes are no longer the ones that settled (a build writing it again, truncated first).
    static func changedSince(_ change: FileChange) -> Bool {
        guard let hash = change.hash else { return false }
        return ContentDigest.of(file: change.url) != hash
    }

    static let stillBeingWritten =
        "changed again while it was being loaded (still being written?); waiting for the write"

    /// A deleted plugin file: its plugin unloads and its components fall back.
    func pluginDeleted(_ change: FileChange, aroundSwap: (() -> Void) -> Void) -> DevLoop.Reload {
        let path = change.url.path
        quarantines[path] = nil
        gate?.cache.remove(change.url)
        var reload = DevLoop.Reload(
            file: change.url.lastPathComponent, result: .unloaded,
            lastEventAt: change.lastEventAt, settledAt: change.settledAt)
        guard let record = loaded.removeValue(forKey: path) else {
            // The old name of a file renamed (its deletion is seen after the new name's arrival).
            if let newName = renamedTo.removeValue(forKey: path) {
                reload.result = .unchanged
                reload.detail = "renamed to \(newName), which serves"
            } else {
                reload.detail = "was not loaded"
            }
            return reload
        }
        reload.version = record.version
        var report: UnloadReport?
        aroundSwap { report = host.unload(record) }
        if record.isSwiftImage { retired.append(record) }
        guard let report else { return reload }
        reload.detail = report.description + "; its components fall back"
        return reload
    }

    /// Bytes of `records`' private copies still mapped in this process (from /proc/self/maps).
    static func mappedBytes(of records: [PluginRecord]) -> Int {
        let paths = Set(records.compactMap { $0.privateCopy?.path })
        guard !paths.isEmpty else { return 0 }
        var total = 0
        for line in String(decoding: MappedImages.readMaps(), as: UTF8.self).split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/"), paths.contains(String(line[slash...])) else { continue }
            let range = line.prefix { $0 != " " }.split(separator: "-")
            if range.count == 2, let start = Int(range[0], radix: 16), let end = Int(range[1], radix: 16) {
                total += end - start
            }
        }
        return total
    }

    /// Bytes retired Swift images keep mapped.
    var retiredImageBytes: Int { Self.mappedBytes(of: retired) }
}
