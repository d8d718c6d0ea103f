import CHubPlugin
import HubCore

/// A plugin's `hub_layout_manager` as a HubCore `LayoutManager`. After its plugin unloads it answers 0 for every
/// margin instead of calling unmapped code.
final class PluginLayoutManager: LayoutManager {
    let manager: UnsafePointer<hub_layout_manager>
    weak var record: PluginRecord?

    init(_ manager: UnsafePointer<hub_layout_manager>, record: PluginRecord) {
        self.manager = manager
        self.record = record
    }

    /// Runs a call into the plugin's layout manager, noted for fault reports; the margin it returns is checked.
    private func margin(_ call: String, _ body: () -> Double) -> Double {
        let value = CallRecorder.during(.layoutManager, slot: record?.callSlot ?? 0, body)
        return BoundaryValues.margin(value, record: record, call: "its layout manager's \(call)")
    }

    private func function<U>(_ member: KeyPath<hub_layout_manager, U?>) -> U? {
        guard record?.codeCallable == true, CInterop.covers(manager.pointee.struct_size, member) else { return nil }
        // Only the member's own bytes are read (the struct may be shorter than this host's view of it).
        guard let offset = MemoryLayout<hub_layout_manager>.offset(of: member) else { return nil }
        return UnsafeRawPointer(manager).load(fromByteOffset: offset, as: U?.self)
    }

    /// Calls `body` with `traits` as a `hub_traits` (sorted names) valid for the call.
    private static func withTraits<R>(_ traits: Set<LayoutTrait>, _ body: (hub_traits) -> R) -> R {
        let names = traits.sortedNames
        return CInterop.withCStrings(names) { body(hub_traits(names: $0, count: names.count)) }
    }

    func marginBetweenComponent(withTraits traits: Set<LayoutTrait>, andContentEdge edge: ContentEdge) -> Double {
        guard let margin = function(\.margin_to_edge) else { return 0 }
        return self.margin("margin_to_edge") {
            Self.withTraits(traits) { margin(manager, $0, hub_content_edge(rawValue: UInt32(edge.rawValue))) }
        }
    }

    func verticalMarginBetweenComponent(
        withTraits traits: Set<LayoutTrait>,
        andHeaderWithTraits headerTraits: Set<LayoutTrait>
    ) -> Double {
        guard let margin = function(\.vertical_margin_to_header) else { return 0 }
        return self.margin("vertical_margin_to_header") {
            Self.withTraits(traits) { t in Self.withTraits(headerTraits) { h in margin(manager, t, h) } }
        }
    }

    func horizontalMarginForComponent(withTraits traits: Set<LayoutTrait>, precedingTraits: Set<LayoutTrait>) -> Double
    {
        guard let margin = function(\.horizontal_margin) else { return 0 }
        // HUB_MARGIN_NEW_ROW is DBL_MAX, HubCore's `.greatestFiniteMagnitude`: the same value, passed through.
        return self.margin("horizontal_margin") {
            Self.withTraits(traits) { t in Self.withTraits(precedingTraits) { p in margin(manager, t, p) } }
        }
    }

    func verticalMarginForComponent(withTraits traits: Set<LayoutTrait>, precedingTraits: Set<LayoutTrait>) -> Double {
        guard let margin = function(\.vertical_margin) else { return 0 }
        return self.margin("vertical_margin") {
            Self.withTraits(traits) { t in Self.withTraits(precedingTraits) { p in margin(manager, t, p) } }
        }
    }

    func horizontalOffsetForComponents(
        withTraits row: [Set<LayoutTrait>], firstComponentLeadingOffset: Double,
        lastComponentTrailingOffset: Double
    ) -> Double {
        guard let offset = function(\.horizontal_offset) else { return 0 }
        // Every trait name of the row in one C-string array, sliced per component.
        let names = row.map(\.sortedNames)
        return margin("horizontal_offset") {
            CInterop.withCStrings(names.flatMap { $0 }) { all in
                var start = 0
                var rows: [hub_traits] = []
                for list in names {
                    rows.append(hub_traits(names: all.map { $0 + start }, count: list.count))
                    start += list.count
                }
                return rows.withUnsafeBufferPointer {
                    offset(manager, $0.baseAddress, row.count, firstComponentLeadingOffset, lastComponentTrailingOffset)
                }
            }
        }
    }
}
