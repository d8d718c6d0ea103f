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

/// Output written on a second thread, as a streaming encoder writes: the thread that makes the bytes goes on
/// with the next ones while the last chunk is written (to a file: the kernel's copy; to a bench: its hashing).
public enum OffThreadSink {
    /// Runs `body` with a sink that hands each chunk on to `sink`, in order, on a thread of its own, and returns
    /// once every chunk is written. The first chunk is written on the caller's thread: an output that fits in one
    /// chunk (most views) starts no thread. At most four chunks wait for the writer.
    public static func run<R>(
        _ sink: (UnsafeRawBufferPointer) -> Void, _ body: (_ sink: (UnsafeRawBufferPointer) -> Void) throws -> R
    ) rethrows -> R {
        try withoutActuallyEscaping(sink) { sink in
            let relay = Relay(sink)
            // The writer lets go of `sink` before this returns (which `withoutActuallyEscaping` checks).
            defer { relay.finish() }
            return try body { relay.accept($0) }
        }
    }

    private final class Relay: @unchecked Sendable {
        private var sink: ((UnsafeRawBufferPointer) -> Void)?
        private var handoff: Handoff<[UInt8]?>?
        private var writer: Threads.Joinable?
        private var chunks = 0

        init(_ sink: @escaping (UnsafeRawBufferPointer) -> Void) { self.sink = sink }

        func accept(_ chunk: UnsafeRawBufferPointer) {
            chunks += 1
            if chunks == 2 { startWriter() }
            if let handoff {
                handoff.put(Array(chunk))  // the chunk is only valid during this call
            } else {
                sink?(chunk)
            }
        }

        /// Without a thread (the system refused one), every chunk is written here.
        private func startWriter() {
            guard let sink else { return }
            let handoff = Handoff<[UInt8]?>(capacity: 4)
            writer = Threads.start(name: "hubhost-output") {
                while let bytes = handoff.take() { bytes.withUnsafeBytes(sink) }
            }
            if writer != nil { self.handoff = handoff }
        }

        func finish() {
            if let handoff, let writer {
                handoff.put(nil)
                writer.join()
            }
            handoff = nil
            writer = nil
            sink = nil
        }
    }
}
