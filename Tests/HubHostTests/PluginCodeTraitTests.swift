import Foundation
import HubTestKit
import Testing

/// `.pluginCode` really keeps tests of different suites apart: each test notes that it is inside, waits a little,
/// and checks nobody else came in meanwhile. Without the trait these suites run in parallel and overlap.
enum PluginCodeOverlap {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var inside = 0
    nonisolated(unsafe) private(set) static var overlaps = 0

    static func occupy() {
        lock.withLock {
            inside += 1
            if inside > 1 { overlaps += 1 }
        }
        Thread.sleep(forTimeInterval: 0.02)
        lock.withLock { inside -= 1 }
    }
}

@Suite(.pluginCode) struct PluginCodeTraitFirstSuite {
    @Test(arguments: 0..<4) func occupies(_ round: Int) {
        PluginCodeOverlap.occupy()
        #expect(PluginCodeOverlap.overlaps == 0)
    }
}

@Suite(.pluginCode) struct PluginCodeTraitSecondSuite {
    @Test(arguments: 0..<4) func occupies(_ round: Int) {
        PluginCodeOverlap.occupy()
        #expect(PluginCodeOverlap.overlaps == 0)
    }
}
