import CHubPlugin

/// The host side of a component with children (Hub's HUBComponentChildDelegate), given to a
/// ``HubComponentWithChildren``. Valid until the host sets another delegate or destroys the component.
public final class HubChildDelegate {
    let table: UnsafePointer<hub_child_delegate>

    init(_ table: UnsafePointer<hub_child_delegate>) {
        self.table = table
    }

    /// Creates (or reuses) the child component for child model `index` of the current model, loads and
    /// configures it with the parent's size as its container, and returns its preferred size (zero when the
    /// index is out of range). Draw it with ``HubView/child(_:in:)``.
    @discardableResult
    public func createChild(at index: Int) -> Size {
        guard index >= 0, let create = table.pointee.create_child else { return .zero }
        return Size(create(table, index))
    }

    /// Tells the host child `index` became visible inside the component.
    public func willDisplayChild(at index: Int) {
        guard index >= 0 else { return }
        table.pointee.will_display_child?(table, index)
    }

    /// Tells the host child `index` is no longer visible inside the component.
    public func didStopDisplayingChild(at index: Int) {
        guard index >= 0 else { return }
        table.pointee.did_stop_displaying_child?(table, index)
    }

    /// Tells the host the user selected child `index`, drawn by the component itself. `customJSON` reaches the
    /// action context.
    public func childSelected(at index: Int, customJSON: String? = nil) {
        guard index >= 0 else { return }
        withOptionalCString(customJSON) { table.pointee.child_selected?(table, index, $0) }
    }
}
