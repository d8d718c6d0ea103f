/// `namespace:name`, the identifier a model uses to name its component (Hub's HUBIdentifier).
public struct ComponentIdentifier: Hashable, Sendable, CustomStringConvertible {
    public var namespace: String
    public var name: String

    public init(namespace: String, name: String) {
        self.namespace = namespace
        self.name = name
    }

    /// Strict parse: exactly one colon. `"a:b:c"`, `""` and `"noColon"` give nil (action identifiers use this).
    public init?(strict string: String) {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        self.init(namespace: String(parts[0]), name: String(parts[1]))
    }

    /// Lenient parse as Hub's model builder does for `component.id`: a bare name takes `defaultNamespace`;
    /// extra parts after the second are dropped (`"a:b:c"` → `a:b`).
    public init(lenient string: String, defaultNamespace: String) {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count >= 2 {
            self.init(namespace: String(parts[0]), name: String(parts[1]))
        } else {
            self.init(namespace: defaultNamespace, name: string)
        }
    }

    public var description: String { "\(namespace):\(name)" }
}

/// Hub's defaults for a model that names no component (HUBComponentDefaults of the default fallback handler).
public enum ComponentDefaults {
    public static let namespace = "default"
    public static let name = "row"
    public static let category = "row"
}
