import CHubPlugin
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// The model readers and text measurement of the host table (`model_*`, `measure_text`). They are the calls a
/// plugin makes most (several per component per frame), so each answers from the model's fixed string slots
/// (`ModelCStrings`) and measures text on the plugin's UTF-8 bytes without making Swift strings.
enum ModelBridge {
    static func install(into table: inout hub_host) {
        // Strings are cached on the model, so they live exactly as long as it does.
        table.model_string = { host, handle, field in
            guard HostTable.onHostThread(host, "model_string") else { return nil }
            return CInterop.withModel(handle) { model in ModelCStrings.forReading(model).field(field, of: model) }
        }
        table.model_json = { host, handle, which in
            guard HostTable.onHostThread(host, "model_json") else { return nil }
            guard let model = CInterop.model(handle) else { return nil }
            return ModelCStrings.forReading(model).json(which) {
                let object: JSONObject?
                switch which {
                case HUB_MODEL_CUSTOM: object = model.custom
                case HUB_MODEL_METADATA: object = model.metadata
                case HUB_MODEL_LOGGING: object = model.logging
                case HUB_MODEL_TARGET_CUSTOM: object = model.target?.custom
                default: object = nil
                }
                return object.map { JSONValue.object($0).jsonText }
            }
        }
        table.model_custom_string = { host, handle, key in
            guard HostTable.onHostThread(host, "model_custom_string") else { return nil }
            guard let key else { return nil }
            return CInterop.withModel(handle) { model in
                ModelCStrings.forReading(model).keyed(.custom, key) { model.custom?[$0]?.stringValue }
            }
        }
        table.model_custom_number = { host, handle, key, out in
            guard HostTable.onHostThread(host, "model_custom_number") else { return false }
            guard let model = CInterop.model(handle), let key = CInterop.string(key),
                let value = model.custom?[key]?.numberValue, let out
            else { return false }
            out.pointee = value
            return true
        }
        table.model_image_uri = { host, handle, kind, customID in
            guard HostTable.onHostThread(host, "model_image_uri") else { return nil }
            guard let model = CInterop.model(handle), let kind = ImageData.Kind(rawValue: Int(kind.rawValue)) else {
                return nil
            }
            switch kind {
            case .main, .background:
                return ModelCStrings.forReading(model).image(kind) { model.imageData(kind)?.uri }
            case .custom:
                guard let customID else { return nil }  // a custom image needs its id
                return ModelCStrings.forReading(model).keyed(.customImage, customID) {
                    model.imageData(.custom, identifier: $0)?.uri
                }
            }
        }
        table.model_child_count = { host, handle in
            guard HostTable.onHostThread(host, "model_child_count") else { return 0 }
            return CInterop.model(handle)?.children.count ?? 0
        }
        table.model_child = { host, handle, index in
            guard HostTable.onHostThread(host, "model_child") else { return nil }
            guard let child = CInterop.model(handle)?.child(at: Int(index)) else { return nil }
            return CInterop.handle(child)
        }

        table.measure_text = { _, text, style, maxWidth in
            let style = CInterop.textStyle(style)
            let maxWidth = BoundaryValues.maxWidth(maxWidth)
            guard let text else { return CInterop.size(TextMetrics.measure("", style: style, maxWidth: maxWidth)) }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
            return CInterop.size(TextMetrics.measure(utf8: bytes, style: style, maxWidth: maxWidth))
        }
    }
}
