import CHubSystem
import Dispatch

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

    /// Runs `body(index)` for every index below `count` on up to `lanes` threads of their own, each taking the next
    /// index when it is free, and returns once all are done. For work that mostly waits (child processes, which
    /// may hang): Dispatch would run only as many at once as there are cores, and grow its pool a thread a second.
    public static func forEachIndex(
        _ count: Int, lanes: Int, name: String, _ body: @escaping @Sendable (Int) -> Void
    ) {
        let next = Locked(0)
        let finished = DispatchSemaphore(value: 0)
        let lane: @Sendable () -> Void = {
            while true {
                let index = next.withLock { value in
                    defer { value += 1 }
                    return value
                }
                guard index < count else { break }
                body(index)
            }
            finished.signal()
        }
        let started = max(0, min(count, lanes))
        for _ in 0..<started where !detach(name: name, lane) { lane() }
        for _ in 0..<started { finished.wait() }
    }

    /// Whether the caller runs on the process's main thread (on Linux, the thread whose id is the process id).
    public static var isMainThread: Bool { csystem_is_main_thread() }
}
