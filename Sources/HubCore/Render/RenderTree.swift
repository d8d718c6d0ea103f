/// What every node of one component instance shares: the identifier it was made for, where it came from, and its
/// traits. Made once per instance (and per sizing component), so a node holds one reference instead of copies of
/// their strings and set, and a writer tells a node's kind from the last one's by identity before comparing
/// values.
public final class ComponentKind: Sendable {
    public let componentIdentifier: ComponentIdentifier
    public let source: ComponentSource
    public let traits: Set<LayoutTrait>

    public init(componentIdentifier: ComponentIdentifier, source: ComponentSource, traits: Set<LayoutTrait>) {
        self.componentIdentifier = componentIdentifier
        self.source = source
        self.traits = traits
    }
}

/// One rendered component: what the renderers (JSON, SVG, HTML, text) and the event pipeline read.
public struct RenderNode {
    public var model: ComponentModel
    public var modelID: String { model.identifier }
    public var indexPath: [Int] { model.indexPath }
    /// Its component identifier, source and traits.
    public var kind: ComponentKind
    public var componentIdentifier: ComponentIdentifier { kind.componentIdentifier }
    /// A plugin's factory (with its owner) or the fallback.
    public var source: ComponentSource { kind.source }
    public var traits: Set<LayoutTrait> { kind.traits }
    /// Header and body: content coordinates. Overlays: viewport coordinates. Children: the parent's coordinates.
    public var frame: Rect
    /// What the component drew at `frame.size`, in its own coordinates. Empty for components outside the
    /// visible rect (they have a frame but no live instance).
    public var displayList: [DrawItem]
    /// Child components created through the child delegate, in child index order.
    public var children: [RenderNode]
    /// The live wrapper's id, nil when the component was only laid out.
    public var wrapperID: Int?

    public init(
        model: ComponentModel, kind: ComponentKind, frame: Rect, displayList: [DrawItem] = [],
        children: [RenderNode] = [], wrapperID: Int? = nil
    ) {
        self.model = model
        self.kind = kind
        self.frame = frame
        self.displayList = displayList
        self.children = children
        self.wrapperID = wrapperID
    }

    /// The child node for child model index `index`.
    public func child(at index: Int) -> RenderNode? { children.first { $0.model.index == index } }

    /// Drops the display lists of this node and its descendants (once a writer has drawn them).
    public mutating func dropDisplayLists() {
        displayList = []
        for i in children.indices { children[i].dropDisplayLists() }
    }

    /// This node and all its descendants, depth first.
    public var allNodes: [RenderNode] { [self] + children.flatMap(\.allNodes) }
}

/// A rendered view: frames and display lists for the header, the body and the overlays.
public struct RenderTree {
    public var viewID: String?
    public var title: String?
    /// The size of the view the content is shown in.
    public var viewport: Size
    /// The scrollable content (Hub's collection view content size); the header overlaps its top.
    public var contentSize: Size
    public var header: RenderNode?
    public var body: [RenderNode]
    public var overlays: [RenderNode]
    /// A drawing of exactly this size whatever the content and the header reach (a screen: see
    /// `EventEngine.screenTree`); nil: `canvasSize` is worked out from them.
    public var screen: Size?

    public init(
        viewID: String? = nil, title: String? = nil, viewport: Size, contentSize: Size, header: RenderNode? = nil,
        body: [RenderNode] = [], overlays: [RenderNode] = []
    ) {
        self.viewID = viewID
        self.title = title
        self.viewport = viewport
        self.contentSize = contentSize
        self.header = header
        self.body = body
        self.overlays = overlays
    }

    /// Every node of the tree, children included.
    public var allNodes: [RenderNode] {
        (header.map { $0.allNodes } ?? []) + body.flatMap(\.allNodes) + overlays.flatMap(\.allNodes)
    }

    /// The size a drawing of the whole view needs: the content, at least the viewport, and the header.
    public var canvasSize: Size {
        if let screen { return screen }
        return Size(
            width: max(viewport.width, contentSize.width),
            height: max(viewport.height, contentSize.height, header?.frame.maxY ?? 0))
    }
}
