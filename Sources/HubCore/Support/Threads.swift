import CHubSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Threads without Foundation's Thread (not in FoundationEssentials).
public enum Threads {
    /// Runs `body` on a new detached thread named `name`, for a loop that lives as long as its owner (a watcher, a
    /// pipe reader), which must not hold one of Dispatch's pool threads. False when the system refuses a thread.
    @discardableResult
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(
            Box {
                csystem_name_thread(name)
                body()
            }
        ).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard started == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Whether the caller runs on the process's main thread (on Linux, the thread whose id is the process id).
    public static var isMainThread: Bool { csystem_is_main_thread() }
}
