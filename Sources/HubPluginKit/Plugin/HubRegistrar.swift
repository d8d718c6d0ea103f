import CHubPlugin

/// What a plugin registers its contributions with, given to ``HubPlugin/register(with:)``.
///
/// Everything registered belongs to the plugin: the host revokes it when the plugin unloads. Registration
/// methods throw ``HubPluginError`` with the host's reason (for example a namespace another plugin owns).
///
/// - Important: Use it on the host's main thread: inside `register(with:)`, or later from inside a host call.
public final class HubRegistrar {
    /// The host, also available as ``HubHost/current``.
    public let host: HubHost

    /// Objects the host holds by pointer without a destroy callback (handlers, layout managers, service
    /// contexts); kept alive until the plugin unloads or they are unregistered.
    private var retained: [String: Retained] = [:]
    private var handlerCount = 0

    private struct Retained {
        let object: AnyObject?
        let free: () -> Void
    }

    init(host: HubHost) {
        self.host = host
    }

    private var table: UnsafePointer<hub_host> { host.table }

    /// Runs a host registration call with an error buffer; throws its reason on failure.
    private func check(_ what: String, _ call: (UnsafeMutablePointer<CChar>, Int) -> Bool) throws {
        var buffer = ErrorBuffer()
        let result = buffer.capture(call)
        guard result.ok else {
            throw HubPluginError(result.message.isEmpty ? "\(what) was refused by the host" : result.message)
        }
    }

    // MARK: - Components

    /// Registers `factory` for the component namespace `namespace` (models "namespace:name" then resolve to it).
    ///
    /// - Throws: ``HubPluginError`` when the namespace is invalid or taken (the message names its owner).
    public func registerComponentFactory(_ factory: HubComponentFactory, forNamespace namespace: String) throws {
        let cFactory = FactoryBridge.make(factory)
        do {
            try check("component namespace '\(namespace)'") { error, capacity in
                namespace.withCString {
                    table.pointee.register_component_factory?(table, $0, cFactory, error, capacity) ?? false
                }
            }
        } catch {
            FactoryBridge.free(cFactory)  // the host keeps nothing on failure and never calls destroy
            throw error
        }
    }

    /// Unregisters this plugin's factory for `namespace`, destroying its live components first. A namespace
    /// this plugin did not register is a no-op.
    public func unregisterComponentFactory(forNamespace namespace: String) {
        namespace.withCString { table.pointee.unregister_component_factory?(table, $0) }
    }

    // MARK: - Actions

    /// Registers `factory` for the action namespace `namespace` (actions "namespace:name").
    ///
    /// - Throws: ``HubPluginError`` when the namespace is taken.
    public func registerActionFactory(_ factory: HubActionFactory, forNamespace namespace: String) throws {
        let cFactory = ActionBridge.makeFactory(factory)
        do {
            try check("action namespace '\(namespace)'") { error, capacity in
                namespace.withCString {
                    table.pointee.register_action_factory?(table, $0, cFactory, error, capacity) ?? false
                }
            }
        } catch {
            ActionBridge.freeFactory(cFactory)
            throw error
        }
    }

    /// Unregisters this plugin's action factory for `namespace`; anything else is a no-op.
    public func unregisterActionFactory(forNamespace namespace: String) {
        namespace.withCString { table.pointee.unregister_action_factory?(table, $0) }
    }

    /// Adds an action handler; the host asks handlers in registration order. Kept until the plugin unloads.
    public func registerActionHandler(_ handler: HubActionHandler) throws {
        let cHandler = ActionBridge.makeHandler(handler)
        do {
            try check("action handler") { error, capacity in
                table.pointee.register_action_handler?(table, cHandler, error, capacity) ?? false
            }
        } catch {
            ActionBridge.freeHandler(cHandler)
            throw error
        }
        handlerCount += 1
        retained["handler/\(handlerCount)"] = Retained(object: handler) { ActionBridge.freeHandler(cHandler) }
    }

    // MARK: - Layout

    /// Registers a layout manager under `id` (chosen with `hubhost … --layout-manager ID`). Kept until unload.
    ///
    /// - Throws: ``HubPluginError`` when the id is taken.
    public func registerLayoutManager(_ manager: HubLayoutManager, id: String) throws {
        let cManager = LayoutManagerBridge.make(manager)
        do {
            try check("layout manager '\(id)'") { error, capacity in
                id.withCString { table.pointee.register_layout_manager?(table, $0, cManager, error, capacity) ?? false }
            }
        } catch {
            LayoutManagerBridge.free(cManager)
            throw error
        }
        retained["layout/\(id)"] = Retained(object: manager) { LayoutManagerBridge.free(cManager) }
    }

    // MARK: - Services

    /// Provides a service: `table` is the interface's C function table (static, owned by the plugin) and
    /// `context` the object its functions receive as their first argument (as an opaque pointer; recover it
    /// with `Unmanaged<T>.fromOpaque(context).takeUnretainedValue()`). The registrar keeps `context` alive until
    /// the service is unregistered or the plugin unloads; consumers' retains are counted on top.
    ///
    /// - Throws: ``HubPluginError`` when another provider holds the same interface id and name.
    public func registerService(
        _ interfaceID: String, version: UInt32, name: String? = nil,
        table serviceTable: UnsafeRawPointer, context: AnyObject
    ) throws {
        let opaque = Unmanaged.passUnretained(context).toOpaque()
        try check("service '\(interfaceID)'") { error, capacity in
            interfaceID.withCString { id in
                withOptionalCString(name) { cName in
                    var service = hub_service(
                        struct_size: structSize(hub_service.self), interface_id: id, version: version, name: cName,
                        table: serviceTable, context: opaque,
                        retain: { _ = Unmanaged<AnyObject>.fromOpaque($0!).retain() },
                        release: { Unmanaged<AnyObject>.fromOpaque($0!).release() })
                    return table.pointee.register_service?(table, &service, error, capacity) ?? false
                }
            }
        }
        retained["service/\(interfaceID)/\(name ?? "")"] = Retained(object: context) {}
    }

    /// Withdraws this plugin's service `interfaceID`/`name` (nil: the default binding).
    public func unregisterService(_ interfaceID: String, name: String? = nil) {
        interfaceID.withCString { id in
            withOptionalCString(name) { table.pointee.unregister_service?(table, id, $0) }
        }
        retained.removeValue(forKey: "service/\(interfaceID)/\(name ?? "")")
    }

    /// Looks up a service with at least `minimumVersion`; see ``HubAcquiredService``.
    ///
    /// - Throws: ``HubPluginError`` with the host's reason ("no provider for com.x", "com.x is version 1; 2 was asked").
    public func acquireService(
        _ interfaceID: String, name: String? = nil,
        minimumVersion: UInt32 = 1
    ) throws -> HubAcquiredService {
        var service = hub_service()
        service.struct_size = structSize(hub_service.self)
        try check("service '\(interfaceID)'") { error, capacity in
            interfaceID.withCString { id in
                withOptionalCString(name) { cName in
                    table.pointee.acquire_service?(table, id, cName, minimumVersion, &service, error, capacity) ?? false
                }
            }
        }
        return HubAcquiredService(host: host, service: service)
    }

    /// Sets the plugin's service observer (nil removes it): told `(interfaceID, available)` whenever any
    /// service appears or goes away, so the plugin can drop what it acquired and look it up again.
    public func setServiceObserver(_ observer: ((String, Bool) -> Void)?) {
        retained.removeValue(forKey: "service-observer")?.free()
        guard let observer else {
            table.pointee.set_service_observer?(table, nil, nil)
            return
        }
        let box = ServiceObserverBox(observer)
        retained["service-observer"] = Retained(object: box) {}
        table.pointee.set_service_observer?(
            table,
            { data, id, available in
                Unmanaged<ServiceObserverBox>.fromOpaque(data!).takeUnretainedValue().body(
                    swiftString(id) ?? "", available)
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    // MARK: - Internals

    /// Frees what the registrar kept for the host. Called when the plugin unloads (after the host revoked
    /// everything) or its init failed.
    func releaseRetainedObjects() {
        for entry in retained.values { entry.free() }
        retained.removeAll()
    }
}

final class ServiceObserverBox {
    let body: (String, Bool) -> Void
    init(_ body: @escaping (String, Bool) -> Void) { self.body = body }
}
