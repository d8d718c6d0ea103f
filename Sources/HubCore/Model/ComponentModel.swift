/// Where a component model sits in its view.
public enum ComponentType: String, Sendable, Codable {
    case header, body, overlay
}

/// Image data of a component model (Hub's HUBComponentImageData).
public struct ImageData: Hashable, Sendable {
    public enum Kind: Int, Sendable, Codable {
        case main = 0
        case background = 1
        case custom = 2
    }
    public var kind: Kind
    /// The key in `images.custom` for custom images.
    public var identifier: String?
    public var uri: String?
    public var placeholder: String?
    public var local: String?
    public var custom: JSONObject?

    public init(
        kind: Kind, identifier: String? = nil, uri: String? = nil, placeholder: String? = nil,
        local: String? = nil, custom: JSONObject? = nil
    ) {
        self.kind = kind
        self.identifier = identifier
        self.uri = uri
        self.placeholder = placeholder
        self.local = local
        self.custom = custom
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

    public init(
        uri: String? = nil, actions: [ComponentIdentifier] = [], initialViewModel: JSONObject? = nil,
        custom: JSONObject? = nil
    ) {
        self.uri = uri
        self.actions = actions
        self.initialViewModel = initialViewModel
        self.custom = custom
    }
}

/// A component model (Hub's HUBComponentModel). A class so that 100k models share storage cheaply and a plugin
/// can hold an opaque handle to one; treat it as immutable once built.
///
/// Memory: fields most models leave empty (group, accessory and description texts, images, target, metadata,
/// logging) live in one box allocated only when one of them is set, and a root model's index path is derived
/// from its index, so a plain model is about 200 bytes instead of 700 (the render benchmark's 100k views).
public final class ComponentModel: @unchecked Sendable {
    public let identifier: String
    public let type: ComponentType
    /// Position among its siblings.
    public let index: Int
    public let componentIdentifier: ComponentIdentifier
    public let componentCategory: String
    public let title: String?
    public let subtitle: String?
    public let custom: JSONObject?
    public let children: [ComponentModel]
    /// Set once by the parent after creation; not part of equality.
    public internal(set) weak var parent: ComponentModel?

    /// Storage reserved for the host bridge (C strings handed to plugins), so it needs no side table.
    public var bridgeStorage: AnyObject?

    /// nil when the index path is just `[index]`.
    @usableFromInline let explicitIndexPath: [Int]?
    private let extras: Extras?

    /// The rarely set fields, boxed.
    final class Extras {
        let groupIdentifier: String?
        let accessoryTitle: String?
        let descriptionText: String?
        let mainImage: ImageData?
        let backgroundImage: ImageData?
        let customImages: [String: ImageData]
        let target: Target?
        let metadata: JSONObject?
        let logging: JSONObject?

        init(
            groupIdentifier: String?, accessoryTitle: String?, descriptionText: String?, mainImage: ImageData?,
            backgroundImage: ImageData?, customImages: [String: ImageData], target: Target?, metadata: JSONObject?,
            logging: JSONObject?
        ) {
            self.groupIdentifier = groupIdentifier
            self.accessoryTitle = accessoryTitle
            self.descriptionText = descriptionText
            self.mainImage = mainImage
            self.backgroundImage = backgroundImage
            self.customImages = customImages
            self.target = target
            self.metadata = metadata
            self.logging = logging
        }
    }

    /// Indexes from the root down to this model (`[3, 1]` is child 1 of body item 3).
    public var indexPath: [Int] { explicitIndexPath ?? [index] }
    /// `indexPath.count`, without making the array.
    public var indexPathDepth: Int { explicitIndexPath?.count ?? 1 }
    /// Calls `body` with each index of `indexPath`, without making the array for a root model (writers).
    @inlinable
    public func forEachIndexInPath(_ body: (Int) -> Void) {
        if let explicitIndexPath { explicitIndexPath.forEach(body) } else { body(index) }
    }
    /// Whether any of the rarely set fields (group, accessory, description, images, target, metadata, logging)
    /// is set.
    public var hasExtras: Bool { extras != nil }
    public var groupIdentifier: String? { extras?.groupIdentifier }
    public var accessoryTitle: String? { extras?.accessoryTitle }
    public var descriptionText: String? { extras?.descriptionText }
    public var mainImage: ImageData? { extras?.mainImage }
    public var backgroundImage: ImageData? { extras?.backgroundImage }
    /// Custom images by key, in key order.
    public var customImages: [String: ImageData] { extras?.customImages ?? [:] }
    public var target: Target? { extras?.target }
    public var metadata: JSONObject? { extras?.metadata }
    public var logging: JSONObject? { extras?.logging }

    public convenience init(
        identifier: String, type: ComponentType = .body, index: Int = 0, indexPath: [Int]? = nil,
        groupIdentifier: String? = nil,
        componentIdentifier: ComponentIdentifier = ComponentIdentifier(
            namespace: ComponentDefaults.namespace,
            name: ComponentDefaults.name),
        componentCategory: String = ComponentDefaults.category,
        title: String? = nil, subtitle: String? = nil, accessoryTitle: String? = nil,
        descriptionText: String? = nil, mainImage: ImageData? = nil, backgroundImage: ImageData? = nil,
        customImages: [String: ImageData] = [:], target: Target? = nil, metadata: JSONObject? = nil,
        logging: JSONObject? = nil, custom: JSONObject? = nil, children: [ComponentModel] = []
    ) {
        var extras: Extras?
        if groupIdentifier != nil || accessoryTitle != nil || descriptionText != nil || mainImage != nil
            || backgroundImage != nil || !customImages.isEmpty || target != nil || metadata != nil || logging != nil
        {
            extras = Extras(
                groupIdentifier: groupIdentifier, accessoryTitle: accessoryTitle,
                descriptionText: descriptionText, mainImage: mainImage, backgroundImage: backgroundImage,
                customImages: customImages, target: target, metadata: metadata, logging: logging)
        }
        self.init(
            identifier: identifier, type: type, index: index, indexPath: indexPath,
            componentIdentifier: componentIdentifier, componentCategory: componentCategory, title: title,
            subtitle: subtitle, custom: custom, children: children, extras: extras)
    }

    /// The common fields and the box of rare ones. The decoder calls it with `extras: nil` for a model that sets
    /// none of the rare fields, as most do: no optional images, target or dictionaries are passed through and
    /// tested (a tenth of building a decoded model).
    init(
        identifier: String, type: ComponentType, index: Int, indexPath: [Int]?,
        componentIdentifier: ComponentIdentifier, componentCategory: String, title: String?, subtitle: String?,
        custom: JSONObject?, children: [ComponentModel], extras: Extras?
    ) {
        self.identifier = identifier
        self.type = type
        self.index = index
        // A root model's path is derived from its index (compared without making `[index]`).
        if let indexPath, indexPath.count != 1 || indexPath[0] != index {
            self.explicitIndexPath = indexPath
        } else {
            self.explicitIndexPath = nil
        }
        self.componentIdentifier = componentIdentifier
        self.componentCategory = componentCategory
        self.title = title
        self.subtitle = subtitle
        self.custom = custom
        self.children = children
        self.extras = extras
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

    public init(
        identifier: String? = nil, title: String? = nil, header: ComponentModel? = nil,
        body: [ComponentModel] = [], overlays: [ComponentModel] = [], custom: JSONObject? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.header = header
        self.body = body
        self.overlays = overlays
        self.custom = custom
    }
}

extension ViewModel {
    /// Calls `body` with every component model: the header, the body, then the overlays, each before its children.
    public func forEachModel(_ body: (ComponentModel) -> Void) {
        func visit(_ model: ComponentModel) {
            body(model)
            model.children.forEach(visit)
        }
        header.map(visit)
        self.body.forEach(visit)
        overlays.forEach(visit)
    }
}
