import Foundation
import Testing

@testable import HubCore

/// Output written on a second thread (`OffThreadSink`, `ByteWriter.stream(onAnotherThread:)`): every byte, in
/// order, before the call returns; a one-chunk output on the caller's thread; a slow sink holds the writer back.
struct OffThreadSinkTests {
    /// Chunks of varied sizes and contents (chunk `i` is filled with `i`'s low byte).
    static func chunks(_ count: Int) -> [[UInt8]] {
        (0..<count).map { i in [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1 + (i * 7919) % 5000) }
    }

    @Test func everyChunkArrivesWholeAndInOrderBeforeRunReturns() {
        let chunks = Self.chunks(300)
        let caller = pthread_self()
        var received: [UInt8] = []
        var threads: [pthread_t] = []
        let record = { (chunk: UnsafeRawBufferPointer) in
            received.append(contentsOf: chunk)
            threads.append(pthread_self())
        }
        OffThreadSink.run(record) { sink in
            for chunk in chunks { chunk.withUnsafeBytes(sink) }
        }
        #expect(received == chunks.flatMap { $0 })
        #expect(threads.count == chunks.count)
        // The first chunk on the caller's thread, the rest on the writer's.
        #expect(pthread_equal(threads[0], caller) != 0)
        #expect(threads.dropFirst().allSatisfy { pthread_equal($0, caller) == 0 })
    }

    @Test func aOneChunkOutputStartsNoThread() {
        let caller = pthread_self()
        var onCaller = false
        let record = { (_: UnsafeRawBufferPointer) in onCaller = pthread_equal(pthread_self(), caller) != 0 }
        OffThreadSink.run(record) { sink in
            [UInt8](repeating: 1, count: 10).withUnsafeBytes(sink)
        }
        #expect(onCaller)
    }

    /// The writer waits for a slow sink once four chunks are queued: the producer never runs further ahead than
    /// the queue, the chunk being written and the one being handed over.
    @Test func aSlowSinkHoldsTheProducerBack() {
        let lock = Lock()
        var produced = 0
        var written = 0
        var largestLead = 0
        let slowly = { (_: UnsafeRawBufferPointer) in
            usleep(2000)
            lock.withLock { written += 1 }
        }
        OffThreadSink.run(slowly) { sink in
            for chunk in Self.chunks(40) {
                lock.withLock {
                    produced += 1
                    largestLead = max(largestLead, produced - written)
                }
                chunk.withUnsafeBytes(sink)
            }
        }
        #expect(written == 40)
        #expect(largestLead <= 6, "the producer ran \(largestLead) chunks ahead")
    }

    /// Through a writer: the same bytes with and without the second thread, over many buffer flushes.
    @Test func aByteWriterWritesTheSameBytesOnAnotherThread() {
        func write(_ out: inout ByteWriter) {
            for i in 0..<50_000 {
                out.write("item ")
                out.write(i)
                out.writeJSONString("name \(i) \u{1}")
                out.byte(UInt8(ascii: "\n"))
            }
        }
        var direct: [UInt8] = []
        ByteWriter.stream(capacity: 4096, to: { direct.append(contentsOf: $0) }, write)
        var handedOff: [UInt8] = []
        var calls = 0
        ByteWriter.stream(
            capacity: 4096,
            to: {
                handedOff.append(contentsOf: $0)
                calls += 1
            }, onAnotherThread: true, write)
        #expect(calls > 100)
        #expect(handedOff == direct)
    }
}
