import FoundationEssentials

/// What a supervisor tells a worker through its environment (besides `BlackBox.environmentKey`).
public enum WorkerEnvironment {
    /// How many workers ran before this one in the same command (0 for the first).
    public static let restartKey = "HUBHOST_WORKER_RESTART"
    /// The file versions quarantined so far in this command, as a JSON array of `QuarantineRecord`.
    public static let quarantineKey = "HUBHOST_WORKER_QUARANTINE"
    /// `events`: the script line after which this worker takes over (the one that faulted is skipped).
    public static let resumeKey = "HUBHOST_WORKER_RESUME_AFTER"

    /// True in a worker started again after a fault.
    public static var isRestart: Bool { (Int(HostEnvironment.variable(restartKey) ?? "") ?? 0) > 0 }

    public static var resumeAfterStep: Int { Int(HostEnvironment.variable(resumeKey) ?? "") ?? 0 }

    public static var quarantined: [QuarantineRecord] {
        guard let text = HostEnvironment.variable(quarantineKey) else { return [] }
        return (try? JSONDecoder().decode([QuarantineRecord].self, from: Data(text.utf8))) ?? []
    }

    /// The environment entries for a worker that follows `restarts` others, with `quarantined` versions.
    public static func entries(restarts: Int, quarantined: [QuarantineRecord]) -> [String: String] {
        var entries = [restartKey: "\(restarts)"]
        if !quarantined.isEmpty, let json = try? JSONEncoder().encode(quarantined) {
            entries[quarantineKey] = String(decoding: json, as: UTF8.self)
        }
        return entries
    }
}
