import Foundation

@testable import HubHost

/// The fixture plugin's `fixture_stats_t`: what the host called in it.
struct FixtureStats {
    var created: Int32 = 0, destroyed: Int32 = 0, configured: Int32 = 0, factoryDestroyed: Int32 = 0
    var actionFactoryDestroyed: Int32 = 0, deinitCalled: Int32 = 0, timerFired: Int32 = 0
    var destroyedInDraw: Int32 = 0

    /// Reads the counters of a loaded fixture plugin (through its exported `fixture_stats`).
    static func of(_ record: PluginRecord) -> FixtureStats? {
        guard let handle = record.handle, let symbol = dlsym(handle, "fixture_stats") else { return nil }
        typealias StatsFn = @convention(c) () -> UnsafeMutableRawPointer
        let pointer = unsafeBitCast(symbol, to: StatsFn.self)()
        return pointer.load(as: FixtureStats.self)
    }
}
