import FoundationEssentials

/// Bound in every injector (Objection's JSObjectFactory): lets an object build others later, with arguments.
/// Holds its injector weakly.
public final class ObjectFactory {
    public private(set) weak var injector: Injector?

    init(injector: Injector) { self.injector = injector }

    public func get<T>(_ type: T.Type, named name: String? = nil, arguments: [Any] = []) throws -> T {
        guard let injector else { throw InjectionError.noBinding(ServiceKey(T.self, name: name)) }
        return try injector.get(type, named: name, arguments: arguments)
    }

    public func get<T>(_ type: T.Type, with first: Any, _ rest: Any...) throws -> T {
        try get(type, arguments: [first] + rest)
    }

    public subscript<T>(type: T.Type) -> T? { try? get(type) }
}
