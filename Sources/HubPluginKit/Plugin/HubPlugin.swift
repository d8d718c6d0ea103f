import CHubPlugin

/// The C descriptor a plugin's entry point returns. Plugins only name it in their entry declaration.
public typealias HubPluginDescriptor = hub_plugin_descriptor

/// A hubhost plugin: its identity and what it registers when the host loads it.
///
/// Declare a type conforming to `HubPlugin` and export it with one line (the only exported symbol):
///
/// ```swift
/// import HubPluginKit
///
/// final class RowsPlugin: HubPlugin {
///     static let id = "com.example.rows"
///     static let name = "Rows"
///     static let version = "1.0.0"
///
///     func register(with registrar: HubRegistrar) throws {
///         try registrar.registerComponentFactory(HubComponentCatalog(["row": { RowComponent() }]),
///                                                forNamespace: "rows")
///     }
/// }
///
/// @c(hub_plugin_entry) public func hubPluginEntry() -> UnsafePointer<HubPluginDescriptor> { RowsPlugin.descriptor }
/// ```
///
/// The SDK builds the static descriptor, creates the plugin with ``init()`` when the host calls `init`, calls
/// ``register(with:)`` and turns a thrown error into the host's `out_error` (the load then fails and the host
/// revokes whatever was registered). When the plugin is unloaded the host first destroys its components and
/// revokes its registrations, then the SDK calls ``willUnload()`` and drops the instance.
///
/// # Implementation requirements
/// - ``id`` is reverse-DNS and never changes; ``name`` and ``version`` are mandatory.
/// - ``register(with:)`` registers everything the plugin offers and does nothing slow: it runs inside the host's
///   load. Throw (any error; its description becomes the reason) when the plugin cannot work.
/// - A Swift plugin is never unmapped once loaded (the Swift runtime cannot forget its metadata); a reload loads
///   a new copy. Keep no state that matters outside the instance.
public protocol HubPlugin {
    /// Reverse-DNS id, e.g. "com.example.rows". Mandatory, never changes.
    static var id: String { get }
    /// Human-readable name. Mandatory.
    static var name: String { get }
    /// The plugin's own version, e.g. "1.2.0". Mandatory.
    static var version: String { get }
    /// One sentence about the plugin. Defaults to "".
    static var description: String { get }
    /// Who made it. Defaults to "".
    static var vendor: String { get }

    /// Creates the plugin; called once per load, when the host calls `init`.
    init()

    /// Registers the plugin's component factories, actions, layout managers and services.
    /// - Throws: Any error, to fail the load; its description is the reason the host reports.
    func register(with registrar: HubRegistrar) throws

    /// Called once before unload, after the host destroyed the plugin's components and revoked its
    /// registrations. The default does nothing.
    func willUnload()
}

extension HubPlugin {
    public static var description: String { "" }
    public static var vendor: String { "" }
    public func willUnload() {}

    /// The plugin's static descriptor, for the entry declaration (see ``HubPlugin``).
    public static var descriptor: UnsafePointer<HubPluginDescriptor> {
        HubPluginExport.descriptor(for: Self.self)
    }
}

/// An error with a message, for ``HubPlugin/register(with:)`` and registration failures.
public struct HubPluginError: Error, CustomStringConvertible {
    /// The one-line reason the host reports.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
