import HubCore

/// Objection's scopes: a new instance per get, or one per injector.
public enum Scope: String, Sendable {
    case normal
    case singleton
}

/// A class the injector can build and fill (Objection's registered classes, motion-objection's
/// `Objection::Compose`). Swift has no KVC, so a class declares its dependencies as key paths in `composition`.
/// Non-final classes declare `class var composition` so a subclass can override it.
public protocol Injectable: AnyObject {
    /// Objection's `-init`: used when the composition has no custom initializer.
    init()
    /// Declared dependencies, scope, custom initializer and `awoken` hooks.
    static var composition: Composition { get }
}

extension Injectable {
    public static var composition: Composition { Composition() }
}

/// What a class declares about how it is built: motion-objection's `compose_with`, `singleton`,
/// `initializer "sel", defaults…` and `awoken { }` in one value.
///
///     static var composition: Composition {
///         Composition(Car.self) { c in
///             c.requires(\.engine)
///             c.requires(\.brakes, named: "abs")
///             c.singleton()
///             c.awoken { car in car.ready = true }
///         }
///     }
public struct Composition {
    public struct Dependency {
        public let property: String
        public let key: ServiceKey
        /// Set when the dependency's type is itself `Injectable`: built on demand when nothing is bound.
        let buildable: Injectable.Type?
        /// Assigns a resolved value (nil allowed: a provider may return nil); false when the type does not fit.
        let assign: (AnyObject, Any?) -> Bool
        let expectedType: String
    }

    public struct Initializer {
        public let name: String
        public let defaults: [Any]
        let make: (Arguments) throws -> AnyObject
    }

    public internal(set) var dependencies: [Dependency] = []
    public internal(set) var scope: Scope?
    public internal(set) var initializer: Initializer?
    var awokenHooks: [(AnyObject) throws -> Void] = []
    public var awokenCount: Int { awokenHooks.count }

    public init() {}

    /// Declares the composition of `C`. With `inheriting`, the superclass's dependencies, hooks and initializer
    /// come first; on a property declared by both, the superclass's wins (motion-objection's merge order).
    public init<C: AnyObject>(
        _ type: C.Type, inheriting parent: Composition? = nil,
        _ build: (inout Builder<C>) -> Void
    ) {
        var builder = Builder<C>()
        build(&builder)
        self = builder.composition
        if let parent {
            let ownOnly = dependencies.filter { own in !parent.dependencies.contains { $0.property == own.property } }
            dependencies = parent.dependencies + ownOnly
            awokenHooks = parent.awokenHooks + awokenHooks
            scope = scope ?? parent.scope
            initializer = initializer ?? parent.initializer
        }
    }

    /// The builder `Composition.init` hands out, typed by the class being composed.
    public struct Builder<C: AnyObject> {
        var composition = Composition()

        /// Declares a dependency set after construction, keyed by the property's type (and `name`).
        /// `compose_with` replaces an earlier declaration of the same property.
        public mutating func requires<V>(
            _ path: ReferenceWritableKeyPath<C, V?>, named name: String? = nil,
            property: String? = nil
        ) {
            add(path, key: ServiceKey(V.self, name: name), property: property, buildable: nil)
        }

        /// The same for a dependency that is itself `Injectable`: built on demand when nothing is bound to it.
        public mutating func requires<V: Injectable>(
            _ path: ReferenceWritableKeyPath<C, V?>,
            named name: String? = nil, property: String? = nil
        ) {
            add(path, key: ServiceKey(V.self, name: name), property: property, buildable: name == nil ? V.self : nil)
        }

        /// A dependency bound under a string key (a plugin's interface id, a module-file binding).
        public mutating func requires<V>(
            _ path: ReferenceWritableKeyPath<C, V?>, key: ServiceKey,
            property: String? = nil
        ) {
            add(path, key: key, property: property, buildable: nil)
        }

        private mutating func add<V>(
            _ path: ReferenceWritableKeyPath<C, V?>, key: ServiceKey, property: String?,
            buildable: Injectable.Type?
        ) {
            let propertyName = property ?? Builder.propertyName(path)
            composition.dependencies.removeAll { $0.property == propertyName }
            composition.dependencies.append(
                Dependency(
                    property: propertyName, key: key, buildable: buildable,
                    assign: { object, value in
                        guard let target = object as? C else { return false }
                        guard let value else {
                            target[keyPath: path] = nil
                            return true
                        }
                        guard let typed = value as? V else { return false }
                        target[keyPath: path] = typed
                        return true
                    },
                    expectedType: String(reflecting: V.self)))
        }

        /// motion-objection's `singleton`: one instance per injector.
        public mutating func singleton() { composition.scope = .singleton }

        public mutating func scope(_ scope: Scope) { composition.scope = scope }

        /// motion-objection's `awoken { }`: may be declared several times; run in order once the dependencies are set.
        public mutating func awoken(_ hook: @escaping (C) throws -> Void) {
            composition.awokenHooks.append { object in
                if let target = object as? C { try hook(target) }
            }
        }

        /// Objection's `objection_initializer(sel, defaults…)`: builds instances with `defaults`, each replaced by
        /// the caller's argument at the same position.
        public mutating func initializer(
            _ name: String, defaults: [Any] = [],
            _ make: @escaping (Arguments) throws -> C
        ) {
            composition.initializer = Initializer(name: name, defaults: defaults) { try make($0) }
        }

        static func propertyName<V>(_ path: ReferenceWritableKeyPath<C, V?>) -> String {
            // "\Car.engine" → "engine"
            let text = "\(path)"
            return text.split(separator: ".").last.map(String.init) ?? text
        }
    }
}

/// The arguments an initializer or provider receives: the defaults, each replaced by the caller's argument at
/// the same position. Typed accessors fail with a message naming the initializer and position.
public struct Arguments {
    public let initializer: String
    public let values: [Any]

    public init(initializer: String, values: [Any]) {
        self.initializer = initializer
        self.values = values
    }

    /// Merges the caller's `arguments` over `defaults` position by position.
    public static func merge(defaults: [Any], caller: [Any]) -> [Any] {
        var merged = defaults
        for (index, value) in caller.enumerated() {
            if index < merged.count { merged[index] = value } else { merged.append(value) }
        }
        return merged
    }

    public var count: Int { values.count }

    /// The argument at `index` as `T`.
    public func at<T>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard index < values.count else {
            throw InjectionError.wrongArgumentCount(initializer: initializer, expected: index + 1, got: values.count)
        }
        guard let value = values[index] as? T else {
            throw InjectionError.badArgument(
                initializer: initializer, index: index, expected: String(reflecting: T.self),
                got: String(reflecting: Swift.type(of: values[index])))
        }
        return value
    }

    /// The argument at `index` as `T`, or nil when absent.
    public func optional<T>(_ index: Int, as type: T.Type = T.self) throws -> T? {
        index < values.count ? try at(index, as: type) : nil
    }
}
