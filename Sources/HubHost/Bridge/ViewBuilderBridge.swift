import CHubPlugin
import HubCore

/// The `hub_view_builder` a plugin draws with: each call appends to the host's `ViewBuilder`.
enum ViewBuilderBridge {
    /// Calls `body` with a builder table valid for the call, writing into `view`.
    static func withBuilder<R>(_ view: ViewBuilder, _ body: (UnsafePointer<hub_view_builder>) -> R) -> R {
        var table = hub_view_builder()
        table.struct_size = UInt32(MemoryLayout<hub_view_builder>.size)
        table.builder_data = Unmanaged.passUnretained(view).toOpaque()
        table.rect = { table, frame, style in
            ViewBuilderBridge.builder(table)?.rect(CInterop.rect(frame), CInterop.rectStyle(style))
        }
        table.text = { table, frame, text, style in
            ViewBuilderBridge.builder(table)?.text(
                CInterop.rect(frame), CInterop.string(text) ?? "", CInterop.textStyle(style))
        }
        table.image = { table, frame, uri, mode, placeholder in
            ViewBuilderBridge.builder(table)?.image(
                CInterop.rect(frame), uri: CInterop.string(uri),
                mode: ContentMode(rawValue: Int(mode.rawValue)) ?? .aspectFill,
                placeholder: Color(rgba: placeholder))
        }
        table.child = { table, frame, index in
            ViewBuilderBridge.builder(table)?.child(CInterop.rect(frame), index: Int(index))
        }
        return withUnsafePointer(to: &table) { body($0) }
    }

    static func builder(_ table: UnsafePointer<hub_view_builder>?) -> ViewBuilder? {
        guard let data = table?.pointee.builder_data else { return nil }
        return Unmanaged<ViewBuilder>.fromOpaque(data).takeUnretainedValue()
    }
}
