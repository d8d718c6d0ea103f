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
/// The stage is `OUT/.hubhost-record-PID` (PID: the supervisor's), holding the goldens under their own names and
/// `manifest`, written last: `write\tNAME`, `remove\tNAME\tWHY` and `summary\tLINE` lines.
struct RecordStage {
    let out: URL
    let folder: URL
    private var lines: [String] = []

    static let prefix = ".hubhost-record-"

    /// The stage of the supervisor `supervisor` (a worker passes its parent).
    init(out: URL, supervisor: pid_t) {
        self.out = out
        folder = out.appendingPathComponent(Self.prefix + "\(supervisor)")
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
        guard let text = try? String(contentsOf: folder.appendingPathComponent("manifest"), encoding: .utf8) else {
            return true  // the worker stopped before it recorded anything (it said why)
        }
        var ok = true
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[1].hasPrefix("/"), !parts[1].split(separator: "/").contains("..") else {
                continue
            }
            switch parts[0] {
            case "write":
                do {
                    let data = try Data(contentsOf: folder.appendingPathComponent(parts[1]))
                    try Snapshot.write(data, to: out.appendingPathComponent(parts[1]))
                } catch {
                    Diagnostics.print("hubhost: \(parts[1]): \(ErrorText.describe(error))")
                    ok = false
                }
            case "remove":
                do {
                    try FileManager.default.removeItem(at: out.appendingPathComponent(parts[1]))
                    Diagnostics.print("hubhost: removed \(parts[1]): \(parts.count > 2 ? parts[2] : "")")
                } catch {
                    Diagnostics.print("hubhost: cannot remove \(parts[1]): \(ErrorText.describe(error))")
                }
            case "summary": StandardOutput.print(parts[1...].joined(separator: "\t"))
            default: continue
            }
        }
        return ok
    }

    /// Removes the stage, recorded or not.
    func discard() { try? FileManager.default.removeItem(at: folder) }

    /// Removes the stages of supervisors that are gone (killed while a worker recorded), in `out`.
    static func removeStale(in out: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: out.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: out.appendingPathComponent(name))
            }
        }
    }
}
