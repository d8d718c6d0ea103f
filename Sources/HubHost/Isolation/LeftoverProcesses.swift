import CHubSystem
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Processes plugin code forked in a worker and left running when the worker ended. They hold the worker's
/// descriptors (the user's stdout: `hubhost render | wc` waited 20 s for one) and outlive the command. A supervisor
/// inherits them (`PR_SET_CHILD_SUBREAPER`) and ends them as its worker ends.
public enum LeftoverProcesses {
    /// Becomes the parent of what workers leave behind; once per process, before the first worker starts.
    static let adopting: Bool = csystem_become_subreaper()

    /// For a command that loads plugins in its own process (a listing): from now on, what their code starts and
    /// leaves behind comes to this process, to be ended by `endInThisProcess`.
    public static func adoptInThisProcess() { _ = adopting }

    /// Ends what plugin code started in this process and left running (it held the user's standard output:
    /// `list-namespaces | cat` waited for it); the line that says so, or nil.
    public static func endInThisProcess() -> String? {
        let ended = end()
        return ended.isEmpty
            ? nil
            : "plugin code left \(ended.count) process(es) running: \(ended.joined(separator: ", ")); hubhost ended them"
    }

    /// Ends this process's children (called once its worker is reaped: any other child was left by that worker).
    /// Returns one description per process plugin code left ("pid 123 (sleep)"); hubhost's own probe children,
    /// which may still be on their way out as their worker ends, are ended without a word.
    static func end() -> [String] {
        guard adopting else { return [] }
        let me = getpid()
        // hubhost's own probe server, or a process already on its way out (its command line is gone): the probe
        // server ends as its worker does, and may be exiting right now. A plugin's fork keeps its copy.
        return endProcesses(where: { parent, _ in parent == me }, unsaid: { pid, _ in isProbeOrExiting(pid) })
    }

    /// A `hubhost probe …` child (a scanner the worker started: its second argument is "probe"), or a process that
    /// is exiting or a zombie (its command line reads empty).
    private static func isProbeOrExiting(_ pid: pid_t) -> Bool {
        guard let bytes = try? readWholeFile("/proc/\(pid)/cmdline"), !bytes.isEmpty else { return true }
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false)
        return arguments.count > 1 && Array(arguments[1]) == Array("probe".utf8)
    }

    /// In a probe child hubhost started (`HUBHOST_PROBE_CHILD`, a process group of its own: `OwnProcessGroup`):
    /// makes it the parent of what its plugin's processes leave behind, as a supervisor is of a worker's. Nothing
    /// in any other process (`hubhost probe` run from a shell shares its job's group with a pipe's other end).
    static func adoptInProbe() {
        if isProbeChild { _ = csystem_become_subreaper() }
    }

    /// In a probe child (see `adoptInProbe`): ends what plugin code started and left running, the processes of its
    /// group and its children (a process that left the group with `setsid`, or an orphan it adopted). They held a
    /// scanner's pipe open after the scanner ended: the folder's listing waited out its budget and blamed the
    /// plugin's "unload", and `validate` passed a plugin that left one behind. Returns one description per process
    /// ("pid 123 (sleep)").
    static func endInProbe() -> [String] {
        let me = getpid()
        guard isProbeChild, getpgrp() == me else { return [] }
        return endProcesses(
            where: { parent, group in group == me || parent == me }, unsaid: { _, state in state == "Z" })
    }

    /// Ends (SIGKILL) every other process `matches` picks by its parent and process group, reaping those that are
    /// this process's children, and describes each ("pid 123 (sleep)") but those `unsaid` picks (asked before the
    /// kill). Nothing is read when this process has no child: orphans come to it (it is a subreaper).
    private static func endProcesses(
        where matches: (_ parent: pid_t, _ group: pid_t) -> Bool, unsaid: (_ pid: pid_t, _ state: Substring) -> Bool
    ) -> [String] {
        let me = getpid()
        guard hasChildren, let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var ended: [(pid: pid_t, command: String)] = []
        for name in names {
            guard let pid = pid_t(name), pid != me, let (parent, state, command, group) = status(of: pid),
                matches(parent, group)
            else { continue }
            let said = !unsaid(pid, state)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            if parent == me { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
            if said { ended.append((pid, command)) }
        }
        return ended.sorted { $0.pid < $1.pid }.map { "pid \($0.pid) (\(TerminalText.escaped($0.command, limit: 40)))" }
    }

    /// Whether this process has a child, living or not: one call, instead of reading every process of the machine
    /// (after each plugin of a scan, and at the end of every listing).
    private static var hasChildren: Bool {
        var info = siginfo_t()
        return !(waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
    }

    private static var isProbeChild: Bool { HostEnvironment.variable(HostEnvironment.probeChild) == "1" }

    /// From /proc/PID/stat: "pid (comm) state ppid pgrp …"; the command may hold spaces and parentheses.
    static func status(of pid: pid_t) -> (parent: pid_t, state: Substring, command: String, group: pid_t)? {
        guard let bytes = try? readWholeFile("/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let command = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        return (parent, fields[0], command, group)
    }
}
