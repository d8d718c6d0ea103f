/// The buffers of a `ByteWriter` whose output is written on a thread of its own, as a streaming encoder writes:
/// when the writer's buffer is full it is handed over whole to the output thread, which passes it to the sink
/// (for a file: the kernel's copy) while the writer goes on in another buffer. Nothing is copied or allocated
/// per chunk; at most `spareBuffers + 2` buffers exist, so a slow sink holds the writer back.
///
/// The thread starts when the first buffer fills: an output that fits in one buffer (most views) is written on
/// the caller's thread and starts none. The sink is called by one thread at a time, in order. SIGPIPE is
/// blocked on the output thread: a sink writing to a pipe whose reader went away sees EPIPE.
final class OutputThread: @unchecked Sendable {
    static let spareBuffers = 3

    let capacity: Int
    private var sink: ((UnsafeRawBufferPointer) -> Void)?
    /// Full buffers on their way to the output thread (nil: the end), and emptied ones on their way back.
    private var full: Handoff<(buffer: UnsafeMutablePointer<UInt8>, count: Int)?>?
    private var empty: Handoff<UnsafeMutablePointer<UInt8>>?
    private var writer: Threads.Joinable?
    private var started = false
    private var buffers: [UnsafeMutablePointer<UInt8>] = []

    init(capacity: Int, sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.capacity = capacity
        self.sink = sink
    }

    /// The buffer the writer starts in.
    func firstBuffer() -> UnsafeMutablePointer<UInt8> { newBuffer() }

    /// `buffer` holds `count` bytes to write; returns the buffer to go on in.
    func exchange(_ buffer: UnsafeMutablePointer<UInt8>, count: Int) -> UnsafeMutablePointer<UInt8> {
        if !started { start() }
        guard let full, let empty else {
            sink?(UnsafeRawBufferPointer(start: buffer, count: count))  // no thread: written here
            return buffer
        }
        full.put((buffer, count))
        return empty.take()
    }

    /// Writes the last `count` bytes of `buffer`, waits until everything is written, and frees the buffers.
    func finish(_ buffer: UnsafeMutablePointer<UInt8>, count: Int) {
        if let full, let writer {
            if count > 0 { full.put((buffer, count)) }
            full.put(nil)
            writer.join()
        } else if count > 0 {
            sink?(UnsafeRawBufferPointer(start: buffer, count: count))
        }
        for buffer in buffers { buffer.deallocate() }
        buffers = []
        full = nil
        empty = nil
        writer = nil
        sink = nil  // the caller lent it (`withoutActuallyEscaping` checks nothing kept it)
    }

    private func newBuffer() -> UnsafeMutablePointer<UInt8> {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        buffers.append(buffer)
        return buffer
    }

    /// Without a thread (the system refused one), every buffer is written on the caller's.
    private func start() {
        started = true
        guard let sink else { return }
        let total = Self.spareBuffers + 2
        let full = Handoff<(buffer: UnsafeMutablePointer<UInt8>, count: Int)?>(capacity: total + 1)
        let empty = Handoff<UnsafeMutablePointer<UInt8>>(capacity: total)
        for _ in 0..<Self.spareBuffers + 1 { empty.put(newBuffer()) }
        writer = Threads.start(name: "hubhost-output") {
            // A broken pipe is then an EPIPE the sink sees (`OutputFile` ends the process, saying it is the
            // reader's doing), not a SIGPIPE that would look like a fault of the main thread's current work.
            BrokenPipe.blockOnThisThread()
            while let (buffer, count) = full.take() {
                sink(UnsafeRawBufferPointer(start: buffer, count: count))
                empty.put(buffer)
            }
        }
        if writer != nil {
            self.full = full
            self.empty = empty
        }
    }
}
