/// Hub's HUBComponentUIStateManager: UI states by model identifier, for one view. `restore` does not remove.
public final class UIStateManager {
    private var states: [String: String] = [:]
    public init() {}
    public func save(_ state: String, forModelIdentifier id: String) { states[id] = state }
    /// (An empty manager answers without hashing `id`: most views have no UI state at all.)
    public func restoreState(forModelIdentifier id: String) -> String? { states.isEmpty ? nil : states[id] }
    public func removeState(forModelIdentifier id: String) { if !states.isEmpty { states[id] = nil } }
    public var count: Int { states.count }
    /// Every saved state by model identifier.
    public var all: [String: String] { states }
}
