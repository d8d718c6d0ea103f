import CHubPlugin

/// A component model (Hub's HUBComponentModel), read through the host.
///
/// The model itself is owned by the host; a `HubModel` is a cheap handle that reads its fields on demand. A model
/// passed to ``HubComponent/configureView(with:containerSize:)`` stays valid until the component is configured
/// with another model, prepared for reuse, or destroyed, so a component may keep it until then (and must drop it
/// in ``HubComponent/prepareViewForReuse()``). A model passed to
/// ``HubComponent/preferredViewSize(for:containerSize:)`` is valid only for that call.
///
/// Use the first-class fields as documented (title for the most prominent text, then subtitle, …) and `custom`
/// only for what they cannot express.
public struct HubModel {
    let host: HubHost
    let handle: OpaquePointer

    init(_ handle: OpaquePointer, host: HubHost = .current) {
        self.handle = handle
        self.host = host
    }

    private func string(_ field: hub_model_field) -> String? {
        swiftString(host.table.pointee.model_string?(host.table, handle, field))
    }

    private func json(_ which: hub_model_dictionary) -> String? {
        swiftString(host.table.pointee.model_json?(host.table, handle, which))
    }

    // MARK: - Identity

    /// The model identifier ("id"), unique in its view.
    public var id: String? { string(HUB_MODEL_ID) }
    /// "namespace:name".
    public var componentIdentifier: String? { string(HUB_MODEL_COMPONENT_ID) }
    /// The namespace part of ``componentIdentifier`` (the factory's namespace).
    public var componentNamespace: String? { string(HUB_MODEL_COMPONENT_NAMESPACE) }
    /// The name part of ``componentIdentifier`` (what the factory was asked for).
    public var componentName: String? { string(HUB_MODEL_COMPONENT_NAME) }
    /// The component category ("row", "card", …), used for fallbacks.
    public var category: String? { string(HUB_MODEL_CATEGORY) }
    /// The group the model belongs to.
    public var group: String? { string(HUB_MODEL_GROUP) }

    // MARK: - Text

    /// The most prominent text.
    public var title: String? { string(HUB_MODEL_TITLE) }
    /// The second most prominent text.
    public var subtitle: String? { string(HUB_MODEL_SUBTITLE) }
    /// A short text shown at the trailing edge (a duration, a count).
    public var accessoryTitle: String? { string(HUB_MODEL_ACCESSORY) }
    /// Longer descriptive text.
    public var descriptionText: String? { string(HUB_MODEL_DESCRIPTION) }

    // MARK: - Images

    /// The URI of the main image.
    public var mainImageURI: String? { imageURI(.main) }
    /// The URI of the background image.
    public var backgroundImageURI: String? { imageURI(.background) }

    /// The URI of an image; `customID` names the key in `images.custom` for ``HubImageKind/custom``.
    public func imageURI(_ kind: HubImageKind, customID: String? = nil) -> String? {
        withOptionalCString(customID) {
            swiftString(host.table.pointee.model_image_uri?(host.table, handle, kind.c, $0))
        }
    }

    // MARK: - Target

    /// The URI the component navigates to when selected.
    public var targetURI: String? { string(HUB_MODEL_TARGET_URI) }
    /// `target.custom` as JSON object text.
    public var targetCustomJSON: String? { json(HUB_MODEL_TARGET_CUSTOM) }

    // MARK: - Custom data

    /// `custom[key]` when it is a JSON string.
    public func customString(_ key: String) -> String? {
        key.withCString { swiftString(host.table.pointee.model_custom_string?(host.table, handle, $0)) }
    }

    /// `custom[key]` when it is a JSON number (or boolean: 1/0).
    public func customNumber(_ key: String) -> Double? {
        var value = 0.0
        let found = key.withCString { host.table.pointee.model_custom_number?(host.table, handle, $0, &value) }
        return found == true ? value : nil
    }

    /// `custom[key]` as a boolean: JSON `true`/`false` (or a non-zero number).
    public func customBool(_ key: String) -> Bool? {
        customNumber(key).map { $0 != 0 }
    }

    /// The whole `custom` dictionary as JSON object text, for components that parse it themselves.
    public var customJSON: String? { json(HUB_MODEL_CUSTOM) }
    /// The whole `custom` dictionary, parsed (for nested values; ``customString(_:)`` and ``customNumber(_:)``
    /// are cheaper for top-level scalars).
    public var custom: HubJSON? { customJSON.flatMap { HubJSON(parsing: $0) } }
    /// `metadata` as JSON object text.
    public var metadataJSON: String? { json(HUB_MODEL_METADATA) }
    /// `logging` as JSON object text.
    public var loggingJSON: String? { json(HUB_MODEL_LOGGING) }

    // MARK: - Children

    /// The number of child models.
    public var childCount: Int {
        host.table.pointee.model_child_count?(host.table, handle) ?? 0
    }

    /// Child `index`, or nil when out of range. Valid as long as this model is.
    public func child(at index: Int) -> HubModel? {
        guard index >= 0, let child = host.table.pointee.model_child?(host.table, handle, index) else { return nil }
        return HubModel(child, host: host)
    }

    /// All child models, in order.
    public var children: [HubModel] {
        (0..<childCount).compactMap { child(at: $0) }
    }
}

/// The three kinds of component images (Hub's HUBComponentImageType).
public enum HubImageKind: Sendable {
    case main, background, custom

    var c: hub_image_kind {
        switch self {
        case .main: return HUB_IMAGE_MAIN
        case .background: return HUB_IMAGE_BACKGROUND
        case .custom: return HUB_IMAGE_CUSTOM
        }
    }

    init(_ kind: hub_image_kind) {
        switch kind {
        case HUB_IMAGE_BACKGROUND: self = .background
        case HUB_IMAGE_CUSTOM: self = .custom
        default: self = .main
        }
    }
}
