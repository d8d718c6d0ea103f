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

/// A clock for tests and for views without a plugin host.
public final class ManualClock: EventClock {
    private struct Timer { let id: Int; let due: Double; let fire: () -> Void }
    public private(set) var now: Double = 0
    private var timers: [Timer] = []
    private var nextID = 0

    public init() {}

    @discardableResult
    public func schedule(after seconds: Double, _ fire: @escaping () -> Void) -> Int {
        nextID += 1
        timers.append(Timer(id: nextID, due: now + max(0, seconds.isFinite ? seconds : 0), fire: fire))
        return nextID
    }

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

    public var pendingCount: Int { timers.count }
}
