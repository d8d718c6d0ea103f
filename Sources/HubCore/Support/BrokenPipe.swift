#if canImport(Glibc)
    import Glibc
#endif

/// What a write to a pipe whose reader went away (`hubhost … | head`) does on a thread that keeps SIGPIPE off
/// (the output thread): the process ends by SIGPIPE, as it would have had the write been on the main thread, so
/// the shell sees what it sees of any tool. Before that, `willEnd` tells whoever must know that the signal is the
/// reader's doing and not the code the main thread happens to be running (a worker notes it in its black box, or
/// its supervisor would blame the plugin call in progress).
public enum BrokenPipe {
    /// Called once, on the thread that found the pipe broken, just before the process ends.
    nonisolated(unsafe) public static var willEnd: (() -> Void)?

    /// Keeps SIGPIPE off the calling thread: its writes to a broken pipe fail with EPIPE instead.
    public static func blockOnThisThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// After a write failed with EPIPE: ends the process by SIGPIPE when SIGPIPE's action is the default one (a
    /// process that ignores or handles SIGPIPE chose to see the error, and gets it: returns).
    public static func endProcessIfDefault() {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil else { return }
        willEnd?()
        kill(getpid(), SIGPIPE)  // to the process: a thread that does not block it takes it, and the process ends
        // The end is on its way; this thread writes nothing more (after a second, it gives up and reports EPIPE).
        for _ in 0..<1000 { usleep(1000) }
    }
}
