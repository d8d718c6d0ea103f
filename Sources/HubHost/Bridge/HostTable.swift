import CHubPlugin
import FoundationEssentials
import HubCore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Builds the `hub_host` table each plugin gets in `init`. Every function finds the calling plugin's record
/// through `host_data`, so whatever the plugin registers is owned by that record.
///
/// C function pointers cannot capture, so each entry is a non-capturing closure that resolves the record first.
enum HostTable {
    static let hostVersion = UnsafePointer(strdup("hubhost \(HostVersion.version)")!)

    /// A table for `record`, allocated for the life of the load (freed by the host after `deinit`).
    static func make(for record: PluginRecord) -> UnsafeMutablePointer<hub_host> {
        var table = hub_host()
        table.struct_size = UInt32(MemoryLayout<hub_host>.size)
        table.abi = hub_version(major: HUB_ABI_MAJOR, minor: HUB_ABI_MINOR)
        table.host_data = Unmanaged.passUnretained(record).toOpaque()
        table.host_version = hostVersion

        table.register_component_factory = { host, namespace, factory, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host), let namespace = CInterop.string(namespace),
                let factory
            else {
                CInterop.writeError(
                    HostTable.refusal(
                        "register_component_factory", host,
                        nulls: [("namespace_", namespace == nil), ("factory", factory == nil)]),
                    errorBuffer, capacity)
                return false
            }
            if HostTable.refusesWhileUnloading("register_component_factory \(namespace)", record, errorBuffer, capacity)
            {
                return false
            }
            if let problem = CInterop.shortTableProblem(factory, "hub_component_factory") {
                return HostTable.refuse(
                    "register_component_factory \(namespace): \(problem)", record, errorBuffer, capacity)
            }
            // Hot reload: a new version loading beside the old one gets the old one's namespace after the swap.
            if HotSwap.hold(
                record, "namespace \(namespace)", takenBy: pluginHost.registry.entry(forNamespace: namespace)?.owner,
                apply: { try pluginHost.registerComponentFactory(factory, namespace: namespace, for: record) })
            {
                return true
            }
            do {
                try pluginHost.registerComponentFactory(factory, namespace: namespace, for: record)
                return true
            } catch {
                if let holder = pluginHost.registry.entry(forNamespace: namespace)?.owner, holder != record.owner {
                    record.contestedClaims.append((namespace, holder))
                }
                record.warnings.append("\(error)")
                CInterop.writeError("\(error)", errorBuffer, capacity)
                return false
            }
        }
        table.unregister_component_factory = { host, namespace in
            guard let (record, pluginHost) = HostTable.resolve(host), let namespace = CInterop.string(namespace) else {
                return
            }
            // From inside a call into one of its own components, it takes effect when that call has returned.
            CallRecorder.afterCurrentCalls(of: record.callSlot) { [weak pluginHost] in
                pluginHost?.registry.unregister(namespace: namespace, owner: record.owner)
            }
        }
        table.log = { host, level, message in
            guard let data = host?.pointee.host_data, let message else { return }
            let record = Unmanaged<PluginRecord>.fromOpaque(data).takeUnretainedValue()
            HostTable.pluginLog(record, level, String(cString: message))
        }

        // Models and text measurement: the hot path, in ModelBridge.swift.
        ModelBridge.install(into: &table)

        table.register_layout_manager = { host, id, manager, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host), let id = CInterop.string(id), let manager else {
                CInterop.writeError(
                    HostTable.refusal(
                        "register_layout_manager", host, nulls: [("id", id == nil), ("manager", manager == nil)]),
                    errorBuffer, capacity)
                return false
            }
            if HostTable.refusesWhileUnloading("register_layout_manager \(id)", record, errorBuffer, capacity) {
                return false
            }
            if HotSwap.hold(
                record, "layout manager \(id)", takenBy: pluginHost.layoutManagers.entry(forKey: id)?.owner,
                apply: {
                    try pluginHost.layoutManagers.register(
                        PluginLayoutManager(manager, record: record), forKey: id, owner: record.owner)
                })
            {
                return true
            }
            do {
                try pluginHost.layoutManagers.register(
                    PluginLayoutManager(manager, record: record), forKey: id,
                    owner: record.owner)
                return true
            } catch {
                record.warnings.append("\(error)")
                CInterop.writeError("\(error)", errorBuffer, capacity)
                return false
            }
        }
        table.register_action_factory = { host, namespace, factory, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host), let namespace = CInterop.string(namespace),
                let factory
            else {
                CInterop.writeError(
                    HostTable.refusal(
                        "register_action_factory", host,
                        nulls: [("namespace_", namespace == nil), ("factory", factory == nil)]),
                    errorBuffer, capacity)
                return false
            }
            if HostTable.refusesWhileUnloading("register_action_factory \(namespace)", record, errorBuffer, capacity) {
                return false
            }
            if let problem = CInterop.shortTableProblem(factory, "hub_action_factory") {
                return HostTable.refuse(
                    "register_action_factory \(namespace): \(problem)", record, errorBuffer, capacity)
            }
            if HotSwap.hold(
                record, "action namespace \(namespace)",
                takenBy: pluginHost.actionFactories.entry(forKey: namespace)?.owner,
                apply: {
                    try pluginHost.actionFactories.register(
                        PluginActionFactory(factory, record: record), forKey: namespace,
                        owner: record.owner)
                })
            {
                return true
            }
            do {
                try pluginHost.actionFactories.register(
                    PluginActionFactory(factory, record: record),
                    forKey: namespace, owner: record.owner)
                return true
            } catch {
                if let holder = pluginHost.actionFactories.entry(forKey: namespace)?.owner, holder != record.owner {
                    record.contestedClaims.append(("action namespace " + namespace, holder))
                }
                record.warnings.append("\(error)")
                CInterop.writeError("\(error)", errorBuffer, capacity)
                return false
            }
        }
        table.unregister_action_factory = { host, namespace in
            guard let (record, pluginHost) = HostTable.resolve(host), let namespace = CInterop.string(namespace) else {
                return
            }
            pluginHost.actionFactories.unregister(key: namespace, owner: record.owner)
        }
        table.register_action_handler = { host, handler, errorBuffer, capacity in
            guard let (record, pluginHost) = HostTable.resolve(host), let handler else {
                CInterop.writeError(
                    HostTable.refusal("register_action_handler", host, nulls: [("handler", handler == nil)]),
                    errorBuffer,
                    capacity)
                return false
            }
            if HostTable.refusesWhileUnloading("register_action_handler", record, errorBuffer, capacity) {
                return false
            }
            if let problem = CInterop.shortTableProblem(handler, "hub_action_handler") {
                return HostTable.refuse("register_action_handler: \(problem)", record, errorBuffer, capacity)
            }
            pluginHost.addActionHandler(PluginActionHandler(handler, record: record), owner: record.owner)
            return true
        }
        table.schedule = { host, seconds, fn, userData in
            guard let (record, pluginHost) = HostTable.resolve(host), let fn,
                !HostTable.refusesWhileUnloading("schedule", record, nil, 0)
            else { return }
            let delay = BoundaryValues.seconds(seconds, record: record, call: "schedule")
            pluginHost.scheduler.schedule(after: delay, owner: record.owner) { [weak record] in
                // Timers of an unloaded plugin are cancelled; this guards against any left behind.
                guard let record, record.codeCallable else { return }
                CallRecorder.during(.timer, slot: record.callSlot) { fn(userData) }
            }
        }

        ServiceBridge.install(into: &table)
        InjectBridge.install(into: &table)

        let pointer = UnsafeMutablePointer<hub_host>.allocate(capacity: 1)
        pointer.initialize(to: table)
        return pointer
    }

    /// A plugin's log line (`hub_host.log`, or the logger service called from its code): to the dev loop's page
    /// and to its logger, under its name.
    static func pluginLog(_ record: PluginRecord, _ level: hub_log_level, _ message: String) {
        let level = logLevel(level)
        if let listener = record.host?.onPluginLog {
            listener(record, level, TerminalText.escaped(message, limit: 2000))
        }
        guard level >= record.logger.logLevel else { return }
        record.logger.log(level: level, "\(TerminalText.escaped(message, limit: 2000))", source: "plugin")
    }

    /// True, with the reason written, when `record` is unloading: what it registers then (in `deinit`) would
    /// outlive it (a service acquired after its image was closed crashed its consumer).
    static func refusesWhileUnloading(
        _ what: String, _ record: PluginRecord, _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
    ) -> Bool {
        guard record.isUnloading else { return false }
        _ = refuse("\(what): refused while the plugin unloads (it would outlive it)", record, errorBuffer, capacity)
        return true
    }

    /// Refuses a registration: the reason becomes one of the plugin's warnings and its error text; returns false.
    static func refuse(
        _ reason: String, _ record: PluginRecord, _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
    ) -> Bool {
        record.warnings.append(reason)
        CInterop.writeError(reason, errorBuffer, capacity)
        return false
    }

    /// Tables of closed images, kept: a plugin may call through its table after its unload (a thread it did not
    /// stop, a thread-local or static destructor run at exit), and freed memory made that call crash the host in
    /// its own code. Emptied (`host_data` NULL), the table refuses every call as "not loaded". 224 bytes a closed
    /// image.
    private static let retired = Locked<[UnsafeMutablePointer<hub_host>]>([])

    static func retire(_ table: UnsafeMutablePointer<hub_host>) {
        table.pointee.host_data = nil
        retired.withLock { $0.append(table) }
    }

    /// Why `function` refused a call `resolve` or an argument check turned down: the host table, the plugin's
    /// state, the thread, or the first NULL argument of `nulls` (each a name and whether it is NULL).
    static func refusal(
        _ function: String, _ host: UnsafePointer<hub_host>?, nulls: [(String, Bool)]
    ) -> String {
        guard let host else { return "\(function): host is NULL" }
        if resolve(host) != nil { return "\(function): \(nulls.first { $0.1 }?.0 ?? "an argument") is NULL" }
        // `resolve` turned it down: unloaded (or a retired table), or off the main thread.
        let record = host.pointee.host_data.map { Unmanaged<PluginRecord>.fromOpaque($0).takeUnretainedValue() }
        guard let record, record.codeCallable, record.host != nil else {
            return "\(function): the plugin is not loaded (its unload has finished)"
        }
        return "\(function): called from another thread than the host's main thread"
    }

    /// The calling plugin's record and host, when it is still allowed to call: loaded, and on the host's main
    /// thread. A [main-thread] function called from another thread is refused (the bridge's state has no locks, as
    /// the header promises plugins one thread), and the log says so once per plugin, naming it.
    static func resolve(_ host: UnsafePointer<hub_host>?) -> (PluginRecord, PluginHost)? {
        guard let data = host?.pointee.host_data else { return nil }
        let record = Unmanaged<PluginRecord>.fromOpaque(data).takeUnretainedValue()
        guard record.codeCallable, let pluginHost = record.host else { return nil }
        guard pthread_equal(pthread_self(), pluginHost.mainThread) != 0 else {
            refuseOffThread(record)
            return nil
        }
        return (record, pluginHost)
    }

    /// Says once per plugin that it called a [main-thread] function from another thread. On the plugin's thread:
    /// only the record's own locked flag and the (thread-safe) logger are touched.
    private static func refuseOffThread(_ record: PluginRecord, _ function: StaticString? = nil) {
        if record.offThreadCalls.withLock({ told in
            defer { told = true }
            return !told
        }) {
            let name = record.file.lastPathComponent
            let what = function.map { "\($0), a [main-thread] host function," } ?? "a [main-thread] host function"
            let line = "\(name) called \(what) from another thread; the call was refused"
            record.logger.error("\(line)")
            BoundaryValues.offThreadCall.withLock { first in if first == nil { first = "hubhost: " + line } }
        }
    }

    /// A host thread seen last: the model readers' check costs one comparison on it. Only ever a live host's main
    /// thread, so a plugin's own thread never matches it: forgotten when that host goes or moves to another thread
    /// (a thread that ends may see its `pthread_t` given to the next one started, a plugin's among them).
    nonisolated(unsafe) private static var knownHostThread = pthread_t()

    /// `thread` is no longer a host's main thread.
    static func forgetHostThread(_ thread: pthread_t) {
        if pthread_equal(thread, knownHostThread) != 0 { knownHostThread = pthread_t() }
    }

    /// Whether a model reader (`model_*`, [main-thread], called several times per component) is called on its
    /// host's thread; when not, it is refused and said once, as `resolve` does (a model read while the host
    /// changes it could crash the host).
    @inline(__always)
    static func onHostThread(_ host: UnsafePointer<hub_host>?, _ function: StaticString) -> Bool {
        let me = pthread_self()
        if pthread_equal(me, knownHostThread) != 0 { return true }
        return onHostThreadSlowly(host, me, function)
    }

    @inline(never)
    private static func onHostThreadSlowly(
        _ host: UnsafePointer<hub_host>?, _ me: pthread_t, _ function: StaticString
    ) -> Bool {
        guard let record = record(host), let pluginHost = record.host else { return true }
        if pthread_equal(me, pluginHost.mainThread) != 0 {
            knownHostThread = me
            return true
        }
        refuseOffThread(record, function)
        return false
    }

    static func record(_ host: UnsafePointer<hub_host>?) -> PluginRecord? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<PluginRecord>.fromOpaque(data).takeUnretainedValue()
    }

    static func logLevel(_ level: hub_log_level) -> Logger.Level {
        switch level {
        case HUB_LOG_TRACE: return .trace
        case HUB_LOG_DEBUG: return .debug
        case HUB_LOG_INFO: return .info
        case HUB_LOG_WARNING: return .warning
        default: return .error
        }
    }

    /// `body` on the string of `field`, nil when the model has none. The model's own strings are handed over
    /// borrowed: returning one made a copy to retain and release on each of a plugin's most frequent calls.
    @inline(__always)
    static func withModelString<R>(_ model: ComponentModel, _ field: hub_model_field, _ body: (String) -> R) -> R? {
        switch field {
        case HUB_MODEL_ID: return body(model.identifier)
        case HUB_MODEL_COMPONENT_ID: return body(model.componentIdentifier.description)
        case HUB_MODEL_COMPONENT_NAMESPACE: return body(model.componentIdentifier.namespace)
        case HUB_MODEL_COMPONENT_NAME: return body(model.componentIdentifier.name)
        case HUB_MODEL_CATEGORY: return body(model.componentCategory)
        case HUB_MODEL_TITLE: if let title = model.title { return body(title) }
        case HUB_MODEL_SUBTITLE: if let subtitle = model.subtitle { return body(subtitle) }
        case HUB_MODEL_ACCESSORY: if let accessory = model.accessoryTitle { return body(accessory) }
        case HUB_MODEL_DESCRIPTION: if let description = model.descriptionText { return body(description) }
        case HUB_MODEL_GROUP: if let group = model.groupIdentifier { return body(group) }
        case HUB_MODEL_TARGET_URI: if let uri = model.target?.uri { return body(uri) }
        default: break
        }
        return nil
    }
}
