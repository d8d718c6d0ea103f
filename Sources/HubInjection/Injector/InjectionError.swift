import HubCore

/// Everything the injector can refuse, with Objection's messages where Objection has one.
public enum InjectionError: Error, Equatable, CustomStringConvertible {
    /// `get` of a key nothing is bound to (and that is not an `Injectable` class to build on demand).
    case noBinding(ServiceKey)
    /// A declared dependency whose key has no binding (Objection: an unbound protocol-typed property).
    case unboundDependency(property: String, key: ServiceKey, in: String)
    /// A binding produced something the caller's or the property's type cannot hold.
    case wrongType(key: ServiceKey, expected: String, got: String)
    /// `bind(_:to:)` of an instance that is not of the interface type.
    case doesNotConform(instance: String, key: ServiceKey)
    case eagerSingletonNotSingleton(ServiceKey)
    /// A cycle that no singleton breaks; the path starts and ends with the same key.
    case cycle([ServiceKey])
    /// An initializer or provider argument of the wrong type.
    case badArgument(initializer: String, index: Int, expected: String, got: String)
    case wrongArgumentCount(initializer: String, expected: Int, got: Int)
    /// Arguments for a class without a custom initializer.
    case noInitializer(type: String, arguments: Int)
    /// A provider (or a module-file binding) failed; `message` says why.
    case providerFailed(ServiceKey, message: String)
    /// The key was bound, but its owner (a plugin) unloaded, which revoked the binding.
    case revoked(ServiceKey, owner: String)

    public var description: String {
        switch self {
        case .noBinding(let key):
            return "no binding for \(key)"
        case .unboundDependency(let property, let key, let type):
            return
                "Cannot find an instance that is bound to '\(key)' to assign to the property '\(property)' of \(type)"
        case .wrongType(let key, let expected, let got):
            return "\(key) produced \(got), which is not \(expected)"
        case .doesNotConform(let instance, let key):
            return "Instance \(instance) does not conform to the \(key) protocol"
        case .eagerSingletonNotSingleton(let key):
            return "Unable to initialize eager singleton for '\(key)' because it was never registered as a singleton"
        case .cycle(let path):
            // A singleton breaks a cycle only when it is cached before what it needs is made: a class singleton is;
            // a provider (a function a module file binds, with `requires`) needs its keys first, so it cannot.
            return "dependency cycle: " + path.map(\.description).joined(separator: " -> ")
                + " (only a class singleton, cached before its dependencies are set, breaks a cycle; a provider's "
                + "requirements are made before it runs)"
        case .badArgument(let initializer, let index, let expected, let got):
            return "argument \(index) of \(initializer) must be \(expected), got \(got)"
        case .wrongArgumentCount(let initializer, let expected, let got):
            return "\(initializer) takes \(expected) argument(s), got \(got)"
        case .noInitializer(let type, let arguments):
            return "\(type) has no custom initializer, so it cannot take \(arguments) argument(s)"
        case .providerFailed(let key, let message):
            return "\(key): \(message)"
        case .revoked(let key, let owner):
            return
                "no binding for \(key) any more: it was bound by \(owner), which unloaded (its bindings were revoked)"
        }
    }
}
