#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The host's main thread, as seen by the plugin: the thread that called `init`.
///
/// The header's thread tags (`[main-thread]`) are invisible to the compiler, so the SDK checks them at run
/// time: debug builds log a warning (once per entry point) when the host calls a plugin off its main thread,
/// and ``MainThreadBound`` fails a precondition when plugin state is touched from another thread.
public enum HubMainThread {
    nonisolated(unsafe) private static var thread: pthread_t?
    nonisolated(unsafe) private static var warned: Set<String> = []

    /// True on the thread the host initialised the plugin on (and before init, when nothing is known yet).
    public static var isCurrent: Bool {
        guard let thread else { return true }
        return pthread_equal(thread, pthread_self()) != 0
    }

    static func record() {
        thread = pthread_self()
    }

    static func forget() {
        thread = nil
    }

    /// Debug builds: warns once per `entryPoint` when the host calls in off its main thread.
    @inline(__always)
    static func check(_ entryPoint: StaticString) {
        #if DEBUG
            if !isCurrent {
                let name = "\(entryPoint)"
                // `log` is [any-thread]; the set is only a best-effort de-duplication.
                if warned.insert(name).inserted {
                    HubLog.warning("\(name) was called off the host's main thread; plugins are not thread-safe")
                }
            }
        #endif
    }
}

/// A value that may only be used on the host's main thread (modelled on swift-nio's `NIOLoopBound`): use it
/// for plugin-wide state such as caches shared by components.
///
/// - Important: Reading or writing ``value`` off the main thread fails a precondition.
public final class MainThreadBound<Value> {
    private var storage: Value

    public init(_ value: Value) {
        storage = value
    }

    /// The value. Only on the host's main thread.
    public var value: Value {
        get {
            precondition(HubMainThread.isCurrent, "MainThreadBound used off the host's main thread")
            return storage
        }
        set {
            precondition(HubMainThread.isCurrent, "MainThreadBound used off the host's main thread")
            storage = newValue
        }
    }
}
