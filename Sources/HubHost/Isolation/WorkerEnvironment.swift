import FoundationEssentials

/// What a supervisor tells a worker through its environment (besides `BlackBox.environmentKey`).
public enum WorkerEnvironment {
    /// How many workers ran before this one in the same command (0 for the first).
    public static let restartKey = "HUBHOST_WORKER_RESTART"
    /// The file versions quarantined so far in this command, as a JSON array of `QuarantineRecord`.
    public static let quarantineKey = "HUBHOST_WORKER_QUARANTINE"
    /// `events`: the script line after which this worker takes over (the one that faulted is skipped).
    public static let resumeKey = "HUBHOST_WORKER_RESUME_AFTER"
    /// "1": check after every plugin call that the worker's stderr is still its own, to find the call that closes
    /// descriptors it did not open (a worker run again after one lost its stderr without a call to blame).
    public static let watchDescriptorsKey = "HUBHOST_WORKER_WATCH_DESCRIPTORS"
    /// The supervisor's process id: the worker ends with it (it must never outlive it and write the user's output
    /// after the command was stopped).
    public static let parentKey = "HUBHOST_WORKER_PARENT"
    /// Why a dev worker was started again when it was not a fault (said in its first frame).
    public static let restartCauseKey = "HUBHOST_WORKER_RESTART_CAUSE"
    /// The status a dev worker ends with to be replaced by a fresh one (module files changed: a fresh process
    /// loads the plugins and binds the files again). EX_TEMPFAIL.
    public static let replaceMeStatus: Int32 = 75

    /// Why this worker was started again, when it was not a fault.
    public static var restartCause: String? { HostEnvironment.variable(restartCauseKey) }

    /// True in a worker started again after a fault.
    public static var isRestart: Bool { (Int(HostEnvironment.variable(restartKey) ?? "") ?? 0) > 0 }

    public static var resumeAfterStep: Int { Int(HostEnvironment.variable(resumeKey) ?? "") ?? 0 }

    public static var quarantined: [QuarantineRecord] {
        guard let text = HostEnvironment.variable(quarantineKey) else { return [] }
        return (try? JSONDecoder().decode([QuarantineRecord].self, from: Data(text.utf8))) ?? []
    }

    /// The environment entries for a worker that follows `restarts` others, with `quarantined` versions.
    public static func entries(restarts: Int, quarantined: [QuarantineRecord]) -> [String: String] {
        var entries = [
            restartKey: "\(restarts)", glibcTunablesKey: heapTunables(HostEnvironment.variable(glibcTunablesKey)),
        ]
        if !quarantined.isEmpty, let json = try? JSONEncoder().encode(quarantined) {
            entries[quarantineKey] = String(decoding: json, as: UTF8.self)
        }
        return entries
    }

    static let glibcTunablesKey = "GLIBC_TUNABLES"

    /// The worker's malloc backs its heap with transparent huge pages where the system offers them on request
    /// (`madvise` mode, Debian's default): a 100k-component render otherwise takes ~17k page faults, a tenth of
    /// its CPU. Peak memory is unchanged (the heap is mostly touched anyway) and glibc before 2.35 ignores the
    /// tunable. The user's own tunables are kept, and so is any hugetlb choice of theirs.
    static func heapTunables(_ inherited: String?) -> String {
        let ours = "glibc.malloc.hugetlb=1"
        guard let inherited, !inherited.isEmpty else { return ours }
        return inherited.contains("glibc.malloc.hugetlb") ? inherited : inherited + ":" + ours
    }
}
