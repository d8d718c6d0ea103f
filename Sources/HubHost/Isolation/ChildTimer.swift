import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Times how long a child process has been at something (a plugin call, a probe), leaving out the time it could not
/// run: while this process did not run (the whole job stopped with Ctrl-Z, the machine suspended), seen as a gap
/// between two looks far longer than the caller's polling, and while a debugger holds the child (its state in /proc
/// is t). Without this, a job stopped with Ctrl-Z and resumed with `fg` had its call in progress "hang". A child
/// stopped by a signal while this process runs (state T) is timed as running: plugin code that stops its own
/// process (`raise(SIGSTOP)`) is a hang, not a pause for ever.
struct ChildTimer {
    /// The child, or nil when only this process's gaps are left out.
    let pid: pid_t?
    /// A gap between two looks longer than this is time this process did not run (callers look at least every
    /// second).
    static let longestGap = 1.5
    private var lastLook: Double
    /// Time counted since /proc was last read, added once the child is seen running then.
    private var unchecked: Double = 0
    private var checked: Double = 0
    /// Seconds the child could run since `restart`.
    var elapsed: Double { checked + unchecked }

    init(pid: pid_t?, now: Double = Monotonic.now()) {
        self.pid = pid
        lastLook = now
    }

    /// Starts timing again from `now`.
    mutating func restart(now: Double = Monotonic.now()) {
        lastLook = now
        checked = 0
        unchecked = 0
    }

    /// Adds the time since the last look, unless the child or this process could not run meanwhile; returns the
    /// time counted since `restart`. The child's state is read at most every 100 ms (callers look every
    /// millisecond while a probe runs): time since a look that finds it held by a debugger is not counted.
    @discardableResult
    mutating func look(now: Double = Monotonic.now()) -> Double {
        let gap = now - lastLook
        lastLook = now
        guard gap >= 0, gap < Self.longestGap else { return elapsed }
        unchecked += gap
        if unchecked >= 0.1 {
            if !(pid.map(Self.isHeldByDebugger) ?? false) { checked += unchecked }
            unchecked = 0
        }
        return elapsed
    }

    /// Whether `pid` is stopped by a tracer (a debugger at a breakpoint): state "t" in /proc/PID/stat.
    static func isHeldByDebugger(_ pid: pid_t) -> Bool { LeftoverProcesses.status(of: pid)?.state == "t" }
}
