/// Where a component model sits in its view.
public enum ComponentType: String, Sendable, Codable {
    case header, body, overlay
}

/// Image data of a component model (Hub's HUBComponentImageData).
public struct ImageData: Hashable, Sendable {
    public enum Kind: Int, Sendable, Codable { case main = 0, background = 1, custom = 2 }
    public var kind: Kind
    /// The key in `images.custom` for custom images.
    public var identifier: String?
    public var uri: String?
    public var placeholder: String?
    public var local: String?
    public var custom: JSONObject?

    public init(kind: Kind, identifier: String? = nil, uri: String? = nil, placeholder: String? = nil,
                local: String? = nil, custom: JSONObject? = nil) {
        self.kind = kind; self.identifier = identifier; self.uri = uri
        self.placeholder = placeholder; self.local = local; self.custom = custom
    }
}

/// The target of a component model (Hub's HUBComponentTarget).
public struct Target: Hashable, Sendable {
    public var uri: String?
    /// Action identifiers in order, without duplicates.
    public var actions: [ComponentIdentifier]
    /// A pre-loaded view model for the destination, as raw JSON.
    public var initialViewModel: JSONObject?
    public var custom: JSONObject?

    public init(uri: String? = nil, actions: [ComponentIdentifier] = [], initialViewModel: JSONObject? = nil,
                custom: JSONObject? = nil) {
        self.uri = uri; self.actions = actions; self.initialViewModel = initialViewModel; self.custom = custom
    }
}

/// A component model (Hub's HUBComponentModel). A class so that 100k models share storage cheaply and a plugin
/// can hold an opaque handle to one; treat it as immutable once built.
public final class ComponentModel: @unchecked Sendable {
    public let identifier: String
    public let type: ComponentType
    /// Position among its siblings.
    public let index: Int
    /// Indexes from the root down to this model (`[3, 1]` is child 1 of body item 3).
    public let indexPath: [Int]
    public let groupIdentifier: String?
    public let componentIdentifier: ComponentIdentifier
    public let componentCategory: String
    public let title: String?
    public let subtitle: String?
    public let accessoryTitle: String?
    public let descriptionText: String?
    public let mainImage: ImageData?
    public let backgroundImage: ImageData?
    /// Custom images by key, in key order.
    public let customImages: [String: ImageData]
    public let target: Target?
    public let metadata: JSONObject?
    public let logging: JSONObject?
    public let custom: JSONObject?
    public let children: [ComponentModel]
    /// Set once by the parent after creation; not part of equality.
    public internal(set) weak var parent: ComponentModel?

    /// Storage reserved for the host bridge (C strings handed to plugins), so it needs no side table.
    public var bridgeStorage: AnyObject?

    public init(identifier: String, type: ComponentType = .body, index: Int = 0, indexPath: [Int]? = nil,
                groupIdentifier: String? = nil,
                componentIdentifier: ComponentIdentifier = ComponentIdentifier(namespace: ComponentDefaults.namespace,
                                                                               name: ComponentDefaults.name),
                componentCategory: String = ComponentDefaults.category,
                title: String? = nil, subtitle: String? = nil, accessoryTitle: String? = nil,
                descriptionText: String? = nil, mainImage: ImageData? = nil, backgroundImage: ImageData? = nil,
                customImages: [String: ImageData] = [:], target: Target? = nil, metadata: JSONObject? = nil,
                logging: JSONObject? = nil, custom: JSONObject? = nil, children: [ComponentModel] = []) {
        self.identifier = identifier; self.type = type; self.index = index
        self.indexPath = indexPath ?? [index]
        self.groupIdentifier = groupIdentifier; self.componentIdentifier = componentIdentifier
        self.componentCategory = componentCategory; self.title = title; self.subtitle = subtitle
        self.accessoryTitle = accessoryTitle; self.descriptionText = descriptionText
        self.mainImage = mainImage; self.backgroundImage = backgroundImage; self.customImages = customImages
        self.target = target; self.metadata = metadata; self.logging = logging; self.custom = custom
        self.children = children
        for child in children { child.parent = self }
    }

    public func child(at index: Int) -> ComponentModel? { children.indices.contains(index) ? children[index] : nil }

    /// The image data of a kind (`identifier` for custom images).
    public func imageData(_ kind: ImageData.Kind, identifier: String? = nil) -> ImageData? {
        switch kind {
        case .main: return mainImage
        case .background: return backgroundImage
        case .custom: return identifier.flatMap { customImages[$0] }
        }
    }
}

extension ComponentModel: Equatable {
    /// Hub's model equality: every property except `parent`, `index` and `indexPath`.
    public static func == (a: ComponentModel, b: ComponentModel) -> Bool {
        if a === b { return true }
        return a.identifier == b.identifier && a.type == b.type && a.groupIdentifier == b.groupIdentifier
            && a.componentIdentifier == b.componentIdentifier && a.componentCategory == b.componentCategory
            && a.title == b.title && a.subtitle == b.subtitle && a.accessoryTitle == b.accessoryTitle
            && a.descriptionText == b.descriptionText && a.mainImage == b.mainImage
            && a.backgroundImage == b.backgroundImage && a.customImages == b.customImages && a.target == b.target
            && a.metadata == b.metadata && a.logging == b.logging && a.custom == b.custom && a.children == b.children
    }
}

/// A view model (Hub's HUBViewModel).
public final class ViewModel: @unchecked Sendable {
    public let identifier: String?
    public let title: String?
    public let header: ComponentModel?
    public let body: [ComponentModel]
    public let overlays: [ComponentModel]
    public let custom: JSONObject?

    public init(identifier: String? = nil, title: String? = nil, header: ComponentModel? = nil,
                body: [ComponentModel] = [], overlays: [ComponentModel] = [], custom: JSONObject? = nil) {
        self.identifier = identifier; self.title = title; self.header = header; self.body = body
        self.overlays = overlays; self.custom = custom
    }
}
