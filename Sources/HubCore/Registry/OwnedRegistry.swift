/// A key → value table where every entry records its owner: the shape shared by action factories, layout
/// managers and other plugin registrations. A taken key is refused (the first keeps it); revoking an owner
/// removes exactly its entries.
///
/// # Thread safety
/// Not thread-safe: used from the host's main thread.
public final class OwnedRegistry<Value> {
    public struct Entry {
        public let key: String
        public let value: Value
        public let owner: Owner
    }

    public enum Failure: Error, CustomStringConvertible {
        case taken(kind: String, key: String, owner: Owner, claimant: Owner)
        /// `RegisteredName.problem` of the key.
        case invalid(kind: String, key: String, claimant: Owner, reason: String)
        public var description: String {
            switch self {
            case .taken(let kind, let key, let owner, let claimant):
                return "\(kind) '\(key)' is already registered by \(owner); \(claimant) cannot claim it"
            case .invalid(let kind, let key, let claimant, let reason):
                return
                    "\(claimant) tried to register the invalid \(kind) \(TerminalText.quoted(key, limit: 60)): \(reason)"
            }
        }
    }

    /// What the registry holds, for messages ("action namespace", "layout manager").
    public let kind: String
    private var entries: [String: Entry] = [:]
    /// Told after an entry is removed.
    public var didRemove: [(Entry) -> Void] = []

    public init(kind: String) { self.kind = kind }

    public func register(_ value: Value, forKey key: String, owner: Owner) throws {
        if let reason = RegisteredName.problem(key) {
            throw Failure.invalid(kind: kind, key: key, claimant: owner, reason: reason)
        }
        if let existing = entries[key] {
            throw Failure.taken(kind: kind, key: key, owner: existing.owner, claimant: owner)
        }
        entries[key] = Entry(key: key, value: value, owner: owner)
    }

    /// Removes `key` (only when `owner` owns it, if given); unknown keys are a no-op.
    @discardableResult
    public func unregister(key: String, owner: Owner? = nil) -> Entry? {
        guard let entry = entries[key], owner == nil || entry.owner == owner else { return nil }
        entries[key] = nil
        for observer in didRemove { observer(entry) }
        return entry
    }

    @discardableResult
    public func unregisterAll(ownedBy owner: Owner) -> [Entry] {
        let owned = entries.values.filter { $0.owner == owner }.sorted { $0.key < $1.key }
        for entry in owned { unregister(key: entry.key, owner: owner) }
        return owned
    }

    public subscript(key: String) -> Value? { entries[key]?.value }
    public func entry(forKey key: String) -> Entry? { entries[key] }
    public var allEntries: [Entry] { entries.values.sorted { $0.key < $1.key } }
}
