import FoundationEssentials
import HubCore
import HubInjection

/// A module file: JSON beside the plugins (`*.modules.json`) that binds injector keys to C functions plugins
/// export — the C form of motion-objection's `initializer "initWithNibName:bundle:", "Home"`:
///
///     { "bindings": [
///         { "key": "home.controller", "plugin": "libwidgets.so", "symbol": "widgets_make_controller",
///           "signature": "(str,i32,f64)->ptr", "defaults": ["Home", 3, 1.5], "scope": "normal" } ] }
///
/// `key` (and the optional `name`) is what `injector.get(key:arguments:)` asks for; `plugin` is a plugin file in
/// the same folder, which must export `symbol` (plugins linked with the version script export only
/// `hub_plugin_entry`); `defaults` are replaced position by position by the caller's arguments; `scope` is
/// "normal" (a call per get, the default) or "singleton" (one call per injector).
public struct ModuleFile: Sendable {
    public struct Binding: Sendable {
        public let key: ServiceKey
        public let plugin: String
        public let symbol: String
        public let signature: FFISignature
        public let defaults: [JSONValue]
        public let scope: Scope
        /// Made when its plugin loads (Objection's eager singletons), not on first use.
        public var eager = false
        /// Keys resolved before this binding's function is called (Objection's `requires`).
        public var requires: [ServiceKey] = []
        /// A function the plugin exports, `(ptr)->void`, called with each pointer the binding made (`awoken`).
        public var awoken: String?
        /// "bindings[0]" — where it is in the file, for messages.
        public let path: String
        /// "'home.controller' (bindings[0])"
        public var label: String { "'\(key)' (\(path))" }
    }

    public let url: URL
    public let bindings: [Binding]
    /// Bindings that were refused, with the reason; the rest of the file is still usable.
    public let problems: [Failure]

    /// An error naming the module file and, when it is about one, the binding.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let file: String
        public let binding: String?
        public let reason: String
        public init(file: String, binding: String?, reason: String) {
            self.file = file
            self.binding = binding
            self.reason = reason
        }
        public var description: String {
            binding.map { "\(file): binding \($0): \(reason)" } ?? "\(file): \(reason)"
        }
    }

    /// Reads and checks `url`: JSON shape, keys, signatures, and that each default fits its argument type.
    /// Symbols are checked when the bindings are applied to loaded plugins.
    public init(contentsOf url: URL) throws {
        self.url = url
        let file = url.path
        func fail(_ reason: String, _ binding: String? = nil) -> Failure {
            Failure(file: file, binding: binding, reason: reason)
        }
        let data: Data
        do { data = Data(try readWholeFile(url.path)) } catch {
            throw fail("cannot read: \(ErrorText.describe(error))")
        }
        let root: JSONValue
        do { root = try JSONValue.parse(data) } catch { throw fail("not valid JSON: \(error)") }
        guard let list = root["bindings"]?.arrayValue else {
            throw fail("expected an object with a \"bindings\" array, found \(root.typeDescription)")
        }
        var bindings: [Binding] = []
        var problems: [Failure] = []
        var seen = Set<ServiceKey>()
        // A bad binding is reported and skipped; the others still bind.
        for (index, item) in list.enumerated() {
            let path = "bindings[\(index)]"
            do {
                let binding = try Self.binding(item, path: path, file: file)
                guard seen.insert(binding.key).inserted else {
                    // Both named, as docs/services.md promises: the one that binds and the one refused.
                    let first = bindings.first { $0.key == binding.key }?.label ?? "an earlier binding"
                    throw fail(
                        "the key is bound twice in this file (\(first) binds it); this binding is refused",
                        binding.label)
                }
                bindings.append(binding)
            } catch let failure as Failure {
                problems.append(failure)
            }
        }
        self.problems = problems
        self.bindings = bindings
    }

    /// The fields a binding may have.
    static let fields = [
        "key", "name", "plugin", "symbol", "signature", "defaults", "scope", "eager", "requires", "awoken",
    ]

    /// Reads one entry of the "bindings" array.
    private static func binding(_ item: JSONValue, path: String, file: String) throws -> Binding {
        func fail(_ reason: String, _ binding: String? = nil) -> Failure {
            Failure(file: file, binding: binding, reason: reason)
        }
        guard let object = item.objectValue else {
            throw fail("\(path) must be an object, found \(item.typeDescription)")
        }
        func string(_ field: String) throws -> String {
            guard let value = object[field]?.stringValue, !value.isEmpty else {
                throw fail(
                    "\(path).\(field) must be a non-empty string",
                    object["key"]?.stringValue.map { "'\($0)' (\(path))" })
            }
            return value
        }
        let key = ServiceKey(id: try string("key"), name: object["name"]?.stringValue)
        let label = "'\(key)' (\(path))"
        // A misspelt field ("sope") must not quietly change what the binding does.
        for field in object.keys where !Self.fields.contains(field) {
            let hint =
                Spelling.nearest(field, in: Self.fields, maxDistance: 1).map { "; did you mean \"\($0)\"?" } ?? ""
            throw fail(
                "\(path) has an unknown field \"\(field)\"\(hint) (a binding takes \(Self.fields.joined(separator: ", ")))",
                label)
        }
        let signature: FFISignature
        do { signature = try FFISignature(try string("signature")) } catch let error as FFISignature.ParseError {
            throw fail("\(error)", label)
        }
        if let raw = object["defaults"], raw.arrayValue == nil {
            throw fail("\(path).defaults must be an array, found \(raw.typeDescription)", label)
        }
        let defaults = object["defaults"]?.arrayValue ?? []
        guard defaults.count <= signature.arguments.count else {
            throw fail("\(defaults.count) defaults for \(signature.arguments.count) argument(s) of \(signature)", label)
        }
        for (position, value) in defaults.enumerated() {
            do { _ = try FFIValue.from(json: value, as: signature.arguments[position]) } catch {
                throw fail("default \(position + 1) \(error)", label)
            }
        }
        let scopeText = object["scope"]?.stringValue ?? "normal"
        guard let scope = Scope(rawValue: scopeText) else {
            throw fail("\(path).scope must be \"normal\" or \"singleton\", found \"\(scopeText)\"", label)
        }
        var binding = Binding(
            key: key, plugin: try string("plugin"), symbol: try string("symbol"), signature: signature,
            defaults: defaults, scope: scope, path: path)
        if let eager = object["eager"] {
            guard let flag = eager.boolValue else { throw fail("\(path).eager must be true or false", label) }
            guard !flag || scope == .singleton else {
                throw fail("\(path).eager needs \"scope\": \"singleton\"", label)
            }
            binding.eager = flag
        }
        if let requires = object["requires"] {
            guard let keys = requires.arrayValue?.compactMap(\.stringValue), keys.count == requires.arrayValue?.count
            else { throw fail("\(path).requires must be an array of keys", label) }
            binding.requires = keys.map { ServiceKey(id: $0) }
        }
        if let awoken = object["awoken"] {
            guard let symbol = awoken.stringValue, !symbol.isEmpty else {
                throw fail("\(path).awoken must be the name of an exported function", label)
            }
            guard signature.result == .ptr else { throw fail("\(path).awoken needs a ptr result", label) }
            binding.awoken = symbol
        }
        return binding
    }

    /// The names and bytes of the module files in `folder`, as one digest: what a quarantine for a fault in a
    /// bound function was recorded against ("" when there are none).
    public static func digest(ofFilesIn folder: URL) -> String {
        var listing = ""
        for file in files(in: [folder]) {
            listing += file.lastPathComponent + "\t" + (ContentDigest.of(file: file) ?? "unreadable") + "\n"
        }
        return listing.isEmpty ? "" : ContentDigest.of(data: Data(listing.utf8))
    }

    /// How a module file's name ends.
    public static let suffix = ".modules.json"

    /// The module files in `folders` (sorted by name).
    public static func files(in folders: [URL]) -> [URL] {
        folders.flatMap { folder -> [URL] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.filter { $0.hasSuffix(suffix) }.sorted().map { folder.appendingPathComponent($0) }
        }
    }
}

/// A module-file binding prepared against a loaded plugin: symbol found, call prepared, defaults converted.
/// Calling it merges the caller's arguments over the defaults and calls through libffi.
public final class BoundFunction: @unchecked Sendable {
    public let file: String
    public let binding: ModuleFile.Binding
    public let owner: Owner
    /// The owning plugin's call slot: a fault in the function is named as that plugin's (`CallRecorder`).
    let slot: UInt16
    let call: FFICall
    let defaults: [FFIValue]
    /// When the defaults cover every argument, they are laid out once and calls without arguments reuse them.
    let preparedDefaults: FFICall.PreparedArguments?
    /// Set when the plugin's load is revoked: its code may be unmapped, so the function is never called again.
    public internal(set) var isRevoked = false

    init(file: String, binding: ModuleFile.Binding, owner: Owner, slot: UInt16, function: UnsafeRawPointer) throws {
        self.file = file
        self.binding = binding
        self.owner = owner
        self.slot = slot
        do { call = try FFICall(function: function, signature: binding.signature) } catch {
            throw ModuleFile.Failure(file: file, binding: binding.label, reason: "\(error)")
        }
        defaults = try binding.defaults.enumerated().map { position, value in
            try FFIValue.from(json: value, as: binding.signature.arguments[position])
        }
        preparedDefaults = defaults.count == binding.signature.arguments.count ? try call.prepare(defaults) : nil
    }

    /// Calls with the defaults, each replaced by the caller's argument at the same position.
    public func invoke(_ arguments: [Any]) throws -> FFIValue {
        func fail(_ reason: String) -> ModuleFile.Failure {
            ModuleFile.Failure(file: file, binding: binding.label, reason: reason)
        }
        guard !isRevoked else { throw fail("\(binding.plugin) was unloaded (\(owner)); the binding is revoked") }
        // Plugin code: a crash or hang in it is the plugin's, named and contained by a worker's supervisor.
        // A fault in it names the binding: "for binding 'boom' (bindings[0]) of math.modules.json: crashes".
        let note = "binding \(binding.label) of \(PathText.fileName(file)): \(binding.symbol)"
        if arguments.isEmpty, let preparedDefaults {
            return CallRecorder.withNote(note) {
                CallRecorder.duringOnMainThread(.exportedFunction, slot: slot) { call.call(prepared: preparedDefaults) }
            }
        }
        let types = binding.signature.arguments
        guard arguments.count <= types.count else {
            throw fail("\(binding.symbol)\(binding.signature) takes \(types.count) argument(s), got \(arguments.count)")
        }
        var values = defaults
        for (position, argument) in arguments.enumerated() {
            let value: FFIValue
            do { value = try FFIValue.from(argument, as: types[position]) } catch {
                throw fail("argument \(position + 1) of \(binding.symbol) \(error)")
            }
            if position < values.count { values[position] = value } else { values.append(value) }
        }
        guard values.count == types.count else {
            throw fail(
                "\(binding.symbol)\(binding.signature) takes \(types.count) argument(s), got \(values.count) (\(defaults.count) default(s), \(arguments.count) given)"
            )
        }
        return try CallRecorder.withNote(note) {
            try CallRecorder.duringOnMainThread(.exportedFunction, slot: slot) { try call.call(values: values) }
        }
    }
}
