import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Threads without Foundation's Thread (not in FoundationEssentials).
public enum Threads {
    /// Runs `body` on a new detached thread named `name`, for a loop that lives as long as its owner (a watcher, a
    /// pipe reader), which must not hold one of Dispatch's pool threads. False when the system refuses a thread.
    @discardableResult
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = create(name: name, body) else { return false }
        pthread_detach(thread)
        return true
    }

    /// A thread `start` made, to wait for with `join`.
    public final class Joinable: @unchecked Sendable {
        fileprivate let thread: pthread_t
        private var joined = false
        fileprivate init(_ thread: pthread_t) { self.thread = thread }

        /// Waits until the thread's body has returned (once; later calls return at once).
        public func join() {
            guard !joined else { return }
            joined = true
            pthread_join(thread, nil)
        }
    }

    /// Runs `body` on a new thread named `name`, for work whose owner waits for its end (`join`). nil when the
    /// system refuses a thread: the caller does the work itself.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Joinable? {
        create(name: name, body).map(Joinable.init)
    }

    private static func create(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
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
            return nil
        }
        return thread
    }

    /// Whether the caller runs on the process's main thread (on Linux, the thread whose id is the process id).
    public static var isMainThread: Bool { csystem_is_main_thread() }
}
