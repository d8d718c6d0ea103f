import CHubPlugin

final class LayoutManagerBox {
    let manager: HubLayoutManager
    init(_ manager: HubLayoutManager) { self.manager = manager }
}

/// C tables for Swift layout managers.
enum LayoutManagerBridge {
    static func make(_ manager: HubLayoutManager) -> UnsafePointer<hub_layout_manager> {
        staticTable(
            hub_layout_manager(
                struct_size: structSize(hub_layout_manager.self),
                manager_data: Unmanaged.passRetained(LayoutManagerBox(manager)).toOpaque(),
                margin_to_edge: { table, traits, edge in
                    LayoutManagerBridge.box(table).marginToContentEdge(
                        HubContentEdge(edge), for: LayoutManagerBridge.traitSet(traits))
                },
                vertical_margin_to_header: { table, traits, header in
                    LayoutManagerBridge.box(table).verticalMarginToHeader(
                        for: LayoutManagerBridge.traitSet(traits), headerTraits: LayoutManagerBridge.traitSet(header))
                },
                horizontal_margin: { table, traits, preceding in
                    LayoutManagerBridge.box(table).horizontalMargin(
                        for: LayoutManagerBridge.traitSet(traits), preceding: LayoutManagerBridge.traitSet(preceding))
                },
                vertical_margin: { table, traits, preceding in
                    LayoutManagerBridge.box(table).verticalMargin(
                        for: LayoutManagerBridge.traitSet(traits), preceding: LayoutManagerBridge.traitSet(preceding))
                },
                horizontal_offset: { table, row, count, leading, trailing in
                    let rows =
                        row.map { pointer in (0..<count).map { LayoutManagerBridge.traitSet(pointer[$0]) } } ?? []
                    return LayoutManagerBridge.box(table).horizontalOffset(
                        forRow: rows, leading: leading, trailing: trailing)
                }
            ))
    }

    static func free(_ table: UnsafePointer<hub_layout_manager>) {
        Unmanaged<LayoutManagerBox>.fromOpaque(table.pointee.manager_data).release()
        UnsafeMutablePointer(mutating: table).deallocate()
    }

    static func box(_ table: UnsafePointer<hub_layout_manager>?) -> HubLayoutManager {
        Unmanaged<LayoutManagerBox>.fromOpaque(table!.pointee.manager_data).takeUnretainedValue().manager
    }

    /// The traits of a `hub_traits` (borrowed for the call).
    static func traitSet(_ traits: hub_traits) -> Set<LayoutTrait> {
        guard let names = traits.names else { return [] }
        return Set((0..<traits.count).compactMap { names[$0].map { LayoutTrait(rawValue: String(cString: $0)) } })
    }
}
