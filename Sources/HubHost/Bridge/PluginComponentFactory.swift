import CHubPlugin
import HubCore

/// A plugin's `hub_component_factory` as a HubCore `ComponentFactory`, registered for one namespace.
final class PluginComponentFactory: ComponentFactory {
    let factory: UnsafePointer<hub_component_factory>
    let namespace: String
    weak var record: PluginRecord?
    /// Read once at registration: the table's list is static for the factory's life.
    let componentNames: [String]
    private(set) var isRetired = false

    init(_ factory: UnsafePointer<hub_component_factory>, namespace: String, record: PluginRecord) {
        self.factory = factory
        self.namespace = namespace
        self.record = record
        var names: [String] = []
        if CInterop.covers(factory.pointee.struct_size, \hub_component_factory.component_names),
            let listNames = factory.pointee.component_names,
            let list = CallRecorder.during(.componentNames, slot: record.callSlot, { listNames(factory) })
        {
            var i = 0
            while let name = list[i] {
                names.append(String(cString: name))
                i += 1
            }
        }
        self.componentNames = names
    }

    func createComponent(forName name: String) -> Component? {
        guard !isRetired, let record, record.codeCallable,
            CInterop.covers(factory.pointee.struct_size, \hub_component_factory.create_component),
            let create = factory.pointee.create_component
        else { return nil }
        var made = hub_component()
        let created = CallRecorder.during(.createComponent, slot: record.callSlot) {
            name.withCString { create(factory, $0, &made) }
        }
        guard created, let klass = made.klass else { return nil }
        if let problem = CInterop.shortTableProblem(klass, "hub_component_class") {
            // Its calls cannot be trusted to be what the plugin meant: drawn as a fallback, and said (exit 1).
            BoundaryValues.refuse(
                "create_component(\(TerminalText.quoted(namespace + ":" + name))): \(problem); drawn as a fallback",
                record: record)
            return nil
        }
        let missing = Self.missingMembers(of: klass.pointee)
        if !missing.isEmpty {
            // A NULL method would be skipped in silence (a row with no traits, drawn empty): the class is not what
            // the header asks for. The instance is freed when it can be.
            if let destroy = klass.pointee.destroy {
                CallRecorder.during(.destroy, slot: record.callSlot) { destroy(made.instance) }
            }
            BoundaryValues.refuse(
                "create_component(\(TerminalText.quoted(namespace + ":" + name))): its hub_component_class leaves "
                    + "\(missing.joined(separator: ", ")) NULL (layout_traits, preferred_view_size, draw_view and destroy "
                    + "must be set); drawn as a fallback",
                record: record)
            return nil
        }
        let component = PluginComponent(klass: klass, instance: made.instance, factory: self, record: record)
        record.track(component)
        return component
    }

    /// The members of `klass` the header requires that are NULL, by name: without them the host cannot size, lay
    /// out, draw or free an instance (`load_view`, `prepare_view_for_reuse`, `configure_view` and `get_extension`
    /// may be NULL: nothing to do).
    static func missingMembers(of klass: hub_component_class) -> [String] {
        var missing: [String] = []
        if klass.layout_traits == nil { missing.append("layout_traits") }
        if klass.preferred_view_size == nil { missing.append("preferred_view_size") }
        if klass.draw_view == nil { missing.append("draw_view") }
        if klass.destroy == nil { missing.append("destroy") }
        return missing
    }

    /// The namespace was unregistered: its live components are revoked, then the factory is told it is no longer
    /// used (`destroy`, once).
    func retire() {
        guard !isRetired else { return }
        isRetired = true
        record?.revokeLiveComponents(of: self)
        if record?.codeCallable == true, CInterop.covers(factory.pointee.struct_size, \hub_component_factory.destroy) {
            if let destroy = factory.pointee.destroy, let slot = record?.callSlot {
                CallRecorder.during(.factoryDestroy, slot: slot) { destroy(factory) }
            }
        }
    }
}
