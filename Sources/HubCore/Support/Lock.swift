#if canImport(Glibc)
    import Glibc
#endif

/// A mutual-exclusion lock over a pthread mutex, for state a few threads share (Foundation's NSLock is not in
/// FoundationEssentials, and Synchronization's Mutex cannot be held across a `lock()` / `unlock()` pair).
public final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Takes the lock if no one holds it; false (not taken) otherwise.
    public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value several threads read and write, behind a lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
