import CHubPlugin

/// A service obtained from ``HubRegistrar/acquireService(_:name:minimumVersion:)``: another plugin's (or the
/// host's) function table for an interface, by id and version.
///
/// The SDK stays thin here: the table's layout is the interface's contract, so cast ``table`` to the C struct
/// that interface's header declares and pass ``context`` as its first argument. Call ``release()`` when done
/// (also done on deinit).
public final class HubAcquiredService {
    private let host: HubHost
    private var service: hub_service
    private var released = false

    init(host: HubHost, service: hub_service) {
        self.host = host
        self.service = service
    }

    /// The interface id, e.g. "com.example.weather".
    public var interfaceID: String { swiftString(service.interface_id) ?? "" }
    /// The provider's interface version (at least the minimum asked for).
    public var version: UInt32 { service.version }
    /// The binding name; nil for the default binding.
    public var name: String? { swiftString(service.name) }
    /// The interface's function table, owned by the provider.
    public var table: UnsafeRawPointer? { service.table }
    /// The provider's context, the first argument of the table's functions by convention.
    public var context: UnsafeMutableRawPointer? { service.context }

    /// Gives the service back; it is not used afterwards. Later calls do nothing.
    public func release() {
        guard !released else { return }
        released = true
        withUnsafePointer(to: &service) { host.table.pointee.release_service?(host.table, $0) }
    }

    deinit { release() }
}
