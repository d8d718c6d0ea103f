import CHubPlugin
import Dispatch
import FoundationEssentials
import HubCore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Loads `.so` plugins through the C ABI of `hub_plugin.h` and owns what they register.
///
/// A file goes: validated (ELF checks, no code runs) → copied to a private content-named path → `dlopen`ed →
/// descriptor checked (magic, ABI) → `init` with its own host table → active (C) or pinned (Swift). Any failure
/// leaves a rejected `PluginRecord` with a one-line reason naming the file; the other files load normally.
///
/// # Thread safety
/// Not thread-safe. Create it, load, render and unload on one thread (the host's main thread): every call into a
/// plugin is made from there, as the header promises plugins.
public final class PluginHost {
    /// Namespace → component factory, with HubCore's default fallback components.
    public let registry: ComponentRegistry
    /// Layout managers plugins registered, by id.
    public let layoutManagers = OwnedRegistry<LayoutManager>(kind: "layout manager")
    /// Action factories plugins registered, by action namespace.
    public let actionFactories = OwnedRegistry<ActionFactory>(kind: "action namespace")
    /// Action handlers in registration order.
    public internal(set) var actionHandlers: [(owner: Owner, handler: ActionHandler)] = []
    /// The host clock plugin timers run on; advance it to fire them.
    public let scheduler = HostScheduler()
    /// Every file this host has seen, in the order seen: loaded, rejected and unloaded ones.
    public internal(set) var plugins: [PluginRecord] = []
    /// Plugin folders that did not exist or could not be read during `loadPlugins(in:)`.
    public private(set) var missingFolders: [URL] = []
    /// The probe stage: each discovered file version is exercised in a child process (cached) before any of its
    /// code runs here; quarantined files are listed with their reason, never loaded. nil: no probing.
    public var probeGate: ProbeGate?
    /// File versions (path and content digest) a worker's supervisor quarantined after they faulted: never loaded,
    /// whether or not probing is on.
    public var quarantinedVersions: [QuarantineRecord] = []
    /// Which files may load at all (permissions, `--trusted-hashes`, safe mode), checked before the probe.
    public var trust = PluginTrust()
    /// Told as a load reaches each step that runs plugin code: "dlopen (its constructors)",
    /// "hub_plugin_entry", "init". The probe names the one a plugin crashed or hung in.
    public var loadStep: ((String) -> Void)?
    /// Plugin ids that win a namespace two plugins claim (`--prefer`); without one, neither loads.
    public var preferredPluginIDs: Set<String> = []
    /// Told during an unload transaction (after components are revoked, before `deinit`), so other owners of
    /// plugin registrations (services, injector bindings) revoke theirs.
    public var unloadObservers: [(PluginRecord) -> Void] = []
    /// Told about every `log` call of every plugin, at every level (the preview's log panel), before the
    /// logger's own level filter.
    public var onPluginLog: ((PluginRecord, Logger.Level, String) -> Void)?

    let logger: Logger
    /// The host's main thread, as `hub_plugin.h` promises plugins: every call into a plugin is made from it, and
    /// [main-thread] host functions called from any other thread are refused (`HostTable.resolve`).
    private(set) var mainThread = pthread_self()
    /// The hot reload in progress on this host, if any (`HotSwap`): what the new version's init held back.
    var staging: HotSwap.Staging?
    /// This host's services, made on first use (`services`).
    var attachedServices: HostServices?
    private let copies: PrivateCopies
    /// What earlier runs learnt of unchanged files (nil for memory copies: probe children load a file once).
    private lazy var imageIndex: ImageIndex? =
        copies.inMemory ? nil : ImageIndex(directory: copies.directory, identity: Self.buildIdentity)
    private var loadCounter = 0
    /// Plugin files read and hashed by this host; a file the image index recognises is not (tests count them).
    private(set) var imagesRead = 0
    /// Files already read and checked by this process (the probe gate, the conformance suite), by path: the
    /// loader takes these bytes instead of reading the file again.
    var inspected: [String: PluginImageInfo] = [:]
    static let inspectedBudget = 64 << 20
    /// Private copies of `inspected` bytes made while the probe children ran, by file path (reserved in
    /// `LoadedImagePaths`), and whether they were written then: the loader takes them instead of writing a copy.
    private var earlyCopies: [String: (copy: URL, written: Bool)] = [:]
    private var pruned = false
    /// Private copies unused this long are deleted from the cache (a week).
    static let copyLifetime: Double = 7 * 24 * 3600
    /// How many copies of one plugin file name a dev session keeps (the newest, for `addr2line` on a recent
    /// crash): it makes one per rebuild, and a week of them took gigabytes for a large plugin.
    public static let copiesKeptPerPlugin = 8

    /// Deletes the private copies of `record`'s file name beyond the `copiesKeptPerPlugin` most recently used,
    /// none mapped in this process (a dev session calls it after each reload). Off the reload's path, on a queue
    /// of its own (listing the folder and checking what it deletes added up to a millisecond to a reload).
    public func pruneOlderCopies(of record: PluginRecord) {
        guard !copies.inMemory, let copy = record.privateCopy else { return }
        let (copies, logger, name) = (self.copies, self.logger, record.fileName)
        Self.pruning.async {
            let deleted = LoadedImagePaths.withPaths {
                copies.pruneVersions(like: copy.lastPathComponent, keepingNewest: Self.copiesKeptPerPlugin, keeping: $0)
            }
            if !deleted.isEmpty { logger.debug("deleted \(deleted.count) older private copies of \(name)") }
        }
    }

    /// Where `pruneOlderCopies` works.
    static let pruning = DispatchQueue(label: "hubhost.prune-copies", qos: .utility)

    /// - Parameter copiesInMemory: keep private copies in memory, not in `cacheDirectory` (probe children, which
    ///   load each plugin once and exit; see `PrivateCopies.inMemory`).
    public init(cacheDirectory: URL? = nil, logger: Logger = Logger(label: "hubhost"), copiesInMemory: Bool = false) {
        CallRecorder.installForkGuard
        self.logger = logger
        self.copies = PrivateCopies(
            directory: cacheDirectory ?? PrivateCopies.defaultDirectory(), inMemory: copiesInMemory)
        self.registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        // However a namespace goes away (the plugin unregisters it, or it unloads), its factory's live components
        // are revoked and the plugin's factory is told it is no longer used.
        registry.addUnregisterObserver { entry in
            guard let factory = entry.factory as? PluginComponentFactory else { return }
            factory.retire()
            if factory.record?.componentFactories[entry.namespace] === factory {
                factory.record?.componentFactories[entry.namespace] = nil
            }
        }
        actionFactories.didRemove.append { entry in (entry.value as? PluginActionFactory)?.retire() }
    }

    /// A host going away does not unload its plugins (at process exit that would only cost time and delete the
    /// private copies the next run reuses; call `unloadAll()` to unload). Their records are kept alive on purpose
    /// and stop answering, so a plugin calling its host table later reaches a harmless no-op, not freed memory.
    deinit {
        for record in plugins where record.isLoaded {
            record.codeCallable = false
            _ = Unmanaged.passRetained(record)
        }
        HostTable.forgetHostThread(mainThread)
    }

    /// Makes the calling thread the host's main thread, for an embedder that creates the host on one thread and
    /// drives it from another (a test sharing one host between tests, a server handing it to its own thread).
    public func adoptCurrentThread() {
        HostTable.forgetHostThread(mainThread)
        mainThread = pthread_self()
        // What plugins resolved on the old thread is not served on it any more (its calls are refused).
        for record in plugins { record.injectCache.clear() }
    }

    /// The records that are loaded (active or pinned).
    public var loadedPlugins: [PluginRecord] { plugins.filter(\.isLoaded) }

    // MARK: Loading

    /// Loads every `*.so` in `directories` (sorted by path within each folder). Returns the records of this call,
    /// rejected ones included.
    @discardableResult
    public func loadPlugins(in directories: [URL]) -> [PluginRecord] {
        // One snapshot of the process state for the batch: each load is compared with it and put back to it.
        batchProcessState = ProcessStateGuard()
        defer { batchProcessState = nil }
        let started = Date()
        if !pruned, !copies.inMemory {
            pruned = true
            let deleted = LoadedImagePaths.withPaths {
                copies.pruneDaily(olderThan: Self.copyLifetime, keeping: $0)
            }
            if !deleted.isEmpty { logger.debug("deleted \(deleted.count) private copies unused for a week") }
        }
        if trust.safeMode { return [] }
        let (discovered, missing, notUTF8) = PluginFolders.pluginFiles(in: directories)
        for folder in missing where !missingFolders.contains(folder) {
            missingFolders.append(folder)
            logger.warning("plugin folder \(folder.path) does not exist or cannot be read")
        }
        // Trust first: a refused file is never probed, copied or opened.
        var records: [PluginRecord] = []
        for shown in notUTF8 {
            records.append(
                notLoaded(
                    URL(fileURLWithPath: shown, isDirectory: false),
                    .rejected(
                        "\(PathText.fileName(shown)): its name is not valid UTF-8: hubhost names files in UTF-8 (rename "
                            + "it; `convmv -f latin1 -t utf8` renames a folder's files)")))
        }
        var files: [URL] = []
        for (file, refusal) in zip(discovered, trust.refusals(of: discovered)) {
            if let why = refusal {
                records.append(notLoaded(file, .rejected(why)))
            } else {
                files.append(file)
            }
        }
        // Probe: a file that crashed, hung or failed in a child is quarantined, never opened here.
        var quarantined: [String: String] = [:]
        // The namespace of the component each was quarantined at, so a model naming it is told why it falls back.
        var quarantinedNamespaces: [String: String] = [:]
        func noteNamespace(_ record: QuarantineRecord) {
            if let component = record.component, let colon = component.firstIndex(of: ":") {
                quarantinedNamespaces[record.file] = String(component[..<colon])
            }
        }
        for record in quarantinedVersions where files.contains(where: { $0.path == record.file }) {
            if ContentDigest.of(file: URL(fileURLWithPath: record.file)) == record.hash {
                quarantined[record.file] = record.reason
                noteNamespace(record)
            }
        }
        files.removeAll { quarantined[$0.path] != nil }
        let faulted = Set(quarantined.keys)
        // Files whose probe crashed, hung or exited during this call (not a verdict remembered from before).
        var faultedNow = Set<String>()
        if let probeGate {
            // Kept for the loader up to a budget: hundreds of large Swift images are read again instead.
            var kept = 0
            let verdicts = probeGate.filter(
                files,
                inspected: { file, image in
                    guard kept + image.size <= Self.inspectedBudget else { return }
                    kept += image.size
                    self.inspected[file.path] = image
                },
                whileProbing: { self.copyInspectedImages(of: files) })
            for record in verdicts.quarantined {
                quarantined[record.file] = record.reason
                noteNamespace(record)
                if record.date >= started { faultedNow.insert(record.file) }
            }
        }
        for file in files + faulted.sorted().map({ URL(fileURLWithPath: $0) }) {
            if let why = quarantined[file.path] {
                let record = notLoaded(file, .quarantined("\(file.lastPathComponent): \(why)"))
                record.faultedThisRun = faultedNow.contains(file.path)
                record.quarantinedNamespace = quarantinedNamespaces[file.path]
                records.append(record)
            } else {
                records.append(load(file: file))  // copy → open → check descriptor → init → register
            }
        }
        inspected.removeAll()  // files not loaded after all (quarantined) keep no bytes
        // Copies of files not loaded after all (quarantined, or twins): written for nothing, so deleted.
        for (copy, written) in earlyCopies.values {
            LoadedImagePaths.release(copy.path)
            if written { PrivateCopies.discard(copy) }
        }
        earlyCopies.removeAll()
        settleContestedNamespaces(among: records)
        noteSharedIDs(among: records)
        imageIndex?.save()
        return records
    }

    /// Two loaded plugins with one plugin id (a copy renamed, or an id not changed after copying a plugin's source)
    /// both load, their namespaces being different, but `--prefer` and every message naming the id cannot tell them
    /// apart: each after the first is told.
    private func noteSharedIDs(among records: [PluginRecord]) {
        var first: [String: PluginRecord] = [:]
        for record in records where record.isLoaded {
            guard let id = record.id else { continue }
            if let earlier = first[id] {
                record.warnings.append(
                    "plugin id \(TerminalText.quoted(id)) is also \(earlier.fileName)'s; give each plugin its own id "
                        + "(--prefer and messages name plugins by id)")
            } else {
                first[id] = record
            }
        }
    }

    /// Makes the private copies of the images the probe gate read, while the probe children run: the copy each
    /// file gets if it passes. (A copy that cannot be made now is tried again, and its error reported, by `load`.)
    private func copyInspectedImages(of files: [URL]) {
        for file in files {
            guard let image = inspected[file.path] else { continue }
            var written = false
            guard
                let copy = try? LoadedImagePaths.reserve({ inUse in
                    let placed = try copies.place(
                        file, contents: image.contents, contentHash: image.contentHash, avoiding: inUse)
                    written = placed.written
                    return placed.copy
                })
            else { continue }
            earlyCopies[file.path] = (copy, written)
        }
    }

    /// A plugin loaded in this process changed it beyond repair (`PluginRecord.damagedProcess`): a probe scanner
    /// ends rather than probe the next plugin in it.
    nonisolated(unsafe) public private(set) static var processDamaged = false

    /// The process state a `loadPlugins` batch started with (`ProcessStateGuard`); nil outside a batch.
    private var batchProcessState: ProcessStateGuard?

    /// Namespaces no loaded plugin serves because the plugin that serves them is quarantined: namespace → "libx.so,
    /// which is quarantined", for the message of a model that names one (it would suggest a similar namespace).
    public var unavailableNamespaces: [String: String] {
        var found: [String: String] = [:]
        for record in plugins where !record.isLoaded {
            if let namespace = record.quarantinedNamespace, registry.entry(forNamespace: namespace) == nil {
                found[namespace] = "\(record.fileName), which is quarantined"
            }
        }
        return found
    }

    /// A record for a file that is not loaded, with the reason in its state.
    private func notLoaded(_ file: URL, _ state: PluginRecord.State) -> PluginRecord {
        let record = PluginRecord(file: file, logger: logger)
        record.state = state
        forgetSupersededRecords(of: record.filePath)
        plugins.append(record)
        return record
    }

    /// Forgets the earlier records of the file at `path` that no longer load anything (unloaded, rejected,
    /// quarantined), as a new record for it takes their place: a dev session loads a plugin thousands of times,
    /// and every record kept (its names, logger, warnings) grew the worker by about 7 KB a reload. No plugin code
    /// can reach them (a closed image's host table is freed with it); retired Swift images, whose code stays
    /// mapped, are kept.
    private func forgetSupersededRecords(of path: String) {
        plugins.removeAll { $0.filePath == path && !$0.isLoaded && $0.state != .retired }
    }

    /// Validates and loads one plugin file. Never throws: failures are in the record's state and reason.
    @discardableResult
    public func load(file: URL) -> PluginRecord {
        let record = PluginRecord(file: file, logger: logger)
        record.host = self
        forgetSupersededRecords(of: record.filePath)
        plugins.append(record)
        let started = Monotonic.now()
        defer {
            record.loadedAt = Date()
            record.loadDuration = Monotonic.now() - started
        }
        // What its constructors and init change for the whole process is put back and said (`ProcessStateGuard`).
        let processState = batchProcessState ?? ProcessStateGuard()
        defer {
            let (changes, irreparable) = processState.restore()
            record.notes += changes
            if let irreparable {
                record.damagedProcess = irreparable
                Self.processDamaged = true
                // The batch goes on from the state it left: the next plugins are not blamed for it.
                if batchProcessState != nil { batchProcessState = ProcessStateGuard() }
            }
        }
        do {
            try load(record)
            logger.debug("loaded \(record.displayName) as \(record.state)")
        } catch {
            record.state = .rejected(error.reason)
            logger.warning("\(error.reason)")
        }
        return record
    }

    private struct LoadFailure: Error { let reason: String }

    private func load(_ record: PluginRecord) throws(LoadFailure) {
        let name = record.fileName
        var uniqueSymbols: [String] = []
        // An unchanged file validated and copied by an earlier run is not read again (`ImageIndex`).
        let stamp = imageIndex == nil ? nil : ImageIndex.Stamp.of(record.filePath)
        var known: ImageIndex.Known?
        if let imageIndex {
            LoadedImagePaths.reserveIfFree { inUse in
                known = imageIndex.known(record.filePath, stamp: stamp, avoiding: inUse)
                return known?.copy
            }
        }
        if let known {
            record.contentHash = known.hash
            record.isSwiftImage = known.isSwiftImage
            do { try refuseTwin(of: record) } catch {
                LoadedImagePaths.release(known.copy.path)
                throw error
            }
            record.privateCopy = known.copy
        } else {
            let image: PluginImageInfo
            imagesRead += 1
            if let early = inspected.removeValue(forKey: record.filePath) {
                image = early
            } else {
                do { image = try ELFInspector.inspect(record.file) } catch { throw LoadFailure(reason: "\(error)") }
                // Bytes the probe gate did not read: loaded only once a probe has passed exactly these.
                switch probeGate?.clearance(of: record.file, hash: image.contentHash) {
                case .cleared?, nil: break
                case .quarantined(let quarantine)?:
                    throw LoadFailure(reason: "\(name): quarantined: \(quarantine.reason)")
                case .changed?:
                    throw LoadFailure(reason: "\(name): changed while it was being checked (still being written?)")
                }
            }
            uniqueSymbols = image.uniqueSymbols
            record.contentHash = image.contentHash
            record.isSwiftImage = image.isSwiftImage
            try refuseTwin(of: record)

            // 1. A private copy, so the mapped file is never the one a build rewrites.
            let copy: URL
            if let early = earlyCopies.removeValue(forKey: record.filePath) {
                copy = early.copy
            } else {
                do {
                    copy = try LoadedImagePaths.reserve { inUse in
                        try copies.copy(
                            record.file, contents: image.contents, contentHash: image.contentHash, avoiding: inUse)
                    }
                } catch {
                    throw LoadFailure(reason: "\(name): cannot make a private copy: \(ErrorText.describe(error))")
                }
            }
            record.privateCopy = copy
            imageIndex?.remember(record.file, before: stamp, image: image, copy: copy)
        }
        let copy = record.privateCopy!

        // 2. dlopen. Swift images can never be unmapped safely (the runtime keeps their metadata), so NODELETE.
        let flags = RTLD_NOW | RTLD_LOCAL | (record.isSwiftImage ? RTLD_NODELETE : 0)
        loadStep?("dlopen (its constructors)")
        guard let handle = dlopen(copy.path, flags) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            // A library found through $ORIGIN beside the plugin is not beside its private copy (read on failure only).
            let origin =
                why.contains("cannot open shared object file")
                    && (try? Data(contentsOf: copy)).map { bytes in
                        ["$ORIGIN", "${ORIGIN}"].contains { bytes.firstRange(of: Data($0.utf8)) != nil }
                    } == true
                ? " (its run path names $ORIGIN: hubhost loads a private copy of the plugin from its cache, where "
                    + "$ORIGIN points; link that library statically or install it where the loader looks, see "
                    + "writing-plugins.md)" : ""
            discardCopy(record)
            // A probe's copy is a memfd: the loader names it /proc/self/fd/N, which says nothing of the plugin.
            let named = copy.path.hasPrefix("/proc/self/fd/") ? why.replacing(copy.path, with: name) : why
            throw LoadFailure(reason: "\(name): dlopen failed: \(named)\(origin)")
        }
        record.handle = handle
        // Said where the build is loaded, when it was read (a warm load does not read it; `validate` fails it).
        if !uniqueSymbols.isEmpty {
            record.notes.append(
                "exports GNU unique symbols (\(uniqueSymbols.map(ELFInspector.demangled).joined(separator: ", "))): "
                    + "one object each for the whole process, shared with every plugin that defines it; link with the "
                    + "version script (writing-plugins.md)")
        }

        // 3. The descriptor: magic and ABI before anything else of the plugin runs.
        let descriptor: UnsafePointer<hub_plugin_descriptor>
        do {
            descriptor = try readDescriptor(handle, name: name)
        } catch {
            abandonImage(record)
            throw error
        }
        try initialize(record, descriptor: descriptor, name: name)
    }

    /// Refuses a second load of an image already loaded from another file (two copies would share one image).
    private func refuseTwin(of record: PluginRecord) throws(LoadFailure) {
        if let twin = plugins.first(where: { $0 !== record && $0.isLoaded && $0.contentHash == record.contentHash }) {
            // Same name in two folders: the other's folder says which one serves.
            let other = twin.fileName == record.fileName ? twin.filePath : twin.fileName
            throw LoadFailure(reason: "\(record.fileName): the same image is already loaded from \(other)")
        }
    }

    /// The hubhost build that validated what `ImageIndex` remembers: the `hubhost` executable's path and stamp.
    static let buildIdentity: String = {
        guard let executable = ProbeRunner.defaultExecutable(), let stamp = FileStamp.of(executable) else {
            return HostVersion.description
        }
        return "\(HostVersion.description)#\(executable.path)#\(stamp.size)#\(stamp.mtimeNanos)"
    }()

    /// Loads a plugin linked into this process, with no file and no `dlopen`: its descriptor is checked and it
    /// is initialised and registered exactly as a loaded file's would be. It can be unloaded, but its code stays
    /// mapped (it is part of the process), so it ends `retired`. For tests and embedders, as swift-nio's
    /// `NIOEmbedded` runs handlers without a network.
    @discardableResult
    public func loadEmbedded(_ descriptor: UnsafePointer<hub_plugin_descriptor>, name: String) -> PluginRecord {
        let file = URL(fileURLWithPath: "/(embedded)/\(name)")
        let record = PluginRecord(file: file, logger: logger)
        record.host = self
        record.isSwiftImage = true  // never unmapped, as a Swift image is not
        plugins.append(record)
        do {
            try checkDescriptor(descriptor, name: name)
            try initialize(record, descriptor: descriptor, name: name)
        } catch {
            record.state = .rejected(error.reason)
        }
        return record
    }

    /// Steps 3–4 of a load once the descriptor is checked: identity, `init` with the plugin's own host table.
    private func initialize(_ record: PluginRecord, descriptor: UnsafePointer<hub_plugin_descriptor>, name: String)
        throws(LoadFailure)
    {
        record.descriptor = descriptor
        let d = CInterop.copyTable(descriptor)  // only the bytes its struct_size covers
        record.id = String(cString: d.id)
        record.name = String(cString: d.name)
        record.version = String(cString: d.version)
        record.pluginDescription = d.description.map { String(cString: $0) }
        record.abi = "\(d.abi.major).\(d.abi.minor)"
        loadCounter += 1
        record.owner = Owner(
            id: "\(record.id!)@\(record.version!)#\(loadCounter)",
            displayName: "\(record.id!) \(record.version!) (\(name))")

        // 4. init, with the plugin's own host table.
        let table = HostTable.make(for: record)
        record.hostTable = table
        record.codeCallable = true
        var error = [CChar](repeating: 0, count: 1024)
        record.callSlot = CallRecorder.register(
            path: record.filePath, id: record.id!, version: record.version!, digest: record.contentHash ?? "",
            copy: record.privateCopy?.path, image: record.handle)
        record.holdsRegistrations = true
        loadStep?("init")
        let initialised = CallRecorder.during(.initialize, slot: record.callSlot) {
            d.`init`!(table, &error, error.count)
        }
        record.holdsRegistrations = false
        let held = record.heldRegistrations
        record.heldRegistrations = []
        if initialised {
            // Now, and only now, other plugins' observers hear of its services.
            for (what, apply) in held {
                do { try apply() } catch { record.warnings.append("\(what) not registered: \(error)") }
            }
        }
        guard initialised else {
            // The plugin may have filled the buffer without a terminating NUL: read at most its capacity.
            let message = CInterop.errorText(error)
            revokeRegistrations(of: record)
            record.codeCallable = false
            abandonImage(record)
            throw LoadFailure(reason: "\(name): init failed: \(message.isEmpty ? "(no message)" : message)")
        }
        record.state = record.isSwiftImage ? .pinned : .active
    }

    /// Reads and checks the descriptor, touching only the bytes its `struct_size` says exist.
    private func readDescriptor(_ handle: UnsafeMutableRawPointer, name: String) throws(LoadFailure)
        -> UnsafePointer<hub_plugin_descriptor>
    {
        guard let symbol = dlsym(handle, ELFInspector.entrySymbol) else {
            throw LoadFailure(reason: "\(name): no entry point \(ELFInspector.entrySymbol) (dlsym found none)")
        }
        let entry = unsafeBitCast(symbol, to: hub_plugin_entry_fn.self)
        loadStep?(ELFInspector.entrySymbol)
        guard let descriptor = entry() else {
            throw LoadFailure(reason: "\(name): \(ELFInspector.entrySymbol) returned NULL")
        }
        try checkDescriptor(descriptor, name: name)
        return descriptor
    }

    /// Checks magic, ABI and the mandatory members, touching only the bytes `struct_size` says exist.
    private func checkDescriptor(_ descriptor: UnsafePointer<hub_plugin_descriptor>, name: String) throws(LoadFailure) {
        let raw = UnsafeRawPointer(descriptor)
        let magic = raw.load(as: UInt32.self)
        guard magic == HUB_PLUGIN_MAGIC else {
            throw LoadFailure(
                reason:
                    "\(name): bad magic 0x\(String(printf: "%08x", magic)), not a hub plugin descriptor (expected 0x\(String(printf: "%08x", HUB_PLUGIN_MAGIC)))"
            )
        }
        let structSize = raw.load(fromByteOffset: 4, as: UInt32.self)
        guard CInterop.covers(structSize, \hub_plugin_descriptor.abi) else {
            throw LoadFailure(reason: "\(name): descriptor is \(structSize) bytes, too small to hold an ABI version")
        }
        let abi = raw.load(fromByteOffset: MemoryLayout<hub_plugin_descriptor>.offset(of: \.abi)!, as: hub_version.self)
        let host = hub_version(major: HUB_ABI_MAJOR, minor: HUB_ABI_MINOR)
        guard hub_version_is_compatible(host, abi) else {
            throw LoadFailure(
                reason:
                    "\(name) was built for hub plugin ABI \(abi.major).\(abi.minor); this host speaks \(host.major).\(host.minor)"
            )
        }
        guard CInterop.covers(structSize, \hub_plugin_descriptor.`init`) else {
            throw LoadFailure(
                reason:
                    "\(name): descriptor is \(structSize) bytes, too small for ABI \(abi.major).\(abi.minor) (no init)")
        }
        let d = CInterop.copyTable(descriptor)
        for (field, value) in [("id", d.id), ("name", d.name), ("version", d.version)]
        where value == nil || value!.pointee == 0 {
            throw LoadFailure(reason: "\(name): descriptor has no \(field) (mandatory)")
        }
        guard d.`init` != nil else { throw LoadFailure(reason: "\(name): descriptor has no init function (mandatory)") }
    }

    // MARK: Registration entry points (called from the host table)

    func registerComponentFactory(
        _ factory: UnsafePointer<hub_component_factory>, namespace: String,
        for record: PluginRecord
    ) throws {
        let bridge = PluginComponentFactory(factory, namespace: namespace, record: record)
        try registry.register(bridge, forNamespace: namespace, owner: record.owner)
        record.componentFactories[namespace] = bridge
    }

    func addActionHandler(_ handler: ActionHandler, owner: Owner) {
        actionHandlers.append((owner, handler))
    }
}

/// Private-copy paths mapped by any host in this process, so two hosts (or two loads) never `dlopen` the same
/// path and silently share one image.
enum LoadedImagePaths {
    private static let lock = Lock()
    private static var paths = Set<String>()

    static func reserve(_ make: (Set<String>) throws -> URL) rethrows -> URL {
        lock.lock()
        defer { lock.unlock() }
        let url = try make(paths)
        paths.insert(url.path)
        return url
    }

    /// Reserves the path `find` returns, if any: `find` only returns a path not in its argument.
    static func reserveIfFree(_ find: (Set<String>) -> URL?) {
        lock.lock()
        defer { lock.unlock() }
        if let url = find(paths) { paths.insert(url.path) }
    }

    static func withPaths<R>(_ body: (Set<String>) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(paths)
    }

    static func release(_ path: String) {
        lock.lock()
        paths.remove(path)
        lock.unlock()
    }
}
