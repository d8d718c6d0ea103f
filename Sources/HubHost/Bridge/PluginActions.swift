import CHubPlugin
import FoundationEssentials
import HubCore

/// A plugin's `hub_action_factory` as a HubCore `ActionFactory`.
final class PluginActionFactory: ActionFactory {
    let factory: UnsafePointer<hub_action_factory>
    weak var record: PluginRecord?
    private var isRetired = false
    /// Why the last action made for each name was refused (what the plugin returned cannot be called).
    private var refusals: [String: String] = [:]
    /// The factory's table, read once (it is static until `destroy`).
    private let methods: hub_action_factory

    init(_ factory: UnsafePointer<hub_action_factory>, record: PluginRecord) {
        self.factory = factory
        self.record = record
        self.methods = CInterop.copyTable(factory)
    }

    func createAction(forName name: String) -> Action? {
        guard !isRetired, let record, record.codeCallable, let create = methods.create_action else { return nil }
        var action = hub_action()
        let created = CallRecorder.during(.createAction, slot: record.callSlot) {
            name.withCString { create(factory, $0, &action) }
        }
        guard created, let klass = action.klass else { return nil }
        if let problem = CInterop.shortTableProblem(klass, "hub_action_class") {
            BoundaryValues.refuse(
                "create_action(\(TerminalText.quoted(name))): \(problem); not performed", record: record)
            if refusals.count < 1000 { refusals[name] = "\(record.displayName): create_action returned \(problem)" }
            return nil
        }
        refusals[name] = nil
        return PluginAction(klass: klass, instance: action.instance, record: record)
    }

    func refusal(forName name: String) -> String? { refusals[name] }

    /// Unregistered: tell the plugin once (`destroy`), then create nothing more.
    func retire() {
        guard !isRetired else { return }
        isRetired = true
        if let record, record.codeCallable, let destroy = methods.destroy {
            CallRecorder.during(.factoryDestroy, slot: record.callSlot) { destroy(factory) }
        }
    }
}

/// A plugin's `hub_action` as a HubCore `Action`, asynchronous ones included.
final class PluginAction: Action {
    let klass: UnsafePointer<hub_action_class>
    let instance: UnsafeMutableRawPointer?
    weak var record: PluginRecord?
    private var destroyed = false
    /// The class table, read once.
    private let methods: hub_action_class

    init(klass: UnsafePointer<hub_action_class>, instance: UnsafeMutableRawPointer?, record: PluginRecord) {
        self.klass = klass
        self.instance = instance
        self.record = record
        self.methods = CInterop.copyTable(klass)
    }

    func perform(with context: ActionContext, completion: @escaping AsyncActionCompletion) -> ActionResult {
        guard !destroyed, let record, record.codeCallable, let perform = methods.perform else { return .notPerformed }
        let finish = AsyncCompletion.make(completion)
        let result = ModelCStrings.borrowing {
            ActionContextBridge.withCContext(context) { c in
                CallRecorder.during(.actionPerform, slot: record.callSlot, model: context.componentModel) {
                    perform(instance, c, finish)
                }
            }
        }
        switch result {
        case HUB_ACTION_PERFORMED:
            AsyncCompletion.discard(finish)
            return .performed
        case HUB_ACTION_PENDING: return .pending  // the plugin calls `finish` later, which frees it
        default:
            AsyncCompletion.discard(finish)
            return .notPerformed
        }
    }

    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if let record, record.codeCallable, let destroy = methods.destroy {
            CallRecorder.during(.destroy, slot: record.callSlot) { destroy(instance) }
        }
    }
}

/// The `hub_action_completion` of one action: handed to `perform`, kept by the plugin until `finish` when the
/// action goes pending. Most actions finish synchronously, so the completions they did not keep go back to a
/// small pool for the next action instead of being allocated per action ([main-thread], as every action call).
enum AsyncCompletion {
    private final class Slot {
        var completion: AsyncActionCompletion?
        /// Once finished, the struct is never freed, so a (wrong) second `finish` still reads valid memory.
        var finished = false
        let pointer = UnsafeMutablePointer<hub_action_completion>.allocate(capacity: 1)
        init() {
            var c = hub_action_completion()
            c.struct_size = UInt32(MemoryLayout<hub_action_completion>.size)
            c.finish = { completion, chainID, chainJSON in
                guard let completion, let data = completion.pointee.completion_data else { return }
                let mutable = UnsafeMutablePointer(mutating: completion)
                mutable.pointee.completion_data = nil  // `finish` is called exactly once; a second call is ignored
                let slot = Unmanaged<Slot>.fromOpaque(data).takeRetainedValue()
                let body = slot.completion
                slot.completion = nil
                slot.finished = true
                // A finished completion is not reused: the plugin still has its address.
                body?(
                    CInterop.string(chainID).flatMap(ComponentIdentifier.init(strict:)), CInterop.jsonObject(chainJSON))
            }
            pointer.initialize(to: c)
        }
        deinit { if !finished { pointer.deallocate() } }
    }

    @exclusivity(unchecked) private static var pool: [Slot] = []

    static func make(_ completion: @escaping AsyncActionCompletion) -> UnsafeMutablePointer<hub_action_completion> {
        let slot = pool.popLast() ?? Slot()
        slot.completion = completion
        // Retained while the plugin may call `finish`; `finish` or `discard` releases it.
        slot.pointer.pointee.completion_data = Unmanaged.passRetained(slot).toOpaque()
        return slot.pointer
    }

    /// Takes back a completion the plugin did not keep (the action did not go pending) for the next action.
    static func discard(_ pointer: UnsafeMutablePointer<hub_action_completion>) {
        guard let data = pointer.pointee.completion_data else { return }  // finished inside perform
        pointer.pointee.completion_data = nil
        let slot = Unmanaged<Slot>.fromOpaque(data).takeRetainedValue()
        slot.completion = nil
        if pool.count < 8 { pool.append(slot) }
    }
}

/// A plugin's `hub_action_handler` as a HubCore `ActionHandler`.
final class PluginActionHandler: ActionHandler {
    let handler: UnsafePointer<hub_action_handler>
    weak var record: PluginRecord?
    /// The handler's table, read once (it is static until unload).
    private let methods: hub_action_handler

    init(_ handler: UnsafePointer<hub_action_handler>, record: PluginRecord) {
        self.handler = handler
        self.record = record
        self.methods = CInterop.copyTable(handler)
    }

    func handleAction(with context: ActionContext) -> Bool {
        guard let record, record.codeCallable, let handle = methods.handle else { return false }
        return ModelCStrings.borrowing {
            ActionContextBridge.withCContext(context) { c in
                CallRecorder.during(.actionHandler, slot: record.callSlot, model: context.componentModel) {
                    handle(handler, c)
                }
            }
        }
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
