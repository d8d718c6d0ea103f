#if canImport(Glibc)
    import Glibc
#endif

/// A bounded first-in, first-out queue from one thread to another: `put` waits while it is full, `take` while it
/// is empty. The bound keeps a fast producer from piling up work (and memory) ahead of a slow consumer.
public final class Handoff<Item>: @unchecked Sendable {
    private var slots: [Item?]
    private var head = 0
    private var count = 0
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init(capacity: Int) {
        precondition(capacity > 0, "a handoff holds at least one item")
        slots = Array(repeating: nil, count: capacity)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notEmpty, nil)
        pthread_cond_init(notFull, nil)
    }

    deinit {
        pthread_cond_destroy(notFull)
        pthread_cond_destroy(notEmpty)
        pthread_mutex_destroy(mutex)
        notFull.deallocate()
        notEmpty.deallocate()
        mutex.deallocate()
    }

    /// Adds `item` at the end, waiting for room.
    public func put(_ item: Item) {
        pthread_mutex_lock(mutex)
        while count == slots.count { pthread_cond_wait(notFull, mutex) }
        slots[(head + count) % slots.count] = item
        count += 1
        pthread_cond_signal(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    /// Removes the first item, waiting for one.
    public func take() -> Item {
        pthread_mutex_lock(mutex)
        while count == 0 { pthread_cond_wait(notEmpty, mutex) }
        let item = slots[head].take()!
        head = (head + 1) % slots.count
        count -= 1
        pthread_cond_signal(notFull)
        pthread_mutex_unlock(mutex)
        return item
    }
}
