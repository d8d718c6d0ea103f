import CHubPlugin

/// Keeps a Swift component factory alive behind `factory_data`, with its NULL-terminated name list.
final class FactoryBox {
    let factory: HubComponentFactory
    let names: UnsafeMutablePointer<UnsafePointer<CChar>?>

    init(_ factory: HubComponentFactory) {
        self.factory = factory
        names = makeCStringArray(factory.componentNames)
    }

    deinit { freeCStringArray(names) }
}

/// C factory tables for Swift factories: one heap table per registration, freed by the host's `destroy`.
enum FactoryBridge {
    static func make(_ factory: HubComponentFactory) -> UnsafePointer<hub_component_factory> {
        let table = UnsafeMutablePointer<hub_component_factory>.allocate(capacity: 1)
        table.initialize(
            to: hub_component_factory(
                struct_size: structSize(hub_component_factory.self),
                factory_data: Unmanaged.passRetained(FactoryBox(factory)).toOpaque(),
                create_component: { table, name, out in
                    guard let table, let name, let out else { return false }
                    let box = Unmanaged<FactoryBox>.fromOpaque(table.pointee.factory_data).takeUnretainedValue()
                    guard let component = box.factory.createComponent(forName: String(cString: name)) else {
                        return false
                    }
                    out.pointee = ComponentBridge.make(component)
                    return true
                },
                component_names: { table in
                    guard let table else { return nil }
                    return UnsafePointer(
                        Unmanaged<FactoryBox>.fromOpaque(table.pointee.factory_data).takeUnretainedValue().names)
                },
                destroy: { table in
                    guard let table else { return }
                    FactoryBridge.free(table)
                }
            ))
        return UnsafePointer(table)
    }

    /// Releases the factory and frees the table.
    static func free(_ table: UnsafePointer<hub_component_factory>) {
        Unmanaged<FactoryBox>.fromOpaque(table.pointee.factory_data).release()
        UnsafeMutablePointer(mutating: table).deallocate()
    }
}
