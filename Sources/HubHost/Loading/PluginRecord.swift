import CHubPlugin
import FoundationEssentials
import HubCore
import Logging

/// One plugin file the host has seen: loaded, rejected or unloaded. It owns everything the plugin registered
/// (component namespaces, layout managers, action factories and handlers, services, timers) and tracks the live
/// components made by its factories, so unloading it revokes exactly its own.
///
/// # Thread safety
/// Main thread only, like the rest of the host.
public final class PluginRecord {
    public enum State: Equatable, Sendable, CustomStringConvertible {
        /// Loaded and serving (a C image: can be unloaded with `dlclose`).
        case active
        /// Loaded and serving, a Swift image loaded `RTLD_NODELETE`: it can be retired but never unmapped.
        case pinned
        /// A Swift image whose registrations were revoked; its code stays mapped for the process's lifetime.
        case retired
        /// Never loaded, or its `init` failed; the reason says why.
        case rejected(String)
        /// Unloaded and (as far as the host could verify) unmapped.
        case unloaded
        /// Never loaded here because its probe (in a child process) crashed, hung or failed; see `QuarantineRecord`.
        case quarantined(String)

        /// "active", "pinned", "retired", "rejected", "unloaded".
        public var name: String {
            switch self {
            case .active: return "active"
            case .pinned: return "pinned"
            case .retired: return "retired"
            case .rejected: return "rejected"
            case .unloaded: return "unloaded"
            case .quarantined: return "quarantined"
            }
        }
        public var description: String { name }
    }

    /// The file as discovered (not the private copy).
    public let file: URL
    public internal(set) var state: State
    /// Plugin id ("com.example.rows"), name, version and description from its descriptor; nil until read.
    public internal(set) var id: String?
    public internal(set) var name: String?
    public internal(set) var version: String?
    public internal(set) var pluginDescription: String?
    /// The ABI the plugin was built for, "1.0"; nil until read.
    public internal(set) var abi: String?
    /// The content digest of the file (`ContentDigest`, 32 hex digits), when it could be read.
    public internal(set) var contentHash: String?
    /// True when the image carries Swift metadata (loaded `RTLD_NODELETE`, never `dlclose`d).
    public internal(set) var isSwiftImage = false
    /// The private copy the image was loaded from.
    public internal(set) var privateCopy: URL?
    /// When the load finished (wall clock) and how long it took (copy, open, init, register), for the preview.
    public internal(set) var loadedAt: Date?
    public internal(set) var loadDuration: Double?
    /// Quarantined because its probe crashed, hung or exited during this load, rather than by a verdict an
    /// earlier run left in the probe cache: the command reports a plugin fault (exit 5), not just a rejection.
    public internal(set) var faultedThisRun = false
    /// What hubhost put right after the plugin loaded (process-wide state it changed: `ProcessStateGuard`): said,
    /// but not a problem of the run, as the output is not affected.
    public internal(set) var notes: [String] = []
    /// What its loading changed in the process that could not be put back (a file size limit lowered for good): the
    /// probe fails such a plugin, as every process it loads into would be damaged.
    public internal(set) var damagedProcess: String?
    /// For a quarantined file: the namespace of the component it faulted in, when known.
    public internal(set) var quarantinedNamespace: String?
    /// Non-fatal problems: registrations the host refused, and what unload found.
    public internal(set) var warnings: [String] = []
    /// Whether the plugin was already told that it called the host from another thread (set from that thread).
    let offThreadCalls = LockedFlag()
    /// Namespaces this plugin claimed while another plugin held them (`NamespaceContests` settles them).
    var contestedClaims: [(namespace: String, holder: Owner)] = []
    /// Who owns this load's registrations; unique per load.
    public internal(set) var owner: Owner

    /// Why the plugin is not loaded (its rejection reason), or nil.
    public var reason: String? {
        switch state {
        case .rejected(let why), .quarantined(let why): return why
        default: return nil
        }
    }
    /// True while its code may serve (active or pinned).
    public var isLoaded: Bool { state == .active || state == .pinned }

    // MARK: Host-side bookkeeping

    weak var host: PluginHost?
    /// Where `CallRecorder` notes calls into this plugin (0 until it is initialised).
    var callSlot: UInt16 = 0
    /// True while its `init` runs: service registrations wait in `heldRegistrations` until it returned true.
    var holdsRegistrations = false
    var heldRegistrations: [(what: String, apply: () throws -> Void)] = []
    /// The string result of this plugin's last `inject` (valid until its next one, as the header says).
    var injectString: UnsafeMutablePointer<CChar>?
    /// The singletons and bound instances this plugin resolved through `inject`, for its next asks.
    let injectCache = InjectCache()
    var handle: UnsafeMutableRawPointer?
    var descriptor: UnsafePointer<hub_plugin_descriptor>?
    /// The plugin's own `hub_host` table; `host_data` points back at this record.
    var hostTable: UnsafeMutablePointer<hub_host>?
    /// Set while the plugin's code can be called (from `dlopen` until unload starts).
    var codeCallable = false
    /// Set as its unload starts: what it registers from then on (in `deinit`) would outlive it, so it is refused.
    var isUnloading = false
    /// Component factories by namespace.
    var componentFactories: [String: PluginComponentFactory] = [:]
    /// Live components made by its factories, weakly held (the render pipeline owns them).
    private var liveComponents: [ObjectIdentifier: WeakComponent] = [:]
    /// The host logger with `plugin: <id>` metadata once the id is known; plugin `log` calls go here. Made on
    /// first use: setting metadata re-renders a stream handler's metadata, which showed over hundreds of loads.
    lazy var logger: Logger = {
        var logger = hostLogger
        if let id { logger[metadataKey: "plugin"] = "\(id)" }
        // A plugin's warnings and errors are for its author: shown even when the host logs only its own errors.
        logger.logLevel = min(logger.logLevel, .warning)
        return logger
    }()
    private let hostLogger: Logger
    /// `file.path` and `file.lastPathComponent`, kept (URL computes them on every call).
    let filePath: String
    let fileName: String

    /// A record owned by the file's path until the plugin's identity is known.
    init(file: URL, logger: Logger) {
        self.file = file
        let path = file.path
        filePath = path
        fileName = PathText.fileName(path)
        owner = Owner(id: path, displayName: fileName)
        state = .rejected("not loaded yet")
        hostLogger = logger
    }

    /// The namespaces it registered, sorted, with their component names (sorted).
    public var namespaces: [(namespace: String, components: [String])] {
        componentFactories.keys.sorted().map { ($0, componentFactories[$0]!.componentNames.sorted()) }
    }

    /// The number of live components made by its factories.
    public var liveComponentCount: Int {
        liveComponents.values.filter { $0.component != nil }.count
    }

    /// "com.example.rows 1.2.0 (librows.so)", or the file name before the descriptor is read.
    public var displayName: String {
        guard let id else { return file.lastPathComponent }
        return "\(id) \(version ?? "?") (\(file.lastPathComponent))"
    }

    func track(_ component: PluginComponent) {
        liveComponents[ObjectIdentifier(component)] = WeakComponent(component: component)
    }

    func untrack(_ component: PluginComponent) {
        liveComponents[ObjectIdentifier(component)] = nil
    }

    /// Revokes live components (all, or only those of `factory`): each is destroyed once in the plugin and
    /// answers every later call as a harmless no-op. Returns how many.
    @discardableResult
    func revokeLiveComponents(of factory: PluginComponentFactory? = nil) -> Int {
        var count = 0
        for (key, box) in liveComponents {
            guard let component = box.component else {
                liveComponents[key] = nil
                continue
            }
            if factory == nil || component.factory === factory {
                component.revoke()
                liveComponents[key] = nil
                count += 1
            }
        }
        // Removing entries keeps the table's storage; an unloaded record stays in `PluginHost.plugins` for good,
        // so without this every reload kept a table sized for all the components it ever had (32 KiB at 1,000).
        if liveComponents.isEmpty { liveComponents = [:] }
        return count
    }

    /// Slots the live-component table has room for (tests check an unloaded record keeps none).
    var liveComponentCapacity: Int { liveComponents.capacity }

    /// Held unretained, not weakly: a weak reference gives every component a side table, which makes each of
    /// the engine's many retains and releases of it take the slow path. A component untracks itself in deinit,
    /// so an entry never outlives its component.
    struct WeakComponent {
        unowned(unsafe) let object: PluginComponent
        var component: PluginComponent? { object }
        init(component: PluginComponent) { object = component }
    }
}

/// The outcome of `PluginHost.unload`, told truthfully.
public struct UnloadReport: Sendable, CustomStringConvertible {
    public enum Outcome: Equatable, Sendable {
        /// The image is no longer mapped.
        case unloaded
        /// `dlclose` returned but the image is still in the address space (another reference, NODELETE, …).
        case stillMapped(String)
        /// A Swift image: registrations revoked, code kept mapped for the life of the process.
        case pinned
        /// The record was not loaded, nothing was done.
        case notLoaded
    }

    public let file: String
    public let outcome: Outcome
    /// How many live components were destroyed.
    public let destroyedComponents: Int
    /// What was revoked, e.g. ["namespace demo", "layout manager compact"].
    public let revoked: [String]

    public var description: String {
        switch outcome {
        case .unloaded: return "\(file): unloaded"
        case .stillMapped(let detail): return "\(file): still mapped after dlclose: \(detail)"
        case .pinned: return "\(file): pinned: Swift image (registrations revoked, code stays mapped)"
        case .notLoaded: return "\(file): not loaded"
        }
    }
}

/// A Bool behind a lock, for the one piece of a record another thread may touch.
final class LockedFlag: @unchecked Sendable {
    private let lock = Lock()
    private var value = false

    func withLock<R>(_ body: (inout Bool) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
