/// Builders that JSON adds to, following Hub's additive rules (hub-framework.md §1.5): a scalar is set only when
/// present, `metadata`/`logging`/`custom` are shallow-merged, child lists are get-or-create by model id.

final class ImageDataBuilder {
    var uri: String?
    var placeholder: String?
    var local: String?
    var custom: JSONObject?

    init() {}
    init(_ data: ImageData) {
        uri = data.uri
        placeholder = data.placeholder
        local = data.local
        custom = data.custom
    }

    func merge(_ other: ImageDataBuilder) {
        if let v = other.uri { uri = v }
        if let v = other.placeholder { placeholder = v }
        if let v = other.local { local = v }
        mergeObject(&custom, other.custom)
    }

    /// nil when nothing is set (Hub builds no image data then).
    func build(kind: ImageData.Kind, identifier: String?) -> ImageData? {
        if uri == nil, placeholder == nil, local == nil, custom == nil { return nil }
        return ImageData(
            kind: kind, identifier: identifier, uri: uri, placeholder: placeholder, local: local, custom: custom)
    }
}

final class TargetBuilder {
    var uri: String?
    /// Ordered, without duplicates (Hub's ordered set).
    var actions: [ComponentIdentifier] = []
    var view: JSONObject?
    var custom: JSONObject?

    init() {}
    init(_ target: Target) {
        uri = target.uri
        actions = target.actions
        view = target.initialViewModel
        custom = target.custom
    }

    func addAction(_ action: ComponentIdentifier) { if !actions.contains(action) { actions.append(action) } }

    func merge(_ other: TargetBuilder) {
        if let v = other.uri { uri = v }
        for action in other.actions { addAction(action) }
        if let v = other.view { view = v }
        mergeObject(&custom, other.custom)
    }

    func build() -> Target { Target(uri: uri, actions: actions, initialViewModel: view, custom: custom) }
}

final class ComponentModelBuilder {
    var id: String
    var group: String?
    var namespace: String?
    var name: String?
    var category: String?
    var title: String?
    var subtitle: String?
    var accessory: String?
    var descriptionText: String?
    var mainImage: ImageDataBuilder?
    var backgroundImage: ImageDataBuilder?
    var customImageKeys: [String] = []
    var customImages: [String: ImageDataBuilder] = [:]
    var target: TargetBuilder?
    var metadata: JSONObject?
    var logging: JSONObject?
    var custom: JSONObject?
    var children: ComponentModelListBuilder?

    init(id: String) { self.id = id }

    /// Back to what `init(id: "")` makes, for reading the next entry into.
    func reset() {
        id = ""
        group = nil
        namespace = nil
        name = nil
        category = nil
        title = nil
        subtitle = nil
        accessory = nil
        descriptionText = nil
        mainImage = nil
        backgroundImage = nil
        if !customImageKeys.isEmpty {
            customImageKeys = []
            customImages = [:]
        }
        target = nil
        metadata = nil
        logging = nil
        custom = nil
        children = nil
    }

    /// A builder holding what `model` holds, so more JSON can be merged into an already built model.
    init(_ model: ComponentModel) {
        id = model.identifier
        group = model.groupIdentifier
        namespace = model.componentIdentifier.namespace
        name = model.componentIdentifier.name
        category = model.componentCategory
        title = model.title
        subtitle = model.subtitle
        accessory = model.accessoryTitle
        descriptionText = model.descriptionText
        mainImage = model.mainImage.map(ImageDataBuilder.init)
        backgroundImage = model.backgroundImage.map(ImageDataBuilder.init)
        for key in model.customImages.keys.sorted() {
            customImage(key).merge(ImageDataBuilder(model.customImages[key]!))
        }
        target = model.target.map(TargetBuilder.init)
        metadata = model.metadata
        logging = model.logging
        custom = model.custom
        if !model.children.isEmpty {
            let list = ComponentModelListBuilder()
            for child in model.children { list.add(ComponentModelBuilder(child)) }
            children = list
        }
    }

    func customImage(_ key: String) -> ImageDataBuilder {
        if let existing = customImages[key] { return existing }
        let builder = ImageDataBuilder()
        customImageKeys.append(key)
        customImages[key] = builder
        return builder
    }

    /// Adds what `other` holds, as adding its JSON to this builder would.
    func merge(_ other: ComponentModelBuilder) {
        if let v = other.group { group = v }
        if let v = other.namespace { namespace = v }
        if let v = other.name { name = v }
        if let v = other.category { category = v }
        if let v = other.title { title = v }
        if let v = other.subtitle { subtitle = v }
        if let v = other.accessory { accessory = v }
        if let v = other.descriptionText { descriptionText = v }
        if let v = other.mainImage {
            (mainImage
                ?? {
                    mainImage = ImageDataBuilder()
                    return mainImage!
                }()).merge(v)
        }
        if let v = other.backgroundImage {
            (backgroundImage
                ?? {
                    backgroundImage = ImageDataBuilder()
                    return backgroundImage!
                }()).merge(v)
        }
        for key in other.customImageKeys { customImage(key).merge(other.customImages[key]!) }
        if let v = other.target {
            (target
                ?? {
                    target = TargetBuilder()
                    return target!
                }()).merge(v)
        }
        mergeObject(&metadata, other.metadata)
        mergeObject(&logging, other.logging)
        mergeObject(&custom, other.custom)
        if let v = other.children {
            let list = children ?? ComponentModelListBuilder()
            children = list
            for child in v.builders { list.add(child) }
        }
    }

    /// `indexPath` nil: a root model, whose path is `[index]` (no array is made for it).
    func build(
        type: ComponentType, index: Int, indexPath: [Int]? = nil,
        defaults: (namespace: String, name: String, category: String)
    )
        -> ComponentModel
    {
        if !hasRareFields {
            return ComponentModel(
                identifier: id, type: type, index: index, indexPath: indexPath,
                componentIdentifier: componentIdentifier(defaults), componentCategory: category ?? defaults.category,
                title: title, subtitle: subtitle, custom: custom,
                children: childModels(type: type, index: index, indexPath: indexPath, defaults: defaults), extras: nil)
        }
        var images: [String: ImageData] = [:]
        for key in customImageKeys {
            if let data = customImages[key]!.build(kind: .custom, identifier: key) { images[key] = data }
        }
        return ComponentModel(
            identifier: id, type: type, index: index, indexPath: indexPath, groupIdentifier: group,
            componentIdentifier: componentIdentifier(defaults),
            componentCategory: category ?? defaults.category, title: title, subtitle: subtitle,
            accessoryTitle: accessory,
            descriptionText: descriptionText, mainImage: mainImage?.build(kind: .main, identifier: nil),
            backgroundImage: backgroundImage?.build(kind: .background, identifier: nil), customImages: images,
            target: target?.build(), metadata: metadata, logging: logging, custom: custom,
            children: childModels(type: type, index: index, indexPath: indexPath, defaults: defaults))
    }

    /// `build`, then `reset`, for a builder read only to make this one model (a body or overlay entry): a model
    /// without the rare fields takes the builder's values instead of copying them, so neither the model's
    /// init nor the reset retains and releases each string (two thirds of the reference counting in decoding).
    func takeModel(type: ComponentType, index: Int, defaults: (namespace: String, name: String, category: String))
        -> ComponentModel
    {
        guard children == nil, !hasRareFields else {
            defer { reset() }
            return build(type: type, index: index, defaults: defaults)
        }
        var identifier = ""
        swap(&identifier, &id)
        return ComponentModel(
            identifier: identifier, type: type, index: index, indexPath: nil,
            componentIdentifier: ComponentIdentifier(
                namespace: namespace.take() ?? defaults.namespace, name: name.take() ?? defaults.name),
            componentCategory: category.take() ?? defaults.category, title: title.take(), subtitle: subtitle.take(),
            custom: custom.take(), children: [], extras: nil)
    }

    /// Whether any field the model keeps in its box of rare ones is set.
    private var hasRareFields: Bool {
        group != nil || accessory != nil || descriptionText != nil || mainImage != nil || backgroundImage != nil
            || !customImageKeys.isEmpty || target != nil || metadata != nil || logging != nil
    }

    private func componentIdentifier(_ defaults: (namespace: String, name: String, category: String))
        -> ComponentIdentifier
    {
        ComponentIdentifier(namespace: namespace ?? defaults.namespace, name: name ?? defaults.name)
    }

    private func childModels(
        type: ComponentType, index: Int, indexPath: [Int]?,
        defaults: (namespace: String, name: String, category: String)
    ) -> [ComponentModel] {
        guard let children else { return [] }
        var models: [ComponentModel] = []
        models.reserveCapacity(children.builders.count)
        let path = indexPath ?? [index]
        for (i, child) in children.builders.enumerated() {
            models.append(child.build(type: type, index: i, indexPath: path + [i], defaults: defaults))
        }
        return models
    }
}

/// A body or overlay list that builds each model as soon as its entry is read (its index is its position), so
/// decoding a huge body never holds a builder per model. A later entry with the same id (rare) turns that model
/// back into a builder once; later entries merge into it, and it is built when the list is finished.
final class RootModelListBuilder {
    let type: ComponentType
    let defaults: (namespace: String, name: String, category: String)
    private var models: [ComponentModel] = []
    private var positions = PositionTable()
    /// Positions merged into, as builders until `finish`: rebuilding the model at each merge, children included,
    /// made n entries of one id with a child each take n² steps (4,000 took 16 s, from a 287 KB view).
    private var merged: [Int: ComponentModelBuilder] = [:]

    init(type: ComponentType, defaults: (namespace: String, name: String, category: String)) {
        self.type = type
        self.defaults = defaults
    }

    /// Adds the model `builder` holds, or merges it into the entry already holding its id, and empties `builder`
    /// (as `reset` does) for the next entry. Returns the ids when it merged, else nil.
    @discardableResult
    func add(_ builder: ComponentModelBuilder) -> (earlier: String, incoming: String)? {
        let hash = builder.id.hashValue
        if let position = positions.find(hash: hash, where: { models[$0].identifier == builder.id }) {
            let incoming = builder.id
            let kept = merged[position] ?? ComponentModelBuilder(models[position])
            merged[position] = kept
            kept.merge(builder)
            builder.reset()
            return (models[position].identifier, incoming)
        }
        positions.insert(models.count, hash: hash)
        models.append(builder.takeModel(type: type, index: models.count, defaults: defaults))
        return nil
    }

    /// The list's models, merged entries built.
    func finish() -> [ComponentModel] {
        for (position, builder) in merged {
            models[position] = builder.build(type: type, index: position, defaults: defaults)
        }
        merged = [:]
        return models
    }
}

/// Positions in a list found by the hash of their model id: an open-addressing table that keeps each entry's
/// hash, so growing it never hashes an id again (a `[String: Int]` rehashes every key on each of its ~17
/// growths over 100k models, which was a tenth of decoding). A probe reads one byte per slot, seven bits of the
/// hash, from an array small enough to stay in the CPU cache at 100k models (256 KiB); only a matching byte
/// (a repeated id, or one slot in 128 by chance) reads the slot's position. Eight-byte slots put every probe of
/// a new id, the common case, at a cache miss: a tenth of decoding. Hashes are Swift's seeded `hashValue`, so
/// ids from a hostile server cannot be chosen to collide.
struct PositionTable {
    /// Per slot: 0 when empty, else 0x80 | the hash's top seven bits.
    private var tags = [UInt8](repeating: 0, count: 16)
    /// Per slot: the position, when the slot is taken.
    private var positions = [UInt32](repeating: 0, count: 16)
    private var hashes: [Int] = []

    private static func tag(_ hash: Int) -> UInt8 { 0x80 | UInt8(truncatingIfNeeded: UInt(bitPattern: hash) >> 57) }

    func find(hash: Int, where matches: (Int) -> Bool) -> Int? {
        let mask = tags.count - 1
        let tag = Self.tag(hash)
        var slot = hash & mask
        while tags[slot] != 0 {
            if tags[slot] == tag {
                let position = Int(positions[slot])
                if matches(position) { return position }
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Adds `position`, which must be the next one (positions are 0, 1, 2, … in order, fewer than 2^32).
    mutating func insert(_ position: Int, hash: Int) {
        hashes.append(hash)
        if hashes.count * 2 > tags.count { grow() } else { place(position, hash: hash) }
    }

    private mutating func place(_ position: Int, hash: Int) {
        let mask = tags.count - 1
        var slot = hash & mask
        while tags[slot] != 0 { slot = (slot + 1) & mask }
        tags[slot] = Self.tag(hash)
        positions[slot] = UInt32(truncatingIfNeeded: position)
    }

    private mutating func grow() {
        tags = [UInt8](repeating: 0, count: tags.count * 2)
        positions = [UInt32](repeating: 0, count: tags.count)
        for (position, hash) in hashes.enumerated() { place(position, hash: hash) }
    }
}

/// A child list: builders in order of first appearance, found again by model id.
final class ComponentModelListBuilder {
    private(set) var builders: [ComponentModelBuilder] = []
    private var byID: [String: ComponentModelBuilder] = [:]

    /// Adds `builder`, or merges it into the one already holding its id (Hub's get-or-create by id).
    func add(_ builder: ComponentModelBuilder) {
        if let existing = byID[builder.id] {
            existing.merge(builder)
        } else {
            byID[builder.id] = builder
            builders.append(builder)
        }
    }

}

func mergeObject(_ target: inout JSONObject?, _ addition: JSONObject?) {
    guard let addition else { return }
    if target == nil { target = addition } else { target!.merge(addition) }
}
