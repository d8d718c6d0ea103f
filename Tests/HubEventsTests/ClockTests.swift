import HubCore
import Testing

/// The event clock: time only moves when told, and a timer cannot keep it from moving.
@Suite struct ClockTests {
    /// A timer that schedules itself again with no delay (a plugin's slip) no longer keeps time from ever moving:
    /// past a bound of firings in one step, its owner's timers are cancelled and the owner is named (a replay hung,
    /// with no single call slow enough for a watchdog to see).
    @Test func aTimerThatReschedulesItselfForeverIsStopped() {
        let clock = ManualClock()
        let owner = Owner(id: "com.example.loop", displayName: "libloop.so")
        var runaway: Owner?
        clock.onRunaway = { runaway = $0 }
        var fired = 0
        func again() {
            fired += 1
            clock.schedule(after: 0, owner: owner, again)
        }
        clock.schedule(after: 0, owner: owner, again)
        var other = 0
        clock.schedule(after: 0.5) { other += 1 }
        clock.advance(by: 1)
        #expect(runaway == owner)
        #expect(fired == ManualClock.maxFiringsPerAdvance)
        #expect(other == 1, "the other timers still fire")
        #expect(clock.now == 1)
        #expect(clock.pendingCount == 0)
    }
}
