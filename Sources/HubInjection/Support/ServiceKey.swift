/// What a registration is found by: an interface id plus an optional binding name (Objection's "Class:name").
///
/// Swift types become ids through `String(reflecting:)` (module-qualified, so two `Engine`s in two modules do not
/// collide as HIPInstanceLocator's `"\(T.self)"` keys do). Plugins use stable reverse-DNS strings instead of
/// metatypes, because a metatype points into an image that may be unloaded.
public struct ServiceKey: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let id: String
    public let name: String?

    public init(id: String, name: String? = nil) {
        self.id = id
        self.name = (name?.isEmpty ?? true) ? nil : name
    }

    public init<T>(_ type: T.Type, name: String? = nil) {
        self.init(id: ServiceKey.id(of: type), name: name)
    }

    /// The id of a Swift type.
    public static func id<T>(of type: T.Type) -> String { String(reflecting: type) }

    public var description: String { name.map { "\(id):\($0)" } ?? id }

    public static func < (a: ServiceKey, b: ServiceKey) -> Bool { a.description < b.description }
}
