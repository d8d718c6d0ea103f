import HubPluginKit

/// The actions of the namespace "demo" (targets refer to them as "demo:log", "demo:delay").
final class DemoActions: HubActionFactory {
    func createAction(forName name: String) -> HubAction? {
        switch name {
        case "log":
            // A synchronous action needs no type of its own.
            return HubBlockAction { context in
                let title = context.componentModel?.title ?? "(no component)"
                HubLog.info("demo:log \(title) custom=\(context.customJSON ?? "{}")")
                return true
            }
        case "delay":
            return DelayAction()
        default:
            return nil
        }
    }
}

/// `demo:delay` — an asynchronous action: it finishes `custom.seconds` later (default 0.5) on the host's clock,
/// then, when `custom.then` names an action ("cdemo:log"), the host performs that one with the same custom data.
final class DelayAction: HubAction {
    private static let defaultSeconds = 0.5

    func perform(with context: HubActionContext, completion: HubActionCompletion) -> HubActionOutcome {
        let custom = context.custom
        let seconds = max(0, custom?["seconds"]?.numberValue ?? Self.defaultSeconds)
        let next = custom?["then"]?.stringValue
        let customJSON = context.customJSON
        // The completion is kept by the scheduled closure; the host keeps this action alive until it finishes.
        HubHost.current.schedule(after: seconds) {
            completion.finish(chaining: next, customJSON: customJSON)
        }
        return .pending
    }
}
