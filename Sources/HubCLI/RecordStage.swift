import CHubSystem
import FoundationEssentials
import HubCore
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// What a worker of `snapshot record` recorded, kept aside until the worker has ended cleanly: its supervisor then
/// puts the goldens in place (and removes the gallery goldens no story has). A plugin can still crash after the
/// goldens were drawn (in an exit handler, as the worker ends): its supervisor then runs the command again without
/// it, which records nothing, and the goldens staged by the first worker are dropped with it. Without this, they
/// were in place and the run said "nothing recorded".
///
/// The stage is `OUT/.hubhost-record-PID-RANDOM` (PID: the supervisor's; the worker is told the folder in
/// `environmentKey`), holding the goldens under their own names, `manifest` (written last: `write\tNAME`,
/// `remove\tNAME\tWHY` and `summary\tLINE` lines), a `.gitignore` of `*` (a stage an interrupted run leaves is
/// never committed with the goldens) and `.lock`, which its supervisor holds locked (`flock`) while it lives.
///
/// Runs share golden folders (shards, CI jobs in containers of their own, where process ids mean nothing to one
/// another): a stage is another run's to clean up only when its lock can be taken. Goldens are put in place by
/// renames, with the stop signals held back, after a `committing` file is made: a run killed in the middle
/// (`kill -9`) leaves that file, and the next `record` or `verify` finishes putting its goldens in place, so the
/// folder never stays half old, half new.
struct RecordStage {
    let out: URL
    let folder: URL
    private var lines: [String] = []

    static let prefix = ".hubhost-record-"
    static let environmentKey = "HUBHOST_RECORD_STAGE"
    /// A stage is made under this name, then renamed to its own: another run never sees one not yet locked.
    private static let makingPrefix = ".hubhost-making-stage-"
    /// The supervisor's lock of its stage, held until the process ends.
    nonisolated(unsafe) private static var heldLock: Int32 = -1

    /// The worker's stage, named by its supervisor.
    init?(workerOf out: URL) {
        guard let path = HostEnvironment.variable(Self.environmentKey), !path.isEmpty else { return nil }
        self.out = out
        folder = URL(fileURLWithPath: path)
    }

    private init(out: URL, folder: URL) {
        self.out = out
        self.folder = folder
    }

    /// Makes the supervisor's stage in `out`, locked and ignored by git, and tells workers about it.
    static func make(in out: URL) throws -> RecordStage {
        try ProcessStart.makeFolders(out.path)
        let token = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let making = out.appendingPathComponent(makingPrefix + token)
        let folder = out.appendingPathComponent(prefix + token)
        try FileManager.default.createDirectory(at: making, withIntermediateDirectories: false)
        try Data("*\n".utf8).write(to: making.appendingPathComponent(".gitignore"))
        let lock = open(making.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0, rename(making.path, folder.path) == 0 else {
            let why = String(cString: strerror(errno))
            if lock >= 0 { close(lock) }
            try? FileManager.default.removeItem(at: making)
            throw RecordStageError(description: "cannot make a stage in \(out.path): \(why)")
        }
        if heldLock >= 0 { close(heldLock) }
        heldLock = lock
        setenv(environmentKey, folder.path, 1)
        return RecordStage(out: out, folder: folder)
    }

    // MARK: The worker's side

    /// Stages `png` as golden `name`.
    mutating func write(_ png: Data, name: String) throws {
        try Snapshot.write(png, to: folder.appendingPathComponent(name))
        lines.append("write\t\(name)")
    }

    /// Notes that golden `name` is to be removed, and why.
    mutating func remove(_ name: String, because why: String) {
        lines.append("remove\t\(name)\t\(why.replacing("\n", with: " "))")
    }

    /// Writes the manifest, with the line the supervisor prints once the goldens are in place.
    mutating func finish(summary: String) throws {
        lines.append("summary\t\(summary)")
        try Snapshot.write(Data(lines.map { $0 + "\n" }.joined().utf8), to: folder.appendingPathComponent("manifest"))
    }

    // MARK: The supervisor's side

    /// Puts the staged goldens in place and removes those noted, saying so, when the worker finished its manifest;
    /// then removes the stage. Returns false when a golden could not be put in place.
    func commit() -> Bool {
        defer { discard() }
        // Held back for the renames (a few milliseconds for hundreds): a Ctrl-C then takes effect after them.
        csystem_hold_stop_signals()
        defer { csystem_release_stop_signals() }
        return Self.putInPlace(stage: folder, out: out, resuming: false)
    }

    /// Removes the stage, recorded or not.
    func discard() { try? FileManager.default.removeItem(at: folder) }

    /// What `commit` does, also for a stage whose run was killed while it was putting goldens in place
    /// (`resuming`: a golden already moved is not staged any more, and is not an error).
    private static func putInPlace(stage: URL, out: URL, resuming: Bool) -> Bool {
        guard let text = try? String(contentsOf: stage.appendingPathComponent("manifest"), encoding: .utf8) else {
            return true  // the worker stopped before it recorded anything (it said why)
        }
        let committing = stage.appendingPathComponent("committing")
        if !resuming { FileManager.default.createFile(atPath: committing.path, contents: nil) }
        var ok = true
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[1].hasPrefix("/"), !parts[1].split(separator: "/").contains("..") else {
                continue
            }
            let target = out.appendingPathComponent(parts[1])
            switch parts[0] {
            case "write":
                let staged = stage.appendingPathComponent(parts[1])
                if resuming && !FileManager.default.fileExists(atPath: staged.path) { continue }
                do {
                    try ProcessStart.makeFolders(target.deletingLastPathComponent().path)
                    guard rename(staged.path, target.path) == 0 else {
                        throw RecordStageError(description: String(cString: strerror(errno)))
                    }
                } catch {
                    Diagnostics.print("hubhost: \(parts[1]): \(ErrorText.describe(error))")
                    ok = false
                }
            case "remove":
                if resuming && !FileManager.default.fileExists(atPath: target.path) { continue }
                do {
                    try FileManager.default.removeItem(at: target)
                    if !resuming {
                        Diagnostics.print("hubhost: removed \(parts[1]): \(parts.count > 2 ? parts[2] : "")")
                    }
                } catch {
                    Diagnostics.print("hubhost: cannot remove \(parts[1]): \(ErrorText.describe(error))")
                }
            case "summary": if !resuming { StandardOutput.print(parts[1...].joined(separator: "\t")) }
            default: continue
            }
        }
        return ok
    }

    /// Cleans up after runs that are gone, in `out`: a stage whose lock can be taken (its supervisor has ended) is
    /// removed, after its goldens are put in place when its run was killed while doing so. A stage without a lock
    /// (made by an older hubhost, or half made) goes once it is a day old.
    static func removeStale(in out: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: out.path) else { return }
        let ours = HostEnvironment.variable(environmentKey)
        for name in names where name.hasPrefix(prefix) || name.hasPrefix(makingPrefix) {
            let stage = out.appendingPathComponent(name)
            if stage.path == ours { continue }
            let lock = open(stage.appendingPathComponent(".lock").path, O_RDWR | O_CLOEXEC)
            guard lock >= 0 else {
                var info = stat()
                if lstat(stage.path, &info) == 0, Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec) > 86_400 {
                    try? FileManager.default.removeItem(at: stage)
                }
                continue
            }
            defer { close(lock) }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }  // its run is alive
            if name.hasPrefix(prefix),
                FileManager.default.fileExists(atPath: stage.appendingPathComponent("committing").path)
            {
                _ = putInPlace(stage: stage, out: out, resuming: true)
                Diagnostics.print(
                    "hubhost: \(out.path): put in place the goldens of a record that was stopped while doing so")
            }
            try? FileManager.default.removeItem(at: stage)
        }
    }
}

struct RecordStageError: Error, CustomStringConvertible {
    var description: String
}
