/// Who made a registration: a loaded plugin (one per load, so two versions of a plugin are two owners) or the
/// host itself. Every registration in hubhost records its owner, so unloading a plugin revokes exactly its own.
public struct Owner: Hashable, Sendable, CustomStringConvertible {
    /// Unique per load, e.g. "com.example.rows@1.2.0#3".
    public let id: String
    /// What messages call it, e.g. "com.example.rows 1.2.0 (librows.so)".
    public let displayName: String

    public init(id: String, displayName: String? = nil) {
        self.id = id
        self.displayName = displayName ?? id
    }

    public static let host = Owner(id: "hubhost", displayName: "hubhost")
    public var description: String { displayName }
}
