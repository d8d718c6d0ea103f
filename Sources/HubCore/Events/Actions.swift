/// The actions of a view (Hub's HUBActionRegistry plus the handler chain): action factories by namespace (the
/// plugin host's `OwnedRegistry`, so a duplicate namespace is refused and unregistering frees it), the action
/// handlers in registration order, and the default selection action.
public final class ActionRegistry {
    public let factories: OwnedRegistry<ActionFactory>
    /// The handlers, asked in order; the first returning true handles the action.
    public var handlers: () -> [ActionHandler]
    /// Opens a target URI for the default selection action; returns true when it was opened.
    public var uriOpener: (String) -> Bool

    public init(
        factories: OwnedRegistry<ActionFactory> = OwnedRegistry(kind: "action namespace"),
        handlers: @escaping () -> [ActionHandler] = { [] },
        uriOpener: @escaping (String) -> Bool = { _ in false }
    ) {
        self.factories = factories
        self.handlers = handlers
        self.uriOpener = uriOpener
    }

    /// Why a custom action could not be created.
    public enum LookupFailure: Error, Equatable, CustomStringConvertible {
        case unknownNamespace(String)
        case unknownName(ComponentIdentifier)
        /// The factory has the action, but what it returned was refused (the reason).
        case refused(ComponentIdentifier, String)
        /// The action would be the `limit`th chained from one trigger: actions that chain to each other without
        /// end (synchronously, that recursion would overflow the stack).
        case chainTooLong(ComponentIdentifier, limit: Int)
        public var description: String {
            switch self {
            case .unknownNamespace(let ns): return "no action factory for namespace '\(ns)'"
            case .unknownName(let id): return "the factory of '\(id.namespace)' has no action '\(id.name)'"
            case .refused(let id, let reason): return "action '\(id)' refused: \(reason)"
            case .chainTooLong(let id, let limit):
                return
                    "action '\(id)' not run: \(limit) actions already chained from one trigger (do they chain to each other without end?)"
            }
        }
    }

    /// Hub's createCustomActionForIdentifier: the namespace's factory makes the action for the name.
    public func createCustomAction(_ identifier: ComponentIdentifier) -> Result<Action, LookupFailure> {
        guard let factory = factories[identifier.namespace] else {
            return .failure(.unknownNamespace(identifier.namespace))
        }
        guard let action = factory.createAction(forName: identifier.name) else {
            if let reason = factory.refusal(forName: identifier.name) { return .failure(.refused(identifier, reason)) }
            return .failure(.unknownName(identifier))
        }
        return .success(action)
    }
}

/// Hub's default selection action: opens the component's target URI; not performed without one.
public final class SelectionAction: Action {
    let open: (String) -> Bool
    public init(open: @escaping (String) -> Bool) { self.open = open }
    public func perform(with context: ActionContext, completion: @escaping AsyncActionCompletion) -> ActionResult {
        guard let uri = context.componentModel?.target?.uri, !uri.isEmpty else { return .notPerformed }
        return open(uri) ? .performed : .notPerformed
    }
}

/// How one action ended.
public enum ActionOutcome: Equatable, CustomStringConvertible {
    case performed
    /// A handler returned true (index in the handler list); the action itself did not run.
    case handled(by: Int)
    case notPerformed
    /// An asynchronous action is running; the dispatcher keeps it alive until it finishes.
    case pending
    case failed(ActionRegistry.LookupFailure)

    /// Hub's Bool result: performed, handled or (for an async action) started.
    public var succeeded: Bool {
        switch self {
        case .performed, .handled, .pending: return true
        case .notPerformed, .failed: return false
        }
    }

    public var description: String {
        switch self {
        case .performed: return "performed"
        case .handled(let i): return "handled by handler \(i + 1)"
        case .notPerformed: return "not performed"
        case .pending: return "pending (asynchronous)"
        case .failed(let why): return "not performed: \(why)"
        }
    }
}

/// Runs actions as Hub's HUBActionHandlerWrapper does: picks the action (default selection or custom), lets the
/// handlers see it first, performs it, keeps asynchronous actions alive until they finish and runs the action
/// they chain to with the same trigger and models.
public final class ActionDispatcher {
    public let registry: ActionRegistry
    /// Told about every action handled, including chained ones: (context, outcome).
    public var didHandle: ((ActionContext, ActionOutcome) -> Void)?
    /// Told when an asynchronous action finishes: (context, chained-to identifier).
    public var didFinish: ((ActionContext, ComponentIdentifier?) -> Void)?
    /// Told when the default selection action opened (or failed to open) a URI.
    public var didOpenURI: ((String, Bool) -> Void)?
    /// Initial view models registered for a target URI while the default selection action runs (Hub's
    /// HUBInitialViewModelRegistry), so the destination can read it.
    public private(set) var initialViewModels: [String: JSONObject] = [:]

    private final class Running {
        let action: Action
        let context: ActionContext
        var finished = false
        init(action: Action, context: ActionContext) {
            self.action = action
            self.context = context
        }
    }
    /// Asynchronous actions still running, by token: retained here until they finish.
    private var running: [Int: Running] = [:]
    private var nextToken = 0

    public init(registry: ActionRegistry) { self.registry = registry }

    /// Asynchronous actions not finished yet.
    public var pendingCount: Int { running.count }

    /// How many actions one trigger may chain, one after another (Hub sets no limit; a plugin's actions that chain
    /// to each other as they finish would run for ever, and recurse when they finish inside `perform`).
    public static let chainLimit = 100

    @discardableResult
    public func handle(_ context: ActionContext) -> ActionOutcome { handle(context, chained: 0) }

    private func handle(_ context: ActionContext, chained: Int) -> ActionOutcome {
        let outcome: ActionOutcome
        if chained >= Self.chainLimit, let identifier = context.actionIdentifier {
            outcome = .failed(.chainTooLong(identifier, limit: Self.chainLimit))
        } else {
            outcome = run(context, chained: chained)
        }
        didHandle?(context, outcome)
        return outcome
    }

    private func run(_ context: ActionContext, chained: Int) -> ActionOutcome {
        let made: Result<Action, ActionRegistry.LookupFailure>
        var registeredURI: String?
        if let identifier = context.actionIdentifier {
            made = registry.createCustomAction(identifier)
        } else {
            let open = registry.uriOpener
            made = .success(
                SelectionAction { [weak self] uri in
                    let opened = open(uri)
                    self?.didOpenURI?(uri, opened)
                    return opened
                })
            if let target = context.componentModel?.target, let uri = target.uri, let initial = target.initialViewModel
            {
                initialViewModels[uri] = initial
                registeredURI = uri
            }
        }
        defer { if let registeredURI { initialViewModels[registeredURI] = nil } }

        for (index, handler) in registry.handlers().enumerated() where handler.handleAction(with: context) {
            if case .success(let action) = made { action.destroy() }
            return .handled(by: index)
        }
        let action: Action
        switch made {
        case .failure(let why): return .failed(why)
        case .success(let a): action = a
        }

        nextToken += 1
        let token = nextToken
        let state = Running(action: action, context: context)
        let result = action.perform(with: context) { [weak self] chainTo, customData in
            guard let self, !state.finished else { return }  // finishing twice is ignored
            state.finished = true
            self.running[token] = nil
            action.destroy()
            self.didFinish?(context, chainTo)
            guard let chainTo else { return }
            // Hub: a new context with the same trigger, URI and models; new identifier and custom data.
            var next = context
            next.actionIdentifier = chainTo
            next.customData = customData
            self.handle(next, chained: chained + 1)
        }
        switch result {
        case .pending:
            if !state.finished { running[token] = state }  // it may have finished inside perform
            return .pending
        case .performed:
            if !state.finished {
                state.finished = true
                action.destroy()
            }
            return .performed
        case .notPerformed:
            if !state.finished {
                state.finished = true
                action.destroy()
            }
            return .notPerformed
        }
    }
}
