import CHubSystem
import FoundationEssentials
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// Lets a command that loads plugins in its own process (`list-namespaces`: a worker would cost more than the
/// listing) find out that its last run ended inside plugin code. The probe has run every new build's `init` in a
/// child already, but an `init` that reads something else (a config file) can crash or hang only now. A crash, an
/// `exit()` or a hang makes the run start itself again (`InProcessRestart`); a run ended any other way (killed,
/// `_exit`) leaves its marker, and the next run sees it and runs in a worker instead, which names the plugin and
/// quarantines it, as every other command does.
struct InProcessSentinel {
    /// `<probe cache>/<command>-<pid>.running`, one per process so concurrent runs do not clear each other's.
    let folder: URL
    let command: String
    private var marker: URL { folder.appendingPathComponent("\(command)-\(getpid()).running") }
    /// This process's marker: left by the run it replaced when it was started again (`InProcessRestart`).
    var ownMarker: URL { marker }

    /// False when the cache folder is another user's or others may write it (the run uses a temporary one): no
    /// marker is left there.
    let usable: Bool

    init(cacheDirectory: String?, command: String) {
        let images = cacheDirectory.map { URL(fileURLWithPath: $0) }
        folder = ProbeGate.defaultCacheDirectory(imagesDirectory: images)
        self.command = command
        let cache = images ?? CacheFolder.defaultDirectory
        usable = !FileManager.default.fileExists(atPath: cache.path) || CacheFolder.notTheUsers(cache) == nil
    }

    /// The markers of runs that are no longer running: each ended without finishing.
    var unfinishedRuns: [URL] {
        guard usable else { return [] }
        let prefix = "\(command)-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.compactMap { name -> URL? in
            guard name.hasPrefix(prefix), name.hasSuffix(".running"),
                let pid = pid_t(name.dropFirst(prefix.count).dropLast(".running".count))
            else { return nil }
            // A process that still runs (another listing, now) has not ended.
            if pid == getpid() || kill(pid, 0) == 0 || errno == EPERM { return nil }
            // Gone now, but it may have finished between the listing of the folder and that check (a run removes
            // its marker before it exits): only a marker still there is an unfinished run's.
            let marker = folder.appendingPathComponent(name)
            return access(marker.path, F_OK) == 0 ? marker : nil
        }
    }

    /// Marks this run as started (no marker when the cache folder cannot take one: the run is then unguarded).
    func begin() {
        // Plugin code signalling its group or parent from here would reach the user's shell (see csystem.h).
        csystem_plugin_code_in_this_process(1)
        guard usable else { return }
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
    }

    /// Marks this run as finished.
    func end() {
        csystem_plugin_code_in_this_process(0)
        unlink(marker.path)
    }

    /// Forgets the unfinished runs (a worker run found nothing more to quarantine).
    func clear(_ runs: [URL]) { for run in runs { unlink(run.path) } }
}
