import Foundation
import Testing

@testable import HubCore

/// A `ByteWriter` whose output is written on a thread of its own (`stream(onAnotherThread:)`, `OutputThread`):
/// every byte, in order, before `stream` returns; an output of one buffer on the caller's thread; a slow sink holds
/// the writer back.
struct OutputThreadTests {
    /// Lines of varied lengths, escapes and runs longer than the buffer (which go through the buffers too).
    static func write(_ out: inout ByteWriter, lines: Int) {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
        for i in 0..<lines {
            out.write("item ")
            out.write(i)
            out.writeJSONString("name \(i) \u{1}")
            if i % 97 == 0 { long.withUnsafeBufferPointer { out.bytes($0) } }
            out.byte(UInt8(ascii: "\n"))
        }
    }

    @Test func everyByteArrivesInOrderOnTheOutputThreadBeforeStreamReturns() {
        var direct: [UInt8] = []
        let collect = { (chunk: UnsafeRawBufferPointer) in direct.append(contentsOf: chunk) }
        ByteWriter.stream(capacity: 1024, to: collect) { Self.write(&$0, lines: 20_000) }
        let caller = pthread_self()
        var handedOff: [UInt8] = []
        var threads: [pthread_t] = []
        let record = { (chunk: UnsafeRawBufferPointer) in
            handedOff.append(contentsOf: chunk)
            threads.append(pthread_self())
        }
        ByteWriter.stream(capacity: 1024, to: record, onAnotherThread: true) { Self.write(&$0, lines: 20_000) }
        #expect(handedOff == direct)
        #expect(threads.count > 100)
        #expect(threads.allSatisfy { pthread_equal($0, caller) == 0 })
    }

    @Test func anOutputOfOneBufferIsWrittenOnTheCallersThread() {
        let caller = pthread_self()
        var calls: [Bool] = []
        let record = { (_: UnsafeRawBufferPointer) in calls.append(pthread_equal(pthread_self(), caller) != 0) }
        ByteWriter.stream(capacity: 1024, to: record, onAnotherThread: true) { out in
            for i in 0..<50 {
                out.write("item ")
                out.write(i)
                out.byte(UInt8(ascii: "\n"))
            }
        }
        #expect(calls == [true])
    }

    /// The writer waits for a slow sink once every buffer is full: it never gets further ahead of the sink than
    /// the buffers that exist (the spares, the one being written out, the one being filled).
    @Test func aSlowSinkHoldsTheWriterBack() {
        let lock = Lock()
        var produced = 0
        var written = 0
        var largestLead = 0
        let slowly = { (chunk: UnsafeRawBufferPointer) in
            usleep(1000)
            lock.withLock { written += chunk.count }
        }
        let line = [UInt8](repeating: UInt8(ascii: "y"), count: 100)
        ByteWriter.stream(capacity: 1000, to: slowly, onAnotherThread: true) { out in
            for _ in 0..<400 {
                line.withUnsafeBufferPointer { out.bytes($0) }
                lock.withLock {
                    produced += line.count
                    largestLead = max(largestLead, produced - written)
                }
            }
        }
        #expect(written == 40_000)
        let bound = (OutputThread.spareBuffers + 2) * 1000
        #expect(largestLead <= bound, "the writer ran \(largestLead) bytes ahead (bound \(bound))")
    }
}
