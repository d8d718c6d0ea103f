import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a plugin's loading (its constructors and `init`) may change for the whole process, taken before and
/// compared after: the working directory, the umask, the handlers of the signals hubhost depends on, a pending
/// alarm and the file size limit. A change is put back and said, naming the plugin: a SIGSEGV handler that returns
/// made another plugin's crash look like a hang, an `alarm(1)` ended every dev worker a second after it started,
/// and a `chdir` sent the user's output elsewhere.
///
/// Only loading is watched (once per plugin, a few microseconds): checking after every call would cost more than
/// the calls. What a call changes cannot move the user's files (`ProcessStart`).
struct ProcessStateGuard {
    /// The signals whose disposition decides how a plugin fault is seen, or how hubhost ends.
    static let signals: [(number: Int32, name: String)] = [
        (SIGSEGV, "SIGSEGV"), (SIGBUS, "SIGBUS"), (SIGILL, "SIGILL"), (SIGFPE, "SIGFPE"), (SIGABRT, "SIGABRT"),
        (SIGTRAP, "SIGTRAP"), (SIGPIPE, "SIGPIPE"), (SIGALRM, "SIGALRM"), (SIGXFSZ, "SIGXFSZ"),
        (SIGCHLD, "SIGCHLD"), (SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP"),
    ]

    private let directory: [CChar]
    private let mask: mode_t
    private let actions: [sigaction]
    private let fileSize: rlimit

    /// The state now.
    init() {
        directory = Self.workingDirectory()
        mask = ProcessStart.currentMask()
        actions = Self.signals.map { signal in
            var action = sigaction()
            sigaction(signal.number, nil, &action)
            return action
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        fileSize = limit
    }

    /// Puts back what changed since `self` was taken; one sentence per change, for the plugin's warnings, and what
    /// could not be put back (the process is then not the one later plugins and outputs expect).
    func restore() -> (changes: [String], irreparable: String?) {
        var irreparable: String?
        var changes: [String] = []
        let now = Self.workingDirectory()
        if now != directory {
            chdir(directory)
            let now = String(decoding: now.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            changes.append(
                "changed the working directory to \(TerminalText.quoted(now)) while loading; hubhost changed it back")
        }
        let current = umask(mask)
        if current != mask {
            changes.append(
                "changed the umask to \(String(printf: "%03o", UInt32(current))) while loading; hubhost put the user's "
                    + "\(String(printf: "%03o", UInt32(mask))) back")
        }
        for (index, signal) in Self.signals.enumerated() {
            var action = sigaction()
            sigaction(signal.number, nil, &action)
            guard !Self.sameHandler(action, actions[index]) else { continue }
            var before = actions[index]
            sigaction(signal.number, &before, nil)
            changes.append(
                "set its own \(signal.name) handler while loading; hubhost put its own back (the process's signal "
                    + "handlers decide how hubhost sees every plugin's faults and how it ends)")
        }
        let pending = alarm(0)
        if pending > 0 {
            changes.append(
                "set an alarm while loading (SIGALRM would have ended hubhost in \(pending) s); hubhost cancelled it")
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        if limit.rlim_cur != fileSize.rlim_cur {
            var before = fileSize
            let restored = setrlimit(Int32(RLIMIT_FSIZE.rawValue), &before) == 0
            changes.append(
                "lowered the file size limit to \(limit.rlim_cur) bytes while loading"
                    + (restored ? "; hubhost put it back" : " (it cannot be raised again: outputs may be cut)"))
            if !restored {
                irreparable = "lowered the file size limit to \(limit.rlim_cur) bytes, which hubhost cannot raise again"
            }
        }
        return (changes, irreparable)
    }

    /// The working directory as getcwd gives it (no String made: it is compared once per plugin loaded).
    private static func workingDirectory() -> [CChar] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return [0] }
        return Array(buffer.prefix { $0 != 0 }) + [0]  // NUL-terminated, for chdir
    }

    /// Same handler and flags (the mask of blocked signals is not compared: it does not change what a fault does).
    private static func sameHandler(_ a: sigaction, _ b: sigaction) -> Bool {
        var a = a
        var b = b
        let handlersMatch = withUnsafeBytes(of: &a.__sigaction_handler) { x in
            withUnsafeBytes(of: &b.__sigaction_handler) { y in x.elementsEqual(y) }
        }
        // SA_RESTORER is the C library's: it sets it on every sigaction it makes, putting hubhost's handler back
        // included, so a state put back differed from the one taken and the next plugin was blamed for it.
        let restorer: Int32 = 0x0400_0000
        return handlersMatch && (a.sa_flags & ~restorer) == (b.sa_flags & ~restorer)
    }
}
