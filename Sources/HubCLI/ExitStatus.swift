import ArgumentParser

/// hubhost's exit statuses: one meaning each, across every command. Each command documents the ones it uses
/// with `ExitStatus.help(…)`, so the help text and the code cannot drift apart.
enum ExitStatus: Int32, CaseIterable {
    /// Done, and nothing to report.
    case ok = 0
    /// Done, but something was reported on stderr (view problems, rejected plugins, failed checks, skipped lines).
    case problems = 1
    /// Not done: an input could not be read or used, or an output could not be written.
    case failed = 2
    /// A name given on the command line names nothing (a layout manager no plugin registered).
    case notFound = 3
    /// Instances were still alive after their owner was unloaded (`list-services --unload`).
    case survivors = 4
    /// Done, but plugin code crashed, hung or exited its worker: the culprit was quarantined and its components
    /// fell back by category (the fault is on stderr, one line naming plugin, call and model).
    case pluginFault = 5
    /// The command line itself was wrong (ArgumentParser's validation errors).
    case usage = 64

    var code: ExitCode { ExitCode(rawValue) }

    /// "Exit codes: 0 …; 1 …; 64 usage error." for a command's help, from what each status means for it.
    static func help(_ meanings: [(ExitStatus, String)]) -> String {
        let listed = meanings.map { "\($0.0.rawValue) \($0.1)" } + ["\(ExitStatus.usage.rawValue) usage error"]
        return "Exit codes: " + listed.joined(separator: "; ") + "."
    }
}

extension ExitCode {
    init(_ status: ExitStatus) { self.init(status.rawValue) }
}
