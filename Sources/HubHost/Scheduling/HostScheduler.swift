import HubCore

/// The host's clock and timers (behind `hub_host.schedule`): HubCore's `ManualClock`, so plugin timers
/// (asynchronous actions) and the event pipeline's delays share one deterministic time line that whoever drives
/// the host (an event script, a test, the dev loop) advances.
public typealias HostScheduler = ManualClock
