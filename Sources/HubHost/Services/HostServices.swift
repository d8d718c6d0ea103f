import CHubPlugin
import FoundationEssentials
import HubCore
import HubInjection
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Everything service-shaped a `PluginHost` has: the C service registry plugins use through the host table, the
/// injector module-file bindings (and Swift-side bindings) live in, and the host's own services.
///
/// Attached to a plugin host on first use (`pluginHost.services`); it joins the host's unload transaction
/// through `PluginHost.unloadObservers`, so unloading a plugin revokes its services and bindings at once and
/// tells the other plugins.
///
/// # Thread safety
/// Main thread only, like `PluginHost` (the registry and injector themselves are locked).
public final class HostServices {
    public let registry = ServiceRegistry()
    /// Module-file bindings (owned by the plugin that exports the function) and any Swift bindings.
    public let injector: Injector
    /// Module-file bindings applied, with the problems of those that were not.
    public private(set) var boundFunctions: [BoundFunction] = []
    public private(set) var moduleFileProblems: [ModuleFile.Failure] = []
    /// The module files read by `loadModuleFiles`, by path, so reloaded plugins get their bindings back.
    private var moduleFiles: [String: ModuleFile] = [:]
    /// Told which binding an eager singleton is made from, just before its function is called (a probe notes it,
    /// so a crash or hang there names the module file, the binding and the symbol, not only the phase).
    public var willMakeEagerSingleton: ((_ binding: String) -> Void)?
    /// The URIs the host's default URI opener was asked to open, in order.
    public private(set) var openedURIs: [String] = []
    /// Survivors reported by unloads, newest last (also in `survivors`, while they stay alive).
    public private(set) var revocations: [Revocation] = []

    private weak var pluginHost: PluginHost?
    private let logger: Logger
    private var hostImageLoader: (String) throws -> LoadedImage
    private var hostURIOpener: ((String) -> Bool)?

    /// An image a loader returned.
    public struct LoadedImage: Equatable, Sendable {
        public var bytes: [UInt8]
        public var size: Size
        public init(bytes: [UInt8], size: Size = Size(width: 0, height: 0)) {
            self.bytes = bytes
            self.size = size
        }
    }

    public init(logger: Logger = Logger(label: "hubhost.services")) {
        self.logger = logger
        injector = try! Injector()
        hostImageLoader = HostServices.loadImageFromDisk
        registerHostServices()
    }

    // MARK: Attaching to a plugin host

    /// The services of `host`, created and hooked into its unload transaction on first use. The host keeps them
    /// (no table shared between hosts: two hosts in one process have separate services).
    static func attached(to host: PluginHost) -> HostServices {
        if let existing = host.attachedServices { return existing }
        let services = HostServices(logger: host.logger)
        services.pluginHost = host
        host.unloadObservers.append { [unowned services] record in services.revokeAll(ownedBy: record.owner) }
        host.attachedServices = services
        return services
    }

    // MARK: Ownership

    /// Revokes `owner`'s services, module-file bindings and injector bindings, and releases what it acquired;
    /// other plugins' observers are told. Returns the combined revocation (keys and survivors of both).
    @discardableResult
    public func revokeAll(ownedBy owner: Owner) -> Revocation {
        // Bindings first: revoking the services tells every observer, and an observer that calls `inject` then
        // must find the plugin's bindings gone too, not call into a plugin that is unloading.
        for function in boundFunctions where function.owner == owner { function.isRevoked = true }
        boundFunctions.removeAll { $0.owner == owner }
        let bindings = injector.revokeAll(ownedBy: owner)
        let services = registry.revokeAll(ownedBy: owner)
        var combined = Revocation(
            owner: owner, keys: (services.keys + bindings.keys).sorted(),
            survivors: services.survivors + bindings.survivors)
        combined.keys = Array(Set(combined.keys)).sorted()
        if !combined.isEmpty { revocations.append(combined) }
        for survivor in combined.survivors { logger.warning("\(survivor)") }
        return combined
    }

    /// Every registration of the registry and the injector.
    public var registrations: [RegistrationInfo] {
        (registry.registrations + injector.registrations).sorted { ($0.key, $0.owner.id) < ($1.key, $1.owner.id) }
    }

    /// Instances and acquisitions still alive after their owner was revoked.
    public var survivors: [Survivor] { registry.survivors + injector.survivors }

    // MARK: Module files

    /// Reads the module files in `folders` and binds their keys for the loaded plugins they name. Problems are
    /// returned (and kept in `moduleFileProblems`); one bad binding does not stop the others.
    @discardableResult
    public func loadModuleFiles(in folders: [URL]) -> [ModuleFile.Failure] {
        var problems: [ModuleFile.Failure] = []
        var eager: [(file: String, function: BoundFunction)] = []
        for url in ModuleFile.files(in: folders) {
            do {
                let file = try ModuleFile(contentsOf: url)
                moduleFiles[url.standardizedFileURL.path] = file
                let applied = bind(file)
                problems += file.problems + applied.problems
                eager += applied.eager.map { (file.url.path, $0) }
            } catch let failure as ModuleFile.Failure {
                problems.append(failure)
            } catch {
                problems.append(ModuleFile.Failure(file: url.path, binding: nil, reason: "\(error)"))
            }
        }
        // Once every file is bound: an eager singleton may require a key another plugin's binding provides,
        // whatever order the plugins and files come in.
        problems += makeEagerSingletons(eager)
        moduleFileProblems += problems
        return problems
    }

    /// Re-binds the module-file keys that name `record`'s file, after it was loaded again (a reload): its
    /// previous load's bindings were revoked with it. Whoever loads a plugin after `loadModuleFiles` calls this.
    @discardableResult
    public func pluginDidLoad(_ record: PluginRecord) -> [ModuleFile.Failure] {
        let folder = record.file.deletingLastPathComponent().standardizedFileURL.path
        let files = moduleFiles.values.sorted { $0.url.path < $1.url.path }
            .filter { $0.url.deletingLastPathComponent().standardizedFileURL.path == folder }
        // What was said of these bindings before (the plugin did not load, a symbol it lacked) is replaced by what
        // binding them now says: a warning that no longer holds stayed for the whole session.
        let plugin = record.file.lastPathComponent
        var rebound = Set<String>()
        for file in files {
            for binding in file.bindings where binding.plugin == plugin {
                rebound.insert(file.url.path + "\n" + binding.label)
            }
        }
        moduleFileProblems.removeAll { problem in
            problem.binding.map { rebound.contains(problem.file + "\n" + $0) } ?? false
        }
        let problems = files.flatMap { apply($0, onlyPlugin: plugin) }
        moduleFileProblems += problems
        return problems
    }

    /// Binds `file`'s keys to the plugins (loaded by this host) that export the functions. Each binding is owned
    /// by its plugin's load, so unloading the plugin revokes it.
    @discardableResult
    public func apply(_ file: ModuleFile, onlyPlugin: String? = nil) -> [ModuleFile.Failure] {
        let applied = bind(file, onlyPlugin: onlyPlugin)
        return applied.problems + makeEagerSingletons(applied.eager.map { (file.url.path, $0) })
    }

    /// Makes the eager singletons (Objection's registerEagerSingleton), once their bindings are installed.
    private func makeEagerSingletons(_ eager: [(file: String, function: BoundFunction)]) -> [ModuleFile.Failure] {
        var problems: [ModuleFile.Failure] = []
        for (file, function) in eager {
            willMakeEagerSingleton?(
                "binding \(function.binding.label) of \(PathText.fileName(file)): \(function.binding.symbol)")
            do { _ = try injector.get(key: function.binding.key) } catch {
                problems.append(.init(file: file, binding: function.binding.label, reason: "eager singleton: \(error)"))
            }
        }
        return problems
    }

    /// Installs `file`'s bindings; returns the problems and the eager singletons still to make.
    private func bind(_ file: ModuleFile, onlyPlugin: String? = nil) -> (
        problems: [ModuleFile.Failure], eager: [BoundFunction]
    ) {
        var problems: [ModuleFile.Failure] = []
        var eager: [BoundFunction] = []
        let folder = file.url.deletingLastPathComponent().standardizedFileURL.path
        var byOwner: [Owner: [BoundFunction]] = [:]
        var awakenings: [ServiceKey: FFICall] = [:]
        // Looked up per binding, so made once: a scan of every earlier binding per binding made 8,000 bindings take
        // 6.5 s, and 200,000 about an hour.
        var boundByKey: [ServiceKey: BoundFunction] = [:]
        var boundOwners: [ServiceKey: Set<Owner>] = [:]
        for function in boundFunctions {
            if !function.isRevoked { boundByKey[function.binding.key] = function }
            boundOwners[function.binding.key, default: []].insert(function.owner)
        }
        var registered: [ServiceKey: Owner] = [:]
        for registration in injector.registrations where registered[registration.key] == nil {
            registered[registration.key] = registration.owner
        }
        var boundInThisFile: [ServiceKey: String] = [:]
        for binding in file.bindings where onlyPlugin == nil || binding.plugin == onlyPlugin {
            func fail(_ reason: String) {
                problems.append(.init(file: file.url.path, binding: binding.label, reason: reason))
            }
            guard
                let record = pluginHost?.loadedPlugins.last(where: {
                    $0.file.lastPathComponent == binding.plugin
                        && $0.file.deletingLastPathComponent().standardizedFileURL.path == folder
                }), let handle = record.handle
            else {
                // A plugin that is there but did not load says why (quarantined, refused), not just that it is not.
                let refused = pluginHost?.plugins.last(where: {
                    $0.file.lastPathComponent == binding.plugin
                        && $0.file.deletingLastPathComponent().standardizedFileURL.path == folder
                })
                if let refused, !refused.isLoaded {
                    fail("plugin \(binding.plugin) did not load (\(refused.state.name)), so nothing is bound to it")
                } else {
                    fail("plugin \(binding.plugin) is not loaded from \(folder)")
                }
                continue
            }
            guard let symbol = dlsym(handle, binding.symbol) else {
                fail(
                    "symbol \(binding.symbol) not found in \(binding.plugin) (is it exported? plugins linked with the version script export only hub_plugin_entry)"
                )
                continue
            }
            // One key, one binding: a second module file (or a C service) claiming it is refused, both named.
            if let holder = boundByKey[binding.key] {
                fail(
                    "key \(binding.key) is already bound by \(holder.file) (\(holder.binding.label), \(holder.owner.displayName)); this binding is refused"
                )
                continue
            }
            // A plugin's `hub_host.bind` (or host code) holding the key: refused as well, both named.
            if let holder = registered[binding.key], boundOwners[binding.key]?.contains(holder) != true {
                fail("key \(binding.key) is already bound by \(holder.displayName); this binding is refused")
                continue
            }
            if let service = registry.provider(of: binding.key) {
                fail(
                    "key \(binding.key) is already a C service of \(service.owner.displayName); this binding is refused"
                )
                continue
            }
            if let first = boundInThisFile[binding.key] {
                fail("key \(binding.key) is bound twice in this file (\(first) first); this binding is refused")
                continue
            }
            var awoken: FFICall?
            if let name = binding.awoken {
                guard let function = dlsym(handle, name) else {
                    fail("awoken function \(name) not found in \(binding.plugin) (is it exported?)")
                    continue
                }
                awoken = try? FFICall(function: UnsafeRawPointer(function), signature: FFISignature("(ptr)->void"))
            }
            awakenings[binding.key] = awoken
            do {
                let bound = try BoundFunction(
                    file: file.url.path, binding: binding, owner: record.owner, slot: record.callSlot,
                    function: UnsafeRawPointer(symbol))
                byOwner[record.owner, default: []].append(bound)
                boundInThisFile[binding.key] = binding.label
            } catch let failure as ModuleFile.Failure {
                problems.append(failure)
            } catch {
                fail("\(error)")
            }
        }
        for (owner, functions) in byOwner.sorted(by: { $0.key.id < $1.key.id }) {
            let module = Module(owner: owner) { binder in
                for function in functions {
                    let awoken = awakenings[function.binding.key]
                    binder.bindProvider(toKey: function.binding.key, scope: function.binding.scope) {
                        injector, arguments in
                        // `requires`: resolved first; a missing one is this binding's error, naming both.
                        for required in function.binding.requires {
                            do { _ = try injector.get(key: required) } catch {
                                throw ModuleFile.Failure(
                                    file: function.file, binding: function.binding.label,
                                    reason: "requires \(required): \(error)")
                            }
                        }
                        let result = try function.invoke(arguments)
                        switch result {
                        case .pointer(nil), .string(nil), .void: return nil
                        case .pointer(let made?):
                            // `awoken`: told it was made (plugin code, named as `invoke` names it).
                            _ = try CallRecorder.duringOnMainThread(.exportedFunction, slot: function.slot) {
                                try awoken?.call(values: [.pointer(made)])
                            }
                            return result.swiftValue
                        default: return result.swiftValue
                        }
                    }
                }
            }
            do {
                try injector.install(module)
                boundFunctions += functions
                eager += functions.filter(\.binding.eager)
            } catch {
                for function in functions {
                    problems.append(.init(file: file.url.path, binding: function.binding.label, reason: "\(error)"))
                }
            }
        }
        return (problems, eager)
    }

    /// The function bound to `key` by a module file, called with `arguments` over its defaults.
    public func call(_ key: ServiceKey, arguments: [Any] = []) throws -> FFIValue {
        guard let function = boundFunctions.last(where: { $0.binding.key == key }) else {
            throw InjectionError.noBinding(key)
        }
        return try function.invoke(arguments)
    }

    // MARK: Host services

    /// Replaces the host's image loader (plugins may still shadow it with their own provider).
    public func setHostImageLoader(_ loader: @escaping (String) throws -> LoadedImage) {
        hostImageLoader = loader
    }

    /// Replaces the host's URI opener (the default records the URI in `openedURIs` and reports it handled).
    public func setHostURIOpener(_ opener: ((String) -> Bool)?) { hostURIOpener = opener }

    /// Opens `uri` through whoever provides HUB_SERVICE_URI_OPENER now (a plugin, or the host).
    public func openURI(_ uri: String) -> Result<Bool, ServiceError> {
        withService(HUB_SERVICE_URI_OPENER, as: hub_uri_opener_service.self) { table, context in
            guard let open = table.pointee.open else { return false }
            return uri.withCString { open(context, $0) }
        }
    }

    /// Loads `uri` through whoever provides HUB_SERVICE_IMAGE_LOADER now.
    public func loadImage(_ uri: String) -> Result<LoadedImage, ServiceError> {
        let result: Result<Result<LoadedImage, ServiceError>, ServiceError> =
            withService(HUB_SERVICE_IMAGE_LOADER, as: hub_image_loader_service.self) { table, context in
                guard let load = table.pointee.load else {
                    return .failure(.malformed("the image loader has no load function"))
                }
                var image = hub_loaded_image()
                image.struct_size = UInt32(MemoryLayout<hub_loaded_image>.size)
                var error = [CChar](repeating: 0, count: 512)
                let ok = uri.withCString { load(context, $0, &image, &error, error.count) }
                guard ok else { return .failure(.malformed("cannot load \(uri): \(CInterop.errorText(error))")) }
                // A length the loader made up (SIZE_MAX) must not become a read of the whole address space.
                guard image.length >= 0, image.length <= ImageAccess.defaultMaxBytes * 10 else {
                    return .failure(.malformed("cannot load \(uri): the image loader returned \(image.length) bytes"))
                }
                let bytes = image.bytes.map { Array(UnsafeBufferPointer(start: $0, count: image.length)) } ?? []
                return .success(
                    LoadedImage(bytes: bytes, size: Size(width: image.size.width, height: image.size.height)))
            }
        return result.flatMap { $0 }
    }

    /// Acquires `id` for the host, calls `body` with its table, releases it.
    private func withService<Table, R>(
        _ id: String, as table: Table.Type,
        _ body: (UnsafePointer<Table>, UnsafeMutableRawPointer?) -> R
    ) -> Result<R, ServiceError> {
        registry.acquire(ServiceKey(id: id), minVersion: 1, consumer: .host).map { entry in
            defer { registry.release(entry, consumer: .host) }
            return body(entry.table!.assumingMemoryBound(to: Table.self), entry.context)
        }
    }

    /// The host's own providers, shadowable by one plugin each. Their contexts point at this object.
    private func registerHostServices() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        func register(_ id: String, _ table: UnsafeRawPointer) {
            _ = try? registry.register(
                ServiceKey(id: id), version: 1, owner: .host, table: table, context: context,
                shadowable: true)
        }
        register(HUB_SERVICE_URI_OPENER, UnsafeRawPointer(HostServiceTables.uriOpener))
        register(HUB_SERVICE_IMAGE_LOADER, UnsafeRawPointer(HostServiceTables.imageLoader))
        register(HUB_SERVICE_LOGGER, UnsafeRawPointer(HostServiceTables.logger))
    }

    fileprivate static func from(_ context: UnsafeMutableRawPointer?) -> HostServices {
        Unmanaged<HostServices>.fromOpaque(context!).takeUnretainedValue()
    }

    fileprivate func open(_ uri: String) -> Bool {
        if let hostURIOpener { return hostURIOpener(uri) }
        openedURIs.append(uri)
        return true
    }

    fileprivate var lastImage: [UInt8] = []

    fileprivate func load(_ uri: String) -> Result<LoadedImage, Error> { Result { try hostImageLoader(uri) } }

    /// The logger service: a plugin's message goes where its `hub_host.log` lines go, under its name, when the
    /// call is made from inside one of its calls (the context is shared, so the call in progress names it).
    fileprivate func log(_ level: hub_log_level, _ message: String) {
        if Threads.isMainThread, let slot = CallRecorder.currentSlot,
            let record = pluginHost?.plugins.first(where: { $0.callSlot == slot && $0.codeCallable })
        {
            HostTable.pluginLog(record, level, message)
            return
        }
        logger.log(level: HostTable.logLevel(level), "\(TerminalText.escaped(message, limit: 2000))")
    }

    /// The default image loader: `file://` URIs and plain paths, read from disk.
    static func loadImageFromDisk(_ uri: String) throws -> LoadedImage {
        let path: String
        if uri.hasPrefix("file://") {
            path = URL(string: uri)?.path ?? String(uri.dropFirst(7))
        } else if uri.hasPrefix("/") {
            path = uri
        } else {
            throw ServiceError.malformed("the host image loader reads only file URIs, not \(uri)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServiceError.malformed("cannot read \(path)")
        }
        return LoadedImage(bytes: Array(data))
    }
}

extension PluginHost {
    /// This host's services: the C service registry, the injector, module files, host services.
    public var services: HostServices { HostServices.attached(to: self) }
}

/// The C tables of the host's own services; their functions find the `HostServices` through the context.
enum HostServiceTables {
    static let uriOpener: UnsafeMutablePointer<hub_uri_opener_service> = {
        let table = UnsafeMutablePointer<hub_uri_opener_service>.allocate(capacity: 1)
        table.initialize(
            to: hub_uri_opener_service(
                struct_size: UInt32(MemoryLayout<hub_uri_opener_service>.size),
                open: { context, uri in HostServices.from(context).open(uri.map { String(cString: $0) } ?? "") }))
        return table
    }()

    static let imageLoader: UnsafeMutablePointer<hub_image_loader_service> = {
        let table = UnsafeMutablePointer<hub_image_loader_service>.allocate(capacity: 1)
        table.initialize(
            to: hub_image_loader_service(
                struct_size: UInt32(MemoryLayout<hub_image_loader_service>.size),
                load: { context, uri, out, errorBuffer, capacity in
                    let services = HostServices.from(context)
                    switch services.load(uri.map { String(cString: $0) } ?? "") {
                    case .success(let image):
                        // The bytes stay valid until the next load on this context (the header's rule).
                        services.lastImage = image.bytes
                        guard let out else { return true }
                        services.lastImage.withUnsafeBufferPointer { buffer in
                            out.pointee.bytes = buffer.baseAddress
                            out.pointee.length = buffer.count
                        }
                        out.pointee.size = hub_size(width: image.size.width, height: image.size.height)
                        return true
                    case .failure(let reason):
                        CInterop.writeError("\(reason)", errorBuffer, capacity)
                        return false
                    }
                }))
        return table
    }()

    static let logger: UnsafeMutablePointer<hub_logger_service> = {
        let table = UnsafeMutablePointer<hub_logger_service>.allocate(capacity: 1)
        table.initialize(
            to: hub_logger_service(
                struct_size: UInt32(MemoryLayout<hub_logger_service>.size),
                log: { context, level, message in
                    HostServices.from(context).log(level, message.map { String(cString: $0) } ?? "")
                }))
        return table
    }()
}
