import CHubPlugin

/// Log levels, lowest first.
public enum HubLogLevel: Sendable {
    case trace, debug, info, warning, error

    var c: hub_log_level {
        switch self {
        case .trace: return HUB_LOG_TRACE
        case .debug: return HUB_LOG_DEBUG
        case .info: return HUB_LOG_INFO
        case .warning: return HUB_LOG_WARNING
        case .error: return HUB_LOG_ERROR
        }
    }
}

/// Logging through the host, which prefixes every message with the plugin's id: `HubLog.info("loaded 3 rows")`.
///
/// Messages logged while the plugin is not initialised (no host) are dropped.
public enum HubLog {
    /// Logs `message` at `level`; the message is not built when there is no host.
    public static func log(_ level: HubLogLevel, _ message: @autoclosure () -> String) {
        HubHost.installed?.log(level, message())
    }

    public static func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public static func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public static func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public static func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public static func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
