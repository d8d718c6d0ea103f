/// Selection states (Hub's HUBComponentSelectionState; the C ABI's `hub_selection_state`).
public enum SelectionState: Int, Sendable, Codable, CustomStringConvertible {
    case none = 0
    case highlighted = 1
    case selected = 2
    public var description: String { ["none", "highlighted", "selected"][rawValue] }
}

/// What triggered an action (Hub's HUBActionTrigger; the C ABI's `hub_action_trigger`).
public enum ActionTrigger: Int, Sendable, Codable {
    /// The user selected a component (the default selection action, or its target's actions).
    case selection = 0
    /// A component performed it through its action performer.
    case component = 1
    /// A content operation performed it.
    case contentOperation = 2
}
