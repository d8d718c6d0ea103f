import CHubSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Lets a command that runs plugin code in its own process (`list-namespaces`) survive a plugin that crashes or
/// hangs there: the process starts itself again, same arguments, and the new run, seeing why, does the work in a
/// worker, which names the plugin and quarantines it. The user gets the listing from the one command they ran.
///
/// The arguments and environment are turned into C arrays before any plugin code runs, so the signal handler and the
/// watchdog only patch the cause and call `execve`.
public final class InProcessRestart {
    /// The environment entry the new run finds: a signal number, "hang" or "exit".
    public static let causeKey = "HUBHOST_IN_PROCESS_RESTART"

    /// Why this process was started again ("SIGSEGV", "hang", "exit"), or nil. Read once,
    /// and the entry removed, so workers and probes do not inherit it.
    static let cause: String? = {
        guard let value = getenv(causeKey).map({ String(cString: $0) }) else { return nil }
        unsetenv(causeKey)
        if value == "hang" || value == "exit" { return value }
        return Int32(value).map(ProbeRunner.signalName) ?? "a signal"
    }()

    /// What plugin code did to end the run that started this one: "crashed with SIGSEGV", "did not return within
    /// 2 s (--call-timeout)", "called exit()"; nil when this run was not started again.
    public static func causeText(timeout: Double) -> String? {
        switch cause {
        case nil: return nil
        case "hang": return "did not return within \(timeout.compactSeconds) (--call-timeout)"
        case "exit": return "called exit()"
        case let signal?: return "crashed with \(signal)"
        }
    }

    private var armed = false

    /// Arms the restart until `disarm`: a fatal signal, exit() called by plugin code, or a plugin call that does
    /// not return within `timeout` seconds, starts this executable again with `arguments` (argv[0] first).
    public init(arguments: [String], timeout: Double) {
        // The strings and arrays are never freed: the handler or the watchdog may be reading them in `execve` when
        // `disarm` runs, and they are made once per process.
        let argv = Self.cArray(arguments.map { strdup($0) })
        var entries: [UnsafeMutablePointer<CChar>?] = []
        var index = 0
        while let entry = environ[index] {
            if !String(cString: entry).hasPrefix(Self.causeKey + "=") { entries.append(entry) }
            index += 1
        }
        // Room for the longest cause ("hang" and its terminator), which the handler writes over.
        let causeEntry = strdup(Self.causeKey + "=hang")!
        let envp = Self.cArray(entries + [causeEntry])
        let milliseconds = UInt32(clamping: Int((timeout * 1000).rounded(.up)))
        armed = true
        _ = csystem_restart_on_fault(
            strdup("/proc/self/exe"), argv, envp, causeEntry + Self.causeKey.utf8.count + 1, CallRecorder.callWord,
            milliseconds)
    }

    /// A NULL-terminated C array of `items`, allocated for the life of the process.
    private static func cArray(_ items: [UnsafeMutablePointer<CChar>?]) -> UnsafeMutablePointer<
        UnsafeMutablePointer<CChar>?
    > {
        let array = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: items.count + 1)
        array.initialize(from: items, count: items.count)
        array[items.count] = nil
        return array
    }

    /// Disarms the restart: the signal actions from before are back and the watchdog ends.
    public func disarm() {
        guard armed else { return }
        armed = false
        csystem_restart_on_fault_end()
    }

    deinit { disarm() }
}
