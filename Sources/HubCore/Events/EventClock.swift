/// The clock events run on: Hub's 0.2 s highlight and deselect delays, image latency and asynchronous plugin
/// timers all fall due on it. Time never passes by itself; whoever drives the view calls `advance(by:)`, so a
/// replay is deterministic. The host's scheduler (the one behind `hub_host.schedule`) is one of these, so plugin
/// timers and the view's delays share one time line.
public protocol EventClock: AnyObject {
    /// Seconds since the clock started.
    var now: Double { get }
    /// Runs `fire` once when the clock reaches `now + seconds`.
    @discardableResult
    func schedule(after seconds: Double, _ fire: @escaping () -> Void) -> Int
    /// Moves time forward, firing due timers in due order (ties in scheduling order).
    func advance(by seconds: Double)
}

/// The clock a view or a host runs on: a queue of timers that fire only when `advance(by:)` moves time forward.
/// The host's scheduler (behind `hub_host.schedule`) is one, so plugin timers and the view's delays share one
/// time line; tests and views without a plugin host use one directly.
///
/// Every timer records its owner, so unloading a plugin cancels its pending timers before its code goes away.
///
/// # Thread safety
/// Not thread-safe: the host's main thread only.
public final class ManualClock: EventClock {
    private struct Timer {
        let id: Int
        let due: Double
        let owner: Owner
        let fire: () -> Void
    }
    /// Seconds since the clock was created.
    public private(set) var now: Double = 0
    private var timers: [Timer] = []
    private var nextID = 0

    public init() {}

    /// Runs `fire` once when the clock reaches `now + seconds` (negative or non-finite delays count as 0), on
    /// behalf of the host. Returns a timer id.
    @discardableResult
    public func schedule(after seconds: Double, _ fire: @escaping () -> Void) -> Int {
        schedule(after: seconds, owner: .host, fire)
    }

    /// Runs `fire` once when the clock reaches `now + seconds`, on behalf of `owner`. Returns a timer id.
    @discardableResult
    public func schedule(after seconds: Double, owner: Owner, _ fire: @escaping () -> Void) -> Int {
        nextID += 1
        timers.append(Timer(id: nextID, due: now + max(0, seconds.isFinite ? seconds : 0), owner: owner, fire: fire))
        return nextID
    }

    /// The most timers one `advance` fires: a timer that schedules itself again with no delay would otherwise
    /// keep time from ever moving (a replay hung, with no call of it slow enough for a watchdog).
    public static let maxFiringsPerAdvance = 100_000
    /// Told the owner of the timer past `maxFiringsPerAdvance`; that owner's pending timers are cancelled.
    public var onRunaway: ((Owner) -> Void)?

    /// Moves time forward, firing due timers in due order (ties in scheduling order). Timers scheduled by a
    /// firing timer run in the same call when they fall due before the new time.
    public func advance(by seconds: Double) {
        let target = now + max(0, seconds)
        var fired = 0
        while let next = timers.indices.min(by: { (timers[$0].due, timers[$0].id) < (timers[$1].due, timers[$1].id) }),
            timers[next].due <= target
        {
            let timer = timers.remove(at: next)
            now = max(now, timer.due)
            fired += 1
            if fired > Self.maxFiringsPerAdvance {
                cancelAll(ownedBy: timer.owner)
                onRunaway?(timer.owner)
                fired = 0
                continue
            }
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
