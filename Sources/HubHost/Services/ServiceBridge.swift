import CHubPlugin
import FoundationEssentials
import HubCore
import HubInjection

/// The service slots of the `hub_host` table: `register_service`, `unregister_service`, `acquire_service`,
/// `release_service`, `set_service_observer`. Each finds the calling plugin through `host_data` (its
/// `PluginRecord`), so what it provides is owned by that load and what it acquires is held in its name; both
/// are settled by `HostServices.revokeAll(ownedBy:)` in the unload transaction.
enum ServiceBridge {
    /// Size of the v1 `hub_service`, through `release`: a smaller struct is refused, never over-read.
    static let minimumServiceSize =
        MemoryLayout<hub_service>.offset(of: \hub_service.release)!
        + MemoryLayout<UnsafeRawPointer?>.size

    static func install(into table: inout hub_host) {
        table.register_service = { host, service, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host) else {
                CInterop.writeError("register_service: the plugin is not loaded", errorBuffer, capacity)
                return false
            }
            if HostTable.refusesWhileUnloading("register_service", record, errorBuffer, capacity) { return false }
            do {
                let s = try ServiceBridge.read(service)
                let key = ServiceKey(id: String(cString: s.interface_id), name: CInterop.string(s.name))
                let registry = pluginHost.services.registry
                let owner = record.owner
                let slot = record.callSlot
                let register = {
                    let entry = try registry.register(
                        key, version: s.version, owner: owner, table: s.table, context: s.context,
                        retain: s.retain, release: s.release)
                    entry.slot = slot
                }
                // During init: held until init returns true, so that no observer hears of a provider whose init
                // then fails (and which is unloaded); a refusal then is the plugin's warning.
                let swapping = record.host?.staging?.file == record.file
                if record.holdsRegistrations, !swapping, let refusal = registry.refusal(of: key, owner: owner) {
                    throw refusal  // refused now, as an unheld registration would be, so init can react
                }
                // Held registrations are not in the registry yet: the same key twice in one init is refused here.
                if record.holdsRegistrations, record.heldRegistrations.contains(where: { $0.what == "service \(key)" })
                {
                    throw ServiceError.malformed("register_service: \(key) is already registered by this plugin")
                }
                if record.holdsRegistrations {
                    record.heldRegistrations.append(
                        (
                            "service \(key)",
                            {
                                if HotSwap.hold(
                                    record, "service \(key)", takenBy: registry.provider(of: key)?.owner,
                                    apply: register)
                                {
                                    return
                                }
                                try register()
                            }
                        ))
                    return true
                }
                // A new version loading beside the old one (hot reload): held until the old one is unloaded.
                if HotSwap.hold(record, "service \(key)", takenBy: registry.provider(of: key)?.owner, apply: register) {
                    return true
                }
                try register()
                return true
            } catch {
                // Malformed-table errors name the call already; other refusals (a key taken) get it here.
                let text = "\(error)"
                record.warnings.append(text.hasPrefix("register_service:") ? text : "register_service: " + text)
                CInterop.writeError("\(error)", errorBuffer, capacity)
                return false
            }
        }

        table.unregister_service = { host, interfaceID, name in
            guard let (record, pluginHost) = HostTable.resolve(host), let id = CInterop.string(interfaceID) else {
                return
            }
            pluginHost.services.registry.unregister(
                ServiceKey(id: id, name: CInterop.string(name)), owner: record.owner)
        }

        table.acquire_service = { host, interfaceID, name, minVersion, out, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host) else {
                CInterop.writeError("acquire_service: the plugin is not loaded", errorBuffer, capacity)
                return false
            }
            guard let id = CInterop.string(interfaceID), !id.isEmpty, let out else {
                CInterop.writeError(
                    "acquire_service: interface_id and out_service must not be NULL", errorBuffer, capacity)
                return false
            }
            let key = ServiceKey(id: id, name: CInterop.string(name))
            switch pluginHost.services.registry.acquire(key, minVersion: minVersion, consumer: record.owner) {
            case .success(let entry):
                out.pointee = hub_service(
                    struct_size: UInt32(MemoryLayout<hub_service>.size), interface_id: UnsafePointer(entry.idCString),
                    version: entry.version, name: entry.nameCString.map { UnsafePointer($0) }, table: entry.table,
                    context: entry.context, retain: nil, release: nil)
                return true
            case .failure(let error):
                CInterop.writeError("\(error)", errorBuffer, capacity)
                return false
            }
        }

        table.release_service = { host, service in
            guard let data = host?.pointee.host_data, let service, let id = service.pointee.interface_id else { return }
            // Released even while the consumer unloads (its record may no longer be callable).
            let record = Unmanaged<PluginRecord>.fromOpaque(data).takeUnretainedValue()
            record.host?.services.registry.release(idCString: UnsafeRawPointer(id), consumer: record.owner)
        }

        table.set_service_observer = { host, function, userData in
            guard let (record, pluginHost) = HostTable.resolve(host) else { return }
            let observer = function.map { function in
                ServiceRegistry.PluginObserver(
                    function: function, userData: userData,
                    isCallable: { [weak record] in record?.codeCallable ?? false }, slot: record.callSlot,
                    owner: record.owner)
            }
            pluginHost.services.registry.setPluginObserver(observer, for: record.owner)
        }

        table.set_service_event_observer = { host, function, userData in
            guard let (record, pluginHost) = HostTable.resolve(host) else { return }
            let observer = function.map { function in
                ServiceRegistry.PluginObserver(
                    eventFunction: function, userData: userData,
                    isCallable: { [weak record] in record?.codeCallable ?? false }, slot: record.callSlot,
                    owner: record.owner)
            }
            pluginHost.services.registry.setPluginEventObserver(observer, for: record.owner)
        }
    }

    /// Reads a plugin's `hub_service`, checking its size and mandatory fields.
    static func read(_ service: UnsafePointer<hub_service>?) throws -> hub_service {
        guard let service else { throw ServiceError.malformed("register_service: service is NULL") }
        let size = UnsafeRawPointer(service).load(as: UInt32.self)
        guard Int(size) >= minimumServiceSize else {
            throw ServiceError.malformed(
                "register_service: hub_service is \(size) bytes; ABI 1.0 needs \(minimumServiceSize)")
        }
        let s = service.pointee
        guard let id = s.interface_id, id.pointee != 0 else {
            throw ServiceError.malformed("register_service: interface_id is NULL or empty")
        }
        guard s.table != nil else {
            throw ServiceError.malformed(
                "register_service: \(TerminalText.quoted(String(cString: id))) has a NULL table")
        }
        for (what, text) in [("interface_id", String(cString: id)), ("name", CInterop.string(s.name))] {
            if let text, !(what == "name" && text.isEmpty), let problem = RegisteredName.problem(text) {
                throw ServiceError.malformed(
                    "register_service: \(what) \(TerminalText.quoted(text, limit: 60)): \(problem)")
            }
        }
        return s
    }
}
