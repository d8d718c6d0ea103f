import CHubPlugin

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds the C descriptor of a plugin and bridges the host's `init`/`deinit` to ``HubPlugin``.
///
/// Plugins normally use ``HubPlugin/descriptor`` instead of calling this directly.
public enum HubPluginExport {
    /// The exported plugin type and its descriptor. One plugin per shared object: the SDK is linked statically
    /// into each plugin, so each image has its own copy of this state.
    nonisolated(unsafe) private static var exported:
        (type: any HubPlugin.Type, descriptor: UnsafePointer<hub_plugin_descriptor>)?
    /// The live plugin between `init` and `deinit`.
    nonisolated(unsafe) private static var live: (plugin: any HubPlugin, registrar: HubRegistrar)?

    /// Returns the static descriptor for `plugin`, building it on the first call. Runs no plugin code.
    ///
    /// - Precondition: One shared object exports one plugin type.
    public static func descriptor<P: HubPlugin>(for plugin: P.Type) -> UnsafePointer<hub_plugin_descriptor> {
        if let exported {
            precondition(
                ObjectIdentifier(exported.type) == ObjectIdentifier(plugin),
                "HubPluginKit: one plugin type per shared object")
            return exported.descriptor
        }
        // The strings and the struct live as long as the image: the host reads them while the plugin is loaded.
        let descriptor = UnsafeMutablePointer<hub_plugin_descriptor>.allocate(capacity: 1)
        descriptor.initialize(
            to: hub_plugin_descriptor(
                magic: HUB_PLUGIN_MAGIC,
                struct_size: structSize(hub_plugin_descriptor.self),
                abi: hub_version(major: HUB_ABI_MAJOR, minor: HUB_ABI_MINOR),
                id: UnsafePointer(makeCString(plugin.id)),
                name: UnsafePointer(makeCString(plugin.name)),
                version: UnsafePointer(makeCString(plugin.version)),
                description: UnsafePointer(makeCString(plugin.description)),
                vendor: UnsafePointer(makeCString(plugin.vendor)),
                init: { host, error, capacity in HubPluginExport.initialize(host, error, capacity) },
                deinit: { HubPluginExport.deinitialize() }
            ))
        exported = (plugin, UnsafePointer(descriptor))
        return UnsafePointer(descriptor)
    }

    // MARK: - Internals

    private static func initialize(
        _ table: UnsafePointer<hub_host>?, _ error: UnsafeMutablePointer<CChar>?,
        _ capacity: Int
    ) -> Bool {
        func fail(_ message: String) -> Bool {
            writeError(message, into: error, capacity: capacity)
            return false
        }
        guard let type = exported?.type else { return fail("the plugin descriptor was not built") }
        guard let table else { return fail("the host table is NULL") }
        let ours = hub_version(major: HUB_ABI_MAJOR, minor: HUB_ABI_MINOR)
        guard hub_version_is_compatible(table.pointee.abi, ours) else {
            return fail(
                "built for hub plugin ABI \(ours.major).\(ours.minor); the host speaks "
                    + "\(table.pointee.abi.major).\(table.pointee.abi.minor)")
        }
        guard table.pointee.struct_size >= structSize(hub_host.self) else {
            return fail(
                "the host table is \(table.pointee.struct_size) bytes; ABI \(ours.major).\(ours.minor) "
                    + "needs \(structSize(hub_host.self))")
        }
        guard live == nil else { return fail("init called twice without deinit") }

        let host = HubHost(table)
        HubHost.installed = host
        HubMainThread.record()
        let plugin = type.init()
        let registrar = HubRegistrar(host: host)
        do {
            try plugin.register(with: registrar)
        } catch {
            // The host revokes what was registered and will not call deinit: forget everything now.
            registrar.releaseRetainedObjects()
            HubHost.installed = nil
            HubMainThread.forget()
            return fail(String(describing: error))
        }
        live = (plugin, registrar)
        return true
    }

    private static func deinitialize() {
        guard let current = live else { return }
        current.plugin.willUnload()
        current.registrar.releaseRetainedObjects()
        live = nil
        HubHost.installed = nil
        HubMainThread.forget()
    }
}
