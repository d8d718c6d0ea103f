/// A type a plugin gets by type (Objection's `getObject:` with a class), across the C ABI: the injector key it is
/// bound under, and how its values cross.
///
/// Plugins that share a type share its source (a Swift file or package both compile in) and so its key. A class
/// crosses as a pointer to the instance the binding made (the binding keeps it alive until its plugin unloads); a
/// value type crosses as what `injected` returns.
///
/// ```swift
/// struct Greeting: HubInjectable {
///     static let injectionKey = "com.example.greeting"
///     let text: String
///     static func decode(_ injected: HubInjected) throws -> Greeting {
///         Greeting(text: try injected.string(for: Self.self))
///     }
///     var injected: HubInjected { .string(text) }
/// }
/// let greeting = try HubHost.current.get(Greeting.self)
/// ```
public protocol HubInjectable {
    /// The key it is bound under, e.g. "com.example.clock".
    static var injectionKey: String { get }
    /// Rebuilds a value from what crossed the ABI; throws when it is of another kind.
    static func decode(_ injected: HubInjected) throws -> Self
    /// The value as it crosses the ABI.
    var injected: HubInjected { get }
}

/// A class that crosses the ABI as a pointer to the instance: only `injectionKey` is left to declare.
public protocol HubInjectableObject: AnyObject, HubInjectable {}

extension HubInjectableObject {
    public static func decode(_ injected: HubInjected) throws -> Self {
        guard let pointer = injected.pointerValue else {
            throw HubInjectionError(
                description: "get \(Self.self): \(Self.injectionKey) gave \(injected), not an object")
        }
        return Unmanaged<Self>.fromOpaque(pointer).takeUnretainedValue()
    }
    public var injected: HubInjected { .pointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// Told once, after the binding that made it returned and before anyone receives it (Objection's
/// `awakeFromObjection`): a singleton is awoken once, a normal-scope value every time one is made.
public protocol HubAwakable {
    func awakeFromInjection() throws
}

extension HubInjected {
    /// The string, or an error naming `type` and what came instead (for `decode`).
    public func string<T>(for type: T.Type) throws -> String {
        guard let value = stringValue else { throw mismatch(type, "a string") }
        return value
    }
    public func int<T>(for type: T.Type) throws -> Int64 {
        guard let value = intValue else { throw mismatch(type, "an integer") }
        return value
    }
    public func double<T>(for type: T.Type) throws -> Double {
        if let value = doubleValue { return value }
        if let value = intValue { return Double(value) }
        throw mismatch(type, "a number")
    }
    private func mismatch<T>(_ type: T.Type, _ expected: String) -> HubInjectionError {
        HubInjectionError(description: "\(T.self) needs \(expected), the binding gave \(self)")
    }
}

/// A plugin's bindings declared in Swift, as an Objection module: subclass and override `configure`, or pass a
/// closure; then `HubHost.current.install(module)` binds them through `hub_host.bind`, owned by the plugin's load.
open class HubModule {
    private let configureBlock: ((HubBinder) -> Void)?

    public init(_ configure: ((HubBinder) -> Void)? = nil) { configureBlock = configure }

    /// Declares the module's bindings on `binder`.
    open func configure(_ binder: HubBinder) { configureBlock?(binder) }
}

/// Collects a module's bindings: by type (`HubInjectable`) or by key, in normal or singleton scope, named or not,
/// with `requires` (keys resolved before the provider runs), an `awoken` hook, and eager singletons (made as
/// soon as the module is installed).
public final class HubBinder {
    struct Binding {
        let key: String
        let name: String?
        let singleton: Bool
        let eager: Bool
        let provider: ([Any?]) throws -> HubInjected
    }
    var bindings: [Binding] = []
    var problems: [String] = []

    init() {}

    /// Binds `T` to what `provider` makes from the caller's arguments (numbers as Double, strings, nil).
    public func bind<T: HubInjectable>(
        _ type: T.Type, named name: String? = nil, singleton: Bool = false, eager: Bool = false,
        requires: [String] = [], awoken: ((T) throws -> Void)? = nil, _ provider: @escaping ([Any?]) throws -> T
    ) {
        let key = T.injectionKey
        // Objects the binding made stay alive as long as the plugin's load (callers hold plain pointers).
        let kept = KeptObjects()
        add(key: key, name: name, singleton: singleton, eager: eager) { arguments in
            for required in requires {
                do { _ = try HubHost.current.inject(required) } catch {
                    throw HubInjectionError(description: "\(key) requires \(required): \(error)")
                }
            }
            let value = try provider(arguments)
            try awoken?(value)
            try (value as? HubAwakable)?.awakeFromInjection()
            if T.self is AnyClass { kept.objects.append(value as AnyObject) }
            return value.injected
        }
    }

    /// Binds `instance` itself under its type's key (`bind:toClass:`): every get returns it.
    public func bind<T: HubInjectable>(_ instance: T, named name: String? = nil) {
        add(key: T.injectionKey, name: name, singleton: true, eager: false) { _ in instance.injected }
    }

    /// Binds a plain key to `provider` (as `HubHost.bind`, declared with the module's other bindings).
    public func bind(
        key: String, named name: String? = nil, singleton: Bool = false, eager: Bool = false,
        _ provider: @escaping ([Any?]) throws -> HubInjected
    ) {
        add(key: key, name: name, singleton: singleton, eager: eager, provider)
    }

    private func add(
        key: String, name: String?, singleton: Bool, eager: Bool, _ provider: @escaping ([Any?]) throws -> HubInjected
    ) {
        if bindings.contains(where: { $0.key == key && $0.name == name }) {
            problems.append("\(key)\(name.map { " (\($0))" } ?? "") is bound twice in the module")
        }
        if eager && !singleton { problems.append("\(key): an eager binding must be a singleton") }
        bindings.append(Binding(key: key, name: name, singleton: singleton, eager: eager, provider: provider))
    }
}

final class KeptObjects {
    var objects: [AnyObject] = []
}

extension HubHost {
    /// Binds the modules' bindings through `hub_host.bind` (owned by this plugin's load, revoked by its unload),
    /// then makes their eager singletons. A module with a problem (a key bound twice, an eager binding that is not
    /// a singleton) binds nothing; a key another plugin holds is refused naming the holder. Call from
    /// `register(with:)` or later, on the host's main thread.
    public func install(_ modules: HubModule...) throws {
        let binders = modules.map { module -> HubBinder in
            let binder = HubBinder()
            module.configure(binder)
            return binder
        }
        if let problem = binders.flatMap(\.problems).first {
            throw HubInjectionError(description: "install: \(problem)")
        }
        let all = binders.flatMap(\.bindings)
        for binding in all {
            try bind(binding.key, named: binding.name, singleton: binding.singleton, binding.provider)
        }
        for binding in all where binding.eager {
            _ = try inject(binding.key, named: binding.name)
        }
    }

    /// The value bound to `T`'s key (Objection's `getObject:`), its scope honoured; `arguments` as in `inject`.
    public func get<T: HubInjectable>(_ type: T.Type = T.self, named name: String? = nil, arguments: [Any?] = [])
        throws -> T
    {
        try T.decode(inject(T.injectionKey, named: name, arguments: arguments))
    }
}
