import CHubPlugin

/// The host the plugin is loaded in: logging, text measurement, the clock, and services.
///
/// `HubHost.current` is available from the moment the host calls the plugin's `init` (so inside
/// ``HubPlugin/register(with:)``) until `deinit` returns. The host calls every component, factory and action
/// method in between, so they can always use it.
///
/// - Important: Call host functions on the host's main thread (from inside a host call), except ``log(_:_:)``
///   and ``measureText(_:style:maxWidth:)``, which work on any thread.
public struct HubHost {
    let table: UnsafePointer<hub_host>

    init(_ table: UnsafePointer<hub_host>) {
        self.table = table
    }

    nonisolated(unsafe) static var installed: HubHost?

    /// The host this plugin was initialised by.
    ///
    /// - Precondition: The plugin is initialised (between the host's `init` and `deinit` calls).
    public static var current: HubHost {
        guard let host = installed else {
            preconditionFailure("HubPluginKit: the host is used before the plugin's init or after its deinit")
        }
        return host
    }

    /// The ABI version the host speaks, e.g. "1.0".
    public var abiVersion: String { "\(table.pointee.abi.major).\(table.pointee.abi.minor)" }

    /// The host's name and version, e.g. "hubhost 0.1.0".
    public var hostVersion: String { swiftString(table.pointee.host_version) ?? "" }

    /// Logs `message` under the plugin's id.
    public func log(_ level: HubLogLevel, _ message: String) {
        message.withCString { table.pointee.log?(table, level.c, $0) }
    }

    /// The size `text` takes drawn with `style` and wrapped to `maxWidth` (0 or less: no wrapping), exactly as
    /// ``HubView/text(_:in:style:)`` draws it. Deterministic on every machine.
    public func measureText(_ text: String, style: TextStyle, maxWidth: Double) -> Size {
        var cStyle = style.c
        guard let measure = table.pointee.measure_text else { return .zero }
        return Size(text.withCString { measure(table, $0, &cStyle, maxWidth) })
    }

    /// Runs `body` once, `seconds` from now on the host's clock (which tests and event scripts advance). The
    /// closure is kept alive until it runs.
    public func schedule(after seconds: Double, _ body: @escaping () -> Void) {
        guard let schedule = table.pointee.schedule else { return }
        let box = Unmanaged.passRetained(ClosureBox(body)).toOpaque()
        schedule(
            table, seconds,
            { data in
                let box = Unmanaged<ClosureBox>.fromOpaque(data!).takeRetainedValue()
                box.body()
            }, box)
    }
}

/// Measures text the way the host draws it: shorthand for `HubHost.current.measureText(_:style:maxWidth:)`.
public func measureText(_ text: String, style: TextStyle, maxWidth: Double) -> Size {
    HubHost.current.measureText(text, style: style, maxWidth: maxWidth)
}

/// Keeps a Swift closure alive behind a C `user_data` pointer.
final class ClosureBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
