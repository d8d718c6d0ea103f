import HubCore

/// The host's clock and timers. Time does not pass by itself: whoever drives the host (an event script, a test,
/// the dev loop) calls `advance(by:)`, and every timer that falls due runs, in due order. That keeps plugin
/// timers (asynchronous actions) deterministic and replayable.
///
/// Every timer records its owner, so unloading a plugin cancels its pending timers before its code goes away.
///
/// # Thread safety
/// Not thread-safe: the host's main thread only.
public final class HostScheduler {
    private struct Timer {
        let id: Int
        let due: Double
        let owner: Owner
        let fire: () -> Void
    }

    /// Seconds since the scheduler was created, on its own clock.
    public private(set) var now: Double = 0
    private var timers: [Timer] = []
    private var nextID = 0

    public init() {}

    /// Runs `fire` once when the clock reaches `now + seconds` (negative delays count as 0). Returns a timer id.
    @discardableResult
    public func schedule(after seconds: Double, owner: Owner, _ fire: @escaping () -> Void) -> Int {
        nextID += 1
        timers.append(Timer(id: nextID, due: now + max(0, seconds.isFinite ? seconds : 0), owner: owner, fire: fire))
        return nextID
    }

    /// Moves the clock forward, firing due timers in due order (ties in scheduling order). Timers scheduled by a
    /// firing timer run in the same call when they fall due before the new time.
    public func advance(by seconds: Double) {
        let target = now + max(0, seconds)
        while let next = timers.indices.min(by: { (timers[$0].due, timers[$0].id) < (timers[$1].due, timers[$1].id) }),
              timers[next].due <= target {
            let timer = timers.remove(at: next)
            now = max(now, timer.due)
            timer.fire()
        }
        now = target
    }

    /// The number of timers not yet fired.
    public var pendingCount: Int { timers.count }

    /// Cancels every pending timer of `owner`; returns how many.
    @discardableResult
    public func cancelAll(ownedBy owner: Owner) -> Int {
        let before = timers.count
        timers.removeAll { $0.owner == owner }
        return before - timers.count
    }
}
