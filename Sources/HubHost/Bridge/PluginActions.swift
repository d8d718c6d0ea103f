import CHubPlugin
import Foundation
import HubCore

/// A plugin's `hub_action_factory` as a HubCore `ActionFactory`.
final class PluginActionFactory: ActionFactory {
    let factory: UnsafePointer<hub_action_factory>
    weak var record: PluginRecord?
    private var isRetired = false

    init(_ factory: UnsafePointer<hub_action_factory>, record: PluginRecord) {
        self.factory = factory
        self.record = record
    }

    func createAction(forName name: String) -> Action? {
        guard !isRetired, let record, record.codeCallable,
              CInterop.covers(factory.pointee.struct_size, \hub_action_factory.create_action),
              let create = factory.pointee.create_action else { return nil }
        var action = hub_action()
        guard name.withCString({ create(factory, $0, &action) }), let klass = action.klass else { return nil }
        return PluginAction(klass: klass, instance: action.instance, record: record)
    }

    /// Unregistered: tell the plugin once (`destroy`), then create nothing more.
    func retire() {
        guard !isRetired else { return }
        isRetired = true
        if record?.codeCallable == true, CInterop.covers(factory.pointee.struct_size, \hub_action_factory.destroy) {
            factory.pointee.destroy?(factory)
        }
    }
}

/// A plugin's `hub_action` as a HubCore `Action`, asynchronous ones included.
final class PluginAction: Action {
    let klass: UnsafePointer<hub_action_class>
    let instance: UnsafeMutableRawPointer?
    weak var record: PluginRecord?
    private var destroyed = false

    init(klass: UnsafePointer<hub_action_class>, instance: UnsafeMutableRawPointer?, record: PluginRecord) {
        self.klass = klass
        self.instance = instance
        self.record = record
    }

    func perform(with context: ActionContext, completion: @escaping AsyncActionCompletion) -> ActionResult {
        guard !destroyed, record?.codeCallable == true,
              CInterop.covers(klass.pointee.struct_size, \hub_action_class.perform),
              let perform = klass.pointee.perform else { return .notPerformed }
        let finish = AsyncCompletion.make(completion)
        let result = ActionContextBridge.withCContext(context) { perform(instance, $0, finish) }
        switch result {
        case HUB_ACTION_PERFORMED: AsyncCompletion.discard(finish); return .performed
        case HUB_ACTION_PENDING: return .pending  // the plugin calls `finish` later, which frees it
        default: AsyncCompletion.discard(finish); return .notPerformed
        }
    }

    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if record?.codeCallable == true, CInterop.covers(klass.pointee.struct_size, \hub_action_class.destroy) {
            klass.pointee.destroy?(instance)
        }
    }
}

/// The `hub_action_completion` of one asynchronous action: heap-allocated, freed when `finish` is called (or at
/// once when the action did not go pending).
enum AsyncCompletion {
    private final class Box {
        let completion: AsyncActionCompletion
        init(_ completion: @escaping AsyncActionCompletion) { self.completion = completion }
    }

    static func make(_ completion: @escaping AsyncActionCompletion) -> UnsafeMutablePointer<hub_action_completion> {
        var c = hub_action_completion()
        c.struct_size = UInt32(MemoryLayout<hub_action_completion>.size)
        c.completion_data = Unmanaged.passRetained(Box(completion)).toOpaque()
        c.finish = { completion, chainID, chainJSON in
            guard let completion, let data = completion.pointee.completion_data else { return }
            let mutable = UnsafeMutablePointer(mutating: completion)
            mutable.pointee.completion_data = nil  // `finish` is called exactly once; a second call is ignored
            let box = Unmanaged<Box>.fromOpaque(data).takeRetainedValue()
            box.completion(CInterop.string(chainID).flatMap(ComponentIdentifier.init(strict:)), CInterop.jsonObject(chainJSON))
        }
        let pointer = UnsafeMutablePointer<hub_action_completion>.allocate(capacity: 1)
        pointer.initialize(to: c)
        return pointer
    }

    /// Frees a completion the plugin did not keep.
    static func discard(_ pointer: UnsafeMutablePointer<hub_action_completion>) {
        if let data = pointer.pointee.completion_data { Unmanaged<Box>.fromOpaque(data).release() }
        pointer.deallocate()
    }
}

/// A plugin's `hub_action_handler` as a HubCore `ActionHandler`.
final class PluginActionHandler: ActionHandler {
    let handler: UnsafePointer<hub_action_handler>
    weak var record: PluginRecord?

    init(_ handler: UnsafePointer<hub_action_handler>, record: PluginRecord) {
        self.handler = handler
        self.record = record
    }

    func handleAction(with context: ActionContext) -> Bool {
        guard record?.codeCallable == true, CInterop.covers(handler.pointee.struct_size, \hub_action_handler.handle),
              let handle = handler.pointee.handle else { return false }
        return ActionContextBridge.withCContext(context) { handle(handler, $0) }
    }
}

/// `ActionContext` as a `hub_action_context` valid for one call.
enum ActionContextBridge {
    static func withCContext<R>(_ context: ActionContext, _ body: (UnsafePointer<hub_action_context>) -> R) -> R {
        let customJSON = context.customData.map { JSONValue.object($0).jsonText }
        return withOptionalCString(context.actionIdentifier?.description) { actionID in
            withOptionalCString(customJSON) { json in
                withOptionalCString(context.viewURI) { viewURI in
                    withOptionalCString(context.viewModel?.identifier) { viewID in
                        var c = hub_action_context()
                        c.struct_size = UInt32(MemoryLayout<hub_action_context>.size)
                        c.trigger = hub_action_trigger(rawValue: UInt32(context.trigger.rawValue))
                        c.action_id = actionID
                        c.custom_json = json
                        c.view_uri = viewURI
                        c.view_id = viewID
                        c.component_model = context.componentModel.map(CInterop.handle)
                        return withUnsafePointer(to: &c) { body($0) }
                    }
                }
            }
        }
    }
}
