import HubPluginKit

/// `demo:carousel` — a full-width horizontal strip of child components, with an optional title above it.
///
/// Model fields:
/// - `children`: any components (typically `demo:card` or `demo:image`); each is created through the child
///   delegate at its own preferred size and placed left to right, 8 points apart;
/// - `text.title`: an optional title above the strip;
/// - `custom.itemHeight`: the strip's height in points (default 200, at most 4096); taller children are cut to it;
/// - `custom.scrollOffset`: the initial horizontal offset (default 0);
/// - `custom.parallax`: how much the strip scrolls sideways per point the page scrolls down (default 0: off;
///   -10 to 10).
/// A number out of its range (a server's 1e308) is taken as its default.
///
/// Behaviour, one optional protocol each:
/// - children: creates its children and tells the host which are visible (will display / stopped displaying);
/// - restorable UI state: its horizontal offset survives reuse, saved as `{"offset":120}`;
/// - selection state: selecting the carousel pages it forward by one item (back to the start after the last);
/// - view observer: a resize recomputes which children are visible;
/// - content-offset observer: drives the optional parallax.
final class CarouselComponent: HubComponent, HubComponentWithChildren, HubComponentWithRestorableUIState,
    HubComponentWithSelectionState, HubComponentViewObserver, HubComponentContentOffsetObserver
{

    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    var childDelegate: HubChildDelegate?

    private var title: String?
    private var itemHeight = CarouselComponent.defaultItemHeight
    private var childSizes: [Size] = [] {
        didSet { childStarts = Self.starts(of: childSizes) }
    }
    /// The x of each child in the unscrolled strip, then the strip's content width: looked up, not summed per
    /// child (5,000 children summed 12.5 million widths per update, and a render took over 2 s).
    private var childStarts: [Double] = [Theme.padding]
    /// Where the strip starts, below the title (measured once per model).
    private var stripTop = Theme.padding
    private var parallax = 0.0
    /// The horizontal scroll offset, the UI state that survives reuse.
    private var offset = 0.0
    /// The id of the model it was last configured with (nil after a reuse).
    private var shownModelID: String?
    /// The page's vertical content offset, for the parallax.
    private var pageOffsetY = 0.0
    /// The view's width, known from configuration and resizes.
    private var width = 0.0
    /// The children currently visible in the strip, as told to the host.
    private var visibleChildren: Set<Int> = []

    private static let defaultItemHeight = 200.0
    private static let titleStyle = TextStyle(fontSize: 20, weight: 700, lineLimit: 1)

    // MARK: HubComponent

    func preferredViewSize(for model: HubModel, containerSize: Size) -> Size {
        let itemHeight = Self.number(model, "itemHeight", in: 0...4096) ?? Self.defaultItemHeight
        return Size(width: containerSize.width, height: stripY(title: model.title) + itemHeight + Theme.padding)
    }

    func prepareViewForReuse() {
        for index in visibleChildren.sorted() { childDelegate?.didStopDisplayingChild(at: index) }
        visibleChildren = []
        title = nil
        stripTop = Theme.padding
        childSizes = []
        offset = 0
        parallax = 0
        shownModelID = nil
    }

    func configureView(with model: HubModel, containerSize: Size) {
        title = model.title
        stripTop = stripY(title: title)
        itemHeight = Self.number(model, "itemHeight", in: 0...4096) ?? Self.defaultItemHeight
        parallax = Self.number(model, "parallax", in: -10...10) ?? 0
        // Configured again with the model it shows (a new container size: a rotation), it keeps where the user
        // scrolled it, as a scroll view keeps its offset; a new model starts where the model says.
        if model.id == nil || model.id != shownModelID {
            offset = Self.number(model, "scrollOffset", in: 0...1e9) ?? 0
        }
        shownModelID = model.id
        width = containerSize.width
        // A new model has new children: create them all; the host hands back their preferred sizes.
        childSizes = (0..<model.childCount).map { childDelegate?.createChild(at: $0) ?? .zero }
        updateVisibleChildren()
    }

    func draw(in view: HubView, size: Size) {
        if let title {
            let height = measureText(title, style: Self.titleStyle, maxWidth: size.width - 2 * Theme.padding).height
            view.text(
                title,
                in: Rect(
                    x: Theme.padding, y: Theme.padding, width: size.width - 2 * Theme.padding,
                    height: height), style: Self.titleStyle)
        }
        for index in visibleChildren.sorted() {
            view.child(index, in: childFrame(index, viewWidth: size.width))
        }
    }

    // MARK: Restorable UI state

    var currentUIState: String? {
        offset == 0 ? nil : "{\"offset\":\(offset)}"
    }

    func restoreUIState(_ state: String) {
        guard let saved = JSONValue(parsing: state)?["offset"]?.numberValue else { return }
        offset = saved
        updateVisibleChildren()
    }

    // MARK: Selection state

    func updateViewForSelectionState(_ state: HubSelectionState) {
        guard state == .selected, !childSizes.isEmpty else { return }
        // Page to the next child (its offset puts it at the leading edge), or back to the start after the end.
        let starts = childSizes.indices.map { childX($0) - Theme.padding }
        if offset >= maxOffset - 0.5 {
            offset = 0
        } else {
            offset = min(starts.first { $0 > offset + 0.5 } ?? maxOffset, maxOffset)
        }
        updateVisibleChildren()
    }

    // MARK: View observer

    func viewDidResize(to size: Size) {
        width = size.width
        updateVisibleChildren()
    }

    func viewWillAppear() {
        HubLog.trace("carousel '\(title ?? "")' appears with \(childSizes.count) children")
    }

    // MARK: Content offset observer

    func updateViewForChangedContentOffset(_ offset: Point) {
        pageOffsetY = offset.y
        if parallax != 0 { updateVisibleChildren() }
    }

    // MARK: Layout of the strip

    /// `custom[key]` when it is a number within `range`.
    private static func number(_ model: HubModel, _ key: String, in range: ClosedRange<Double>) -> Double? {
        model.customNumber(key).flatMap { range.contains($0) ? $0 : nil }
    }

    /// Where the strip starts: below the title when there is one.
    private func stripY(title: String?) -> Double {
        guard let title else { return Theme.padding }
        // The title is one line (its style's line limit), then a gap.
        return Theme.padding + measureText(title, style: Self.titleStyle, maxWidth: 0).height + Theme.spacing
    }

    /// Each child's x in the unscrolled strip, then where a next child would go.
    private static func starts(of sizes: [Size]) -> [Double] {
        var starts = [Theme.padding]
        starts.reserveCapacity(sizes.count + 1)
        // Summed from zero, then offset, as a sum per child did (the other order rounds differently).
        var sum = 0.0
        for size in sizes {
            sum = sum + size.width + Theme.spacing
            starts.append(Theme.padding + sum)
        }
        return starts
    }

    /// The x of child `index` in the unscrolled strip.
    private func childX(_ index: Int) -> Double { childStarts[index] }

    /// How far the strip can scroll: its content width minus the view's width.
    private var maxOffset: Double {
        guard let last = childSizes.indices.last else { return 0 }
        return max(0, childX(last) + childSizes[last].width + Theme.padding - width)
    }

    /// The scroll offset in effect: the saved offset plus the parallax, kept within the strip.
    private var effectiveOffset: Double {
        min(max(0, offset + parallax * pageOffsetY), maxOffset)
    }

    private func childFrame(_ index: Int, viewWidth: Double) -> Rect {
        Rect(
            x: childX(index) - effectiveOffset, y: stripTop, width: childSizes[index].width,
            height: min(childSizes[index].height, itemHeight))
    }

    /// Tells the host which children came into view and which left it.
    private func updateVisibleChildren() {
        let visible = Set(
            childSizes.indices.filter { index in
                let frame = childFrame(index, viewWidth: width)
                return frame.maxX > 0 && frame.x < width && frame.width > 0
            })
        for index in visible.subtracting(visibleChildren).sorted() { childDelegate?.willDisplayChild(at: index) }
        for index in visibleChildren.subtracting(visible).sorted() { childDelegate?.didStopDisplayingChild(at: index) }
        visibleChildren = visible
    }
}
