/// The result of performing an action.
public enum ActionResult: Sendable, Equatable {
    case notPerformed
    case performed
    /// Asynchronous: the action calls its completion later (see `AsyncActionCompletion`).
    case pending
}

/// Finishes an asynchronous action, optionally chaining to another action.
public typealias AsyncActionCompletion = (_ chainTo: ComponentIdentifier?, _ customData: JSONObject?) -> Void

/// An action (Hub's HUBAction / HUBAsyncAction), created fresh for each event.
public protocol Action: AnyObject {
    func perform(with context: ActionContext, completion: @escaping AsyncActionCompletion) -> ActionResult
    /// Releases what the action holds outside Swift; called once when it is finished.
    func destroy()
}

extension Action { public func destroy() {} }

/// Creates actions for names in one action namespace (Hub's HUBActionFactory).
public protocol ActionFactory: AnyObject {
    func createAction(forName name: String) -> Action?
    /// Why the factory made no action for `name` although it has one by that name (the host refused what it
    /// returned); nil when it simply has none. Said with every lookup that fails, not only the first.
    func refusal(forName name: String) -> String?
}

extension ActionFactory {
    public func refusal(forName name: String) -> String? { nil }
}

/// Sees every action before it runs (Hub's HUBActionHandler); returning true means handled.
public protocol ActionHandler: AnyObject {
    func handleAction(with context: ActionContext) -> Bool
}
