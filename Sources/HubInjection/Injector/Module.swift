import HubCore

/// A group of bindings with an owner (Objection's JSObjectionModule). Subclass and override `configure`, or pass
/// a closure. `configure` runs again for each injector built from the module (Objection rebuilds derived
/// injectors the same way).
open class Module {
    public let owner: Owner
    private let configureBlock: ((Binder) -> Void)?

    public init(owner: Owner = .host, configure: ((Binder) -> Void)? = nil) {
        self.owner = owner
        self.configureBlock = configure
    }

    open func configure(_ binder: Binder) { configureBlock?(binder) }
}

/// How a binding makes its value.
enum BindingKind {
    /// A bound instance: acts as a singleton, never injected or awoken.
    case instance(Any)
    /// A provider or block: receives the injector and the arguments; may return nil; never injected or awoken.
    case provider(Scope, (Injector, [Any]) throws -> Any?)
    /// A class entry: built with its composition's initializer, injected, awoken.
    case type(Scope?, Injectable.Type, check: ((Any) -> Bool)?)
}

struct Binding {
    let key: ServiceKey
    let owner: Owner
    let kind: BindingKind
    var scopeDescription: String {
        switch kind {
        case .instance: return "instance"
        case .provider(let scope, _): return "provider (\(scope.rawValue))"
        case .type(let scope, let type, _):
            return "class \(String(reflecting: type)) (\((scope ?? type.composition.scope ?? .normal).rawValue))"
        }
    }
}

/// What a module's `configure` binds with (JSObjectionModule's bind… methods). Bindings belong to the module's owner.
public final class Binder {
    public let owner: Owner
    var bindings: [ServiceKey: Binding] = [:]
    var order: [ServiceKey] = []
    var eagerSingletons: [ServiceKey] = []
    var errors: [InjectionError] = []

    init(owner: Owner) { self.owner = owner }

    private func add(_ key: ServiceKey, _ kind: BindingKind) {
        if bindings[key] == nil { order.append(key) }
        bindings[key] = Binding(key: key, owner: owner, kind: kind)
    }

    /// Binds an instance to an interface type (`bind:toClass:`/`bind:toProtocol:`). An instance that is not a
    /// `T` is refused: "Instance … does not conform to the T protocol".
    public func bind<T>(_ instance: Any, to type: T.Type, named name: String? = nil) {
        let key = ServiceKey(T.self, name: name)
        guard instance is T else {
            errors.append(.doesNotConform(instance: String(reflecting: Swift.type(of: instance)), key: key))
            return
        }
        add(key, .instance(instance))
    }

    /// Binds an instance under a string key.
    public func bind(_ instance: Any, toKey key: ServiceKey) { add(key, .instance(instance)) }

    /// Binds a block (`bindBlock:`): it receives the injector but not the arguments, and may return nil.
    public func bindBlock<T>(
        to type: T.Type, named name: String? = nil, scope: Scope = .normal,
        _ block: @escaping (Injector) throws -> T?
    ) {
        add(ServiceKey(T.self, name: name), .provider(scope) { injector, _ in try block(injector) })
    }

    /// Binds a provider (`bindProvider:`): it receives the injector and the caller's arguments.
    public func bindProvider<T>(
        to type: T.Type, named name: String? = nil, scope: Scope = .normal,
        _ provider: @escaping (Injector, [Any]) throws -> T?
    ) {
        add(ServiceKey(T.self, name: name), .provider(scope) { try provider($0, $1) })
    }

    /// Binds a provider under a string key (used for module-file bindings called through libffi).
    public func bindProvider(
        toKey key: ServiceKey, scope: Scope = .normal,
        _ provider: @escaping (Injector, [Any]) throws -> Any?
    ) {
        add(key, .provider(scope, provider))
    }

    /// Binds an implementation class to an interface (`bindClass:toProtocol:`/`bindClass:toClass:`). The
    /// implementation is built, injected and awoken; `scope` overrides the class's own.
    public func bindClass<Impl: Injectable, T>(
        _ implementation: Impl.Type, to type: T.Type,
        named name: String? = nil, scope: Scope? = nil
    ) {
        add(ServiceKey(T.self, name: name), .type(scope, implementation, check: { $0 is T }))
    }

    /// Promotes or demotes a class to a scope (`bindClass:inScope:`).
    public func bindClass<C: Injectable>(_ type: C.Type, inScope scope: Scope, named name: String? = nil) {
        add(ServiceKey(C.self, name: name), .type(scope, type, check: nil))
    }

    /// Instantiates the singleton for `T` when the injector is created (`registerEagerSingleton:`).
    public func registerEagerSingleton<T>(_ type: T.Type, named name: String? = nil) {
        eagerSingletons.append(ServiceKey(T.self, name: name))
    }

    public func hasBinding<T>(for type: T.Type, named name: String? = nil) -> Bool {
        bindings[ServiceKey(T.self, name: name)] != nil
    }
}
