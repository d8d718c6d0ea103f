import CHubPlugin
import FoundationEssentials
import HubCore
import HubInjection

#if canImport(Glibc)
    import Glibc
#endif

/// `hub_host.inject` (ABI 1.1): a plugin resolves an injector key (a binding a module file declares, or one host
/// Swift code installed) and gets what it produced, with the binding's scope honoured.
enum InjectBridge {
    static func install(into table: inout hub_host) {
        table.inject = { host, key, name, arguments, out, errorBuffer, capacity in
            InjectBridge.inject(host, key, name, arguments, out, errorBuffer, capacity)
        }
        table.bind = { host, key, name, provider, userData, singleton, errorBuffer, capacity in
            InjectBridge.bind(host, key, name, provider, userData, singleton, errorBuffer, capacity)
        }
    }

    /// `hub_host.bind`: a plugin's provider under an injector key, owned by its load.
    static func bind(
        _ host: UnsafePointer<hub_host>?, _ key: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
        _ provider: hub_provider_fn?, _ userData: UnsafeMutableRawPointer?, _ singleton: Bool,
        _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
    ) -> Bool {
        guard let (record, pluginHost) = HostTable.resolve(host) else {
            CInterop.writeError("bind: the plugin is not loaded", errorBuffer, capacity)
            return false
        }
        if HostTable.refusesWhileUnloading("bind", record, errorBuffer, capacity) { return false }
        guard let key = CInterop.string(key), !key.isEmpty, let provider else {
            CInterop.writeError("bind: key and provider must not be NULL", errorBuffer, capacity)
            return false
        }
        let serviceKey = ServiceKey(id: key, name: CInterop.string(name))
        let services = pluginHost.services
        let holder = services.injector.registrations.first(where: { $0.key == serviceKey })
        let module = providerModule(serviceKey, provider, userData, singleton, for: record)
        let install = { try services.injector.install(module) }
        // A new version loading beside the old one (hot reload): held until the old one is unloaded, as its
        // services and namespaces are (the old version's binding goes with it). Once: a second bind of the key in
        // the same init is refused, as on a fresh load.
        func refuse(boundBy holderName: String) -> Bool {
            CInterop.writeError(
                "bind \(serviceKey): already bound by \(holderName); \(record.displayName) cannot bind it again",
                errorBuffer, capacity)
            return false
        }
        if HotSwap.holds(record, "binding \(serviceKey)") { return refuse(boundBy: record.displayName) }
        if HotSwap.hold(record, "binding \(serviceKey)", takenBy: holder?.owner, apply: install) { return true }
        if let holder { return refuse(boundBy: holder.owner.displayName) }
        do { try install() } catch {
            CInterop.writeError("bind \(serviceKey): \(error)", errorBuffer, capacity)
            return false
        }
        return true
    }

    /// The module holding `provider` under `serviceKey`, owned by `record`'s load.
    private static func providerModule(
        _ serviceKey: ServiceKey, _ provider: @escaping hub_provider_fn, _ userData: UnsafeMutableRawPointer?,
        _ singleton: Bool, for record: PluginRecord
    ) -> Module {
        let data = userData
        return Module(owner: record.owner) { binder in
            binder.bindProvider(toKey: serviceKey, scope: singleton ? .singleton : .normal) { _, arguments in
                guard record.codeCallable else { throw InjectionError.revoked(serviceKey, owner: record.displayName) }
                var out = hub_value()
                out.struct_size = UInt32(MemoryLayout<hub_value>.size)
                var error = [CChar](repeating: 0, count: 512)
                let json = JSONValue.array(arguments.map(InjectBridge.jsonValue)).jsonText
                // A string result is copied before anything else, still inside the call's scope: a provider may
                // hand back the arguments it was given, which live only as long as the call (read after it, the
                // first result was garbage).
                var copied: String?
                let ok = CallRecorder.during(.provider, slot: record.callSlot) {
                    json.withCString { arguments in
                        let ok = provider(data, arguments, &out, &error, error.count)
                        if ok, out.type == HUB_VALUE_STRING { copied = out.s.map { String(cString: $0) } }
                        return ok
                    }
                }
                guard ok else {
                    throw InjectionError.providerFailed(
                        serviceKey, message: "\(record.displayName): \(CInterop.errorText(error))")
                }
                switch out.type {
                case HUB_VALUE_INT: return out.i
                case HUB_VALUE_DOUBLE: return out.d
                case HUB_VALUE_STRING: return copied
                case HUB_VALUE_POINTER: return out.p
                default: return nil
                }
            }
        }
    }

    /// A caller's argument as JSON for a plugin's provider.
    static func jsonValue(_ value: Any) -> JSONValue {
        switch value {
        case let v as Int64: return .number(Double(v))
        case let v as Int: return .number(Double(v))
        case let v as Double: return .number(v)
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        default: return .null
        }
    }

    static func inject(
        _ host: UnsafePointer<hub_host>?, _ key: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
        _ arguments: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<hub_value>?,
        _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
    ) -> Bool {
        // A cached singleton or bound instance asked for again without arguments: no trip through the injector.
        let noArguments = arguments == nil || arguments![0] == 0 || strcmp(arguments!, "[]") == 0
        if noArguments, let key, let out, let record = HostTable.record(host), record.codeCallable,
            let cached = record.injectCache.lookup(key, name)
        {
            copy(cached, to: out)
            return true
        }
        guard let (record, pluginHost) = HostTable.resolve(host) else {
            CInterop.writeError("inject: the plugin is not loaded", errorBuffer, capacity)
            return false
        }
        guard let key, key[0] != 0, let out else {
            CInterop.writeError("inject: key and out must not be NULL", errorBuffer, capacity)
            return false
        }
        let serviceKey = ServiceKey(id: String(cString: key), name: CInterop.string(name))
        let parsed: [Any]
        switch parseArguments(CInterop.string(arguments)) {
        case .success(let values): parsed = values
        case .failure(let problem):
            CInterop.writeError("inject \(serviceKey): \(problem)", errorBuffer, capacity)
            return false
        }
        let injector = pluginHost.services.injector
        let generation = injector.generation.value
        do {
            let (value, reusable) = try injector.resolveForReuse(key: serviceKey, arguments: parsed)
            var result = hubValue(value, record: record)
            if reusable {
                result = record.injectCache.store(
                    result, key: key, name: name, generation: injector.generation, thread: pluginHost.mainThread,
                    at: generation)
            }
            copy(result, to: out)
            return true
        } catch {
            CInterop.writeError("inject \(serviceKey): \(error)", errorBuffer, capacity)
            return false
        }
    }

    struct ArgumentError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func parseArguments(_ text: String?) -> Result<[Any], ArgumentError> {
        guard let text, !text.isEmpty else { return .success([]) }
        guard case .array(let items)? = try? JSONValue.parse(text) else {
            return .failure(
                ArgumentError("arguments_json must be a JSON array, got \(TerminalText.quoted(text, limit: 60))"))
        }
        var values: [Any] = []
        for (position, item) in items.enumerated() {
            switch item {
            case .number(let n):
                values.append(n == n.rounded() && abs(n) < 9.0e15 ? Int64(n) as Any : n as Any)
            case .string(let s): values.append(s)
            case .null: values.append(Optional<String>.none as Any)
            case .bool(let b): values.append(Int64(b ? 1 : 0))
            default:
                return .failure(
                    ArgumentError(
                        "argument \(position + 1) is \(item.typeDescription); numbers, strings and null are allowed"))
            }
        }
        return .success(values)
    }

    /// `value` as a `hub_value`; a string is copied into the record (valid until the plugin's next `inject`).
    static func hubValue(_ value: Any?, record: PluginRecord) -> hub_value {
        var result = hub_value()
        result.struct_size = UInt32(MemoryLayout<hub_value>.size)
        switch value {
        case let v as Int64: (result.type, result.i) = (HUB_VALUE_INT, v)
        case let v as UInt64: (result.type, result.i) = (HUB_VALUE_INT, Int64(bitPattern: v))
        case let v as Int: (result.type, result.i) = (HUB_VALUE_INT, Int64(v))
        case let v as Double: (result.type, result.d) = (HUB_VALUE_DOUBLE, v)
        case let v as String:
            free(record.injectString)
            record.injectString = strdup(v)
            (result.type, result.s) = (HUB_VALUE_STRING, UnsafePointer(record.injectString))
        case let v as UnsafeMutableRawPointer: (result.type, result.p) = (HUB_VALUE_POINTER, v)
        case let v as OpaquePointer: (result.type, result.p) = (HUB_VALUE_POINTER, UnsafeMutableRawPointer(v))
        default: result.type = HUB_VALUE_NONE
        }
        return result
    }

    /// Copies `value` into `out`, touching only the members the caller's struct_size covers.
    @inline(__always)
    static func copy(_ value: hub_value, to out: UnsafeMutablePointer<hub_value>) {
        let declared = Int(UnsafeRawPointer(out).load(as: UInt32.self))
        if declared >= MemoryLayout<hub_value>.size {
            out.pointee = value
            out.pointee.struct_size = UInt32(declared)
            return
        }
        withUnsafeBytes(of: value) { bytes in
            UnsafeMutableRawPointer(out).copyMemory(from: bytes.baseAddress!, byteCount: max(declared, 0))
        }
        // struct_size stays the caller's.
        UnsafeMutableRawPointer(out).storeBytes(of: UInt32(declared), as: UInt32.self)
    }
}
