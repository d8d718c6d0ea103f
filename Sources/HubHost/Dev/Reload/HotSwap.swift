import FoundationEssentials
import HubCore

/// Loading a new version of a plugin beside the old one (hot reload).
///
/// The new version's `init` registers the same namespaces (layout managers, action namespaces) the old version
/// holds. Those registrations are held back instead of refused, so `init` succeeds while the old version keeps
/// serving; only after the old version is unloaded are they applied (`commit`). If the new `init` fails, the
/// held registrations are dropped and nothing changed for the old version.
///
/// # Thread safety
/// Main thread only, like `PluginHost`.
public enum HotSwap {
    /// The load in progress: the file being loaded beside `predecessor`, and what its init held back.
    final class Staging {
        let file: URL
        let predecessor: PluginRecord
        var held: [(what: String, apply: () throws -> Void)] = []
        init(file: URL, predecessor: PluginRecord) {
            self.file = file
            self.predecessor = predecessor
        }
    }

    /// Called by the host table when `record` registers `key` and `owner` holds it already: when that owner is
    /// the predecessor of the version being loaded beside it, the registration is held (returns true, and the
    /// plugin is told it succeeded). Otherwise returns false and the normal refusal happens.
    static func hold(
        _ record: PluginRecord, _ what: String, takenBy owner: Owner?,
        apply: @escaping () throws -> Void
    ) -> Bool {
        guard let staging = record.host?.staging, let owner, staging.file == record.file,
            record !== staging.predecessor,
            owner == staging.predecessor.owner
        else { return false }
        staging.held.append((what, apply))
        return true
    }

    /// Whether `record`'s load beside its predecessor already holds `what` (a second registration of one key in
    /// one init, refused as it would be on a fresh load).
    static func holds(_ record: PluginRecord, _ what: String) -> Bool {
        guard let staging = record.host?.staging, staging.file == record.file else { return false }
        return staging.held.contains { $0.what == what }
    }

    /// A new version loaded beside the old one, not yet swapped in.
    public struct Successor {
        public let record: PluginRecord
        public let predecessor: PluginRecord
        /// Registrations held until the predecessor is gone.
        public let held: [String]
        let apply: [(String, () throws -> Void)]
    }

    /// Loads `file` (the new build of `predecessor`'s file, or another file replacing it) beside `predecessor`.
    /// When the record is not loaded (validation or init failed) nothing changed for the predecessor.
    public static func loadBeside(_ predecessor: PluginRecord, file: URL, in host: PluginHost) -> Successor {
        let stage = Staging(file: file, predecessor: predecessor)
        host.staging = stage
        defer { host.staging = nil }
        let record = host.load(file: file)
        return Successor(
            record: record, predecessor: predecessor, held: stage.held.map(\.what),
            apply: record.isLoaded ? stage.held.map { ($0.what, $0.apply) } : [])
    }

    /// Unloads the predecessor, applies the held registrations and binds the new version's module-file bindings,
    /// in one step (nothing runs in between that could see the key unbound). Returns the unload report and what
    /// failed to apply or bind (each names its reason).
    public static func commit(_ successor: Successor, in host: PluginHost) -> (unload: UnloadReport, failed: [String]) {
        // Observers hear of the swap once it is whole: the old version gone, the new one's services and bindings in.
        host.services.registry.holdingNotices { apply(successor, in: host) }
    }

    private static func apply(_ successor: Successor, in host: PluginHost) -> (unload: UnloadReport, failed: [String]) {
        let report = host.unload(successor.predecessor)
        var failed: [String] = []
        for (what, apply) in successor.apply {
            do { try apply() } catch {
                failed.append("\(what): \(error)")
                successor.record.warnings.append("\(error)")
            }
        }
        // The old version's bindings were revoked with it; the new one's replace them.
        for problem in host.services.pluginDidLoad(successor.record) {
            failed.append(problem.description)
            successor.record.warnings.append(problem.description)
        }
        return (report, failed)
    }
}
