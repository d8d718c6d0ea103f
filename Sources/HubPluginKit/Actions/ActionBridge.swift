import CHubPlugin

final class ActionFactoryBox {
    let factory: HubActionFactory
    init(_ factory: HubActionFactory) { self.factory = factory }
}

final class ActionBox {
    let action: HubAction
    init(_ action: HubAction) { self.action = action }
}

final class ActionHandlerBox {
    let handler: HubActionHandler
    init(_ handler: HubActionHandler) { self.handler = handler }
}

/// C tables for Swift actions, action factories and handlers.
enum ActionBridge {
    /// Shared by every Swift action; each instance is an `ActionBox`, released by the host's `destroy`.
    static let actionClass = staticTable(
        hub_action_class(
            struct_size: structSize(hub_action_class.self),
            perform: { instance, context, completion in
                guard let context else { return HUB_ACTION_NOT_PERFORMED }
                let action = Unmanaged<ActionBox>.fromOpaque(instance!).takeUnretainedValue().action
                let swiftCompletion = HubActionCompletion(completion)
                switch action.perform(with: HubActionContext(context), completion: swiftCompletion) {
                case .performed:
                    swiftCompletion.invalidate()
                    return HUB_ACTION_PERFORMED
                case .notPerformed:
                    swiftCompletion.invalidate()
                    return HUB_ACTION_NOT_PERFORMED
                case .pending:
                    return HUB_ACTION_PENDING
                }
            },
            destroy: { Unmanaged<ActionBox>.fromOpaque($0!).release() }
        ))

    static func makeFactory(_ factory: HubActionFactory) -> UnsafePointer<hub_action_factory> {
        let table = UnsafeMutablePointer<hub_action_factory>.allocate(capacity: 1)
        table.initialize(
            to: hub_action_factory(
                struct_size: structSize(hub_action_factory.self),
                factory_data: Unmanaged.passRetained(ActionFactoryBox(factory)).toOpaque(),
                create_action: { table, name, out in
                    guard let table, let name, let out else { return false }
                    let box = Unmanaged<ActionFactoryBox>.fromOpaque(table.pointee.factory_data).takeUnretainedValue()
                    guard let action = box.factory.createAction(forName: String(cString: name)) else { return false }
                    out.pointee = hub_action(
                        klass: ActionBridge.actionClass, instance: Unmanaged.passRetained(ActionBox(action)).toOpaque())
                    return true
                },
                destroy: { table in
                    guard let table else { return }
                    ActionBridge.freeFactory(table)
                }
            ))
        return UnsafePointer(table)
    }

    static func freeFactory(_ table: UnsafePointer<hub_action_factory>) {
        Unmanaged<ActionFactoryBox>.fromOpaque(table.pointee.factory_data).release()
        UnsafeMutablePointer(mutating: table).deallocate()
    }

    static func makeHandler(_ handler: HubActionHandler) -> UnsafePointer<hub_action_handler> {
        staticTable(
            hub_action_handler(
                struct_size: structSize(hub_action_handler.self),
                handler_data: Unmanaged.passRetained(ActionHandlerBox(handler)).toOpaque(),
                handle: { table, context in
                    guard let table, let context else { return false }
                    let box = Unmanaged<ActionHandlerBox>.fromOpaque(table.pointee.handler_data).takeUnretainedValue()
                    return box.handler.handleAction(with: HubActionContext(context))
                }
            ))
    }

    static func freeHandler(_ table: UnsafePointer<hub_action_handler>) {
        Unmanaged<ActionHandlerBox>.fromOpaque(table.pointee.handler_data).release()
        UnsafeMutablePointer(mutating: table).deallocate()
    }
}

extension HubActionCompletion {
    /// Called when the action finished synchronously: the host's completion must not be used afterwards.
    func invalidate() {
        invalidateTable()
    }
}
