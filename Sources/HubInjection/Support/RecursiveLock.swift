import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// A recursive pthread mutex. HIPInstanceLocator and Objection both run factories under one recursive lock so a
/// factory may ask the same container for its own dependencies on the same thread; Linux has no objc_sync, so
/// this is the portable equivalent (and cheaper than NSRecursiveLock on the hot path of a cached resolve).
public final class RecursiveLock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// For the inlinable fast paths of cached resolves; everything else uses `withLock`.
    @inlinable @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    @inlinable @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }

    @inlinable @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
