import CHubPlugin

/// What an action is performed with (Hub's HUBActionContext). Valid only during the call it is passed to.
public struct HubActionContext {
    /// What triggered the action.
    public var trigger: HubActionTrigger
    /// "namespace:name"; nil for the default selection action.
    public var actionIdentifier: String?
    /// The action's custom data as JSON object text.
    public var customJSON: String?
    /// The action's custom data, parsed.
    public var custom: HubJSON? { customJSON.flatMap { HubJSON(parsing: $0) } }
    /// The URI of the view the action happens in.
    public var viewURI: String?
    /// The identifier of the view model.
    public var viewIdentifier: String?
    /// The model of the component involved (nil for content operations).
    public var componentModel: HubModel?

    init(_ context: UnsafePointer<hub_action_context>) {
        let c = context.pointee
        switch c.trigger {
        case HUB_TRIGGER_COMPONENT: trigger = .component
        case HUB_TRIGGER_CONTENT_OPERATION: trigger = .contentOperation
        default: trigger = .selection
        }
        actionIdentifier = swiftString(c.action_id)
        customJSON = swiftString(c.custom_json)
        viewURI = swiftString(c.view_uri)
        viewIdentifier = swiftString(c.view_id)
        componentModel = c.component_model.map { HubModel($0) }
    }
}

/// The outcome of ``HubAction/perform(with:completion:)``.
public enum HubActionOutcome: Sendable {
    /// Done.
    case performed
    /// The action did nothing (for example it does not apply to this context).
    case notPerformed
    /// Asynchronous: the action keeps the ``HubActionCompletion`` and calls ``HubActionCompletion/finish(chaining:customJSON:)``
    /// later. The host keeps the action alive until then.
    case pending
}

/// An action (Hub's HUBAction), created fresh for each event by a ``HubActionFactory``.
///
/// # Implementation requirements
/// Return ``HubActionOutcome/pending`` only after storing `completion` somewhere that calls
/// ``HubActionCompletion/finish(chaining:customJSON:)`` exactly once (for example a closure given to
/// ``HubHost/schedule(after:_:)``). Synchronous actions ignore `completion`.
///
/// - Important: Called on the host's main thread.
public protocol HubAction: AnyObject {
    func perform(with context: HubActionContext, completion: HubActionCompletion) -> HubActionOutcome
}

/// A synchronous action from a closure: `HubBlockAction { context in ...; return true }`.
public final class HubBlockAction: HubAction {
    private let body: (HubActionContext) -> Bool

    /// `body` returns true when it performed the action.
    public init(_ body: @escaping (HubActionContext) -> Bool) {
        self.body = body
    }

    public func perform(with context: HubActionContext, completion: HubActionCompletion) -> HubActionOutcome {
        body(context) ? .performed : .notPerformed
    }
}

/// How an asynchronous action finishes. Keep it until you call ``finish(chaining:customJSON:)``, exactly once.
public final class HubActionCompletion {
    private var table: UnsafePointer<hub_action_completion>?

    init(_ table: UnsafePointer<hub_action_completion>?) {
        self.table = table
    }

    /// Finishes the action. When `actionIdentifier` ("namespace:name") is given the host then performs that
    /// action with `customJSON` and the same trigger and models. Later calls do nothing.
    public func finish(chaining actionIdentifier: String? = nil, customJSON: String? = nil) {
        guard let table else { return }
        self.table = nil
        withOptionalCString(actionIdentifier) { id in
            withOptionalCString(customJSON) { json in table.pointee.finish?(table, id, json) }
        }
    }

    /// True once ``finish(chaining:customJSON:)`` was called (or the action finished synchronously).
    public var isFinished: Bool { table == nil }

    func invalidateTable() {
        table = nil
    }
}

/// Creates actions by name for one action namespace (Hub's HUBActionFactory). Register it with
/// ``HubRegistrar/registerActionFactory(_:forNamespace:)``.
public protocol HubActionFactory: AnyObject {
    /// A new action for `name` (the part after "namespace:"), or nil when there is none.
    func createAction(forName name: String) -> HubAction?
}

/// Sees every action before it runs (Hub's HUBActionHandler). Register it with
/// ``HubRegistrar/registerActionHandler(_:)``.
public protocol HubActionHandler: AnyObject {
    /// Returns true when it handled the action: the action itself then does not run.
    func handleAction(with context: HubActionContext) -> Bool
}

/// Performs actions on behalf of a ``HubComponentActionPerformer``. Valid until the component is destroyed.
public final class HubActionPerformer {
    let table: UnsafePointer<hub_action_performer>

    init(_ table: UnsafePointer<hub_action_performer>) {
        self.table = table
    }

    /// Performs `actionIdentifier` ("namespace:name") with `customJSON`; returns true when it was performed or
    /// handled.
    @discardableResult
    public func perform(_ actionIdentifier: String, customJSON: String? = nil) -> Bool {
        actionIdentifier.withCString { id in
            withOptionalCString(customJSON) { json in table.pointee.perform?(table, id, json) ?? false }
        }
    }
}
