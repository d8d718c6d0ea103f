/// One body component as the layout sees it: its traits and the size its sizing instance prefers.
public struct LayoutItem: Sendable {
    public var traits: Set<LayoutTrait>
    public var preferredSize: Size
    public init(traits: Set<LayoutTrait>, preferredSize: Size) {
        self.traits = traits
        self.preferredSize = preferredSize
    }
}

/// The header as the body layout sees it: the sizing instance's preferred height and its traits.
public struct HeaderLayoutItem: Sendable {
    public var height: Double
    public var traits: Set<LayoutTrait>
    public init(height: Double, traits: Set<LayoutTrait>) {
        self.height = height
        self.traits = traits
    }
}

public struct CollectionLayoutResult: Sendable, Equatable {
    /// One frame per body item, in content coordinates.
    public var frames: [Rect]
    public var contentSize: Size
}

/// Hub's collection layout (HUBCollectionViewLayout.computeForCollectionViewSize), row by row, exactly as
/// hub-framework.md §3.4 states it. A pure function of the items, the width, the header and the layout manager.
public enum CollectionLayout {
    public static func compute(
        items: [LayoutItem], width: Double, header: HeaderLayoutItem?,
        addHeaderMargin: Bool = true, layoutManager lm: LayoutManager
    ) -> CollectionLayoutResult {
        var frames: [Rect] = []
        frames.reserveCapacity(items.count)
        var row: [Int] = []  // indexes of the items on the current row
        var inTopRow = true
        var rowMaxY = 0.0
        var cursor = Point.zero
        var rowStartX = 0.0

        // Shifts the finished row by the layout manager's offset (centring).
        func centerRow(lastIndex: Int, firstX: Double, lastMaxX: Double) {
            guard lastIndex >= 0, !row.isEmpty else { return }
            let adjustment = lm.horizontalOffsetForComponents(
                withTraits: row.map { items[$0].traits },
                firstComponentLeadingOffset: firstX,
                lastComponentTrailingOffset: width - lastMaxX)
            guard abs(adjustment) > 1e-5 else { return }
            for k in (lastIndex - row.count + 1)...lastIndex { frames[k].x += adjustment }
        }

        for i in items.indices {
            let traits = items[i].traits
            var frame = Rect(
                x: 0, y: 0, width: min(items[i].preferredSize.width, width),
                height: items[i].preferredSize.height)

            var top = 0.0
            if inTopRow {
                if let header {
                    top =
                        addHeaderMargin
                        ? header.height
                            + lm.verticalMarginBetweenComponent(withTraits: traits, andHeaderWithTraits: header.traits)
                        : 0
                } else {
                    top = lm.marginBetweenComponent(withTraits: traits, andContentEdge: .top)
                }
            }
            let left =
                row.last.map { lm.horizontalMarginForComponent(withTraits: traits, precedingTraits: items[$0].traits) }
                ?? lm.marginBetweenComponent(withTraits: traits, andContentEdge: .left)
            let right = lm.marginBetweenComponent(withTraits: traits, andContentEdge: .right)

            frame.x = cursor.x + left
            if frame.maxX + right <= width {
                frame.y = cursor.y + top
            } else {
                // A new row: finish (centre) the current one, then start below its tallest item.
                centerRow(lastIndex: i - 1, firstX: rowStartX, lastMaxX: cursor.x)
                if !row.isEmpty {
                    // The largest margin to any item of the row above (a loop: no array per row).
                    var largest = -Double.infinity
                    for k in row {
                        largest = max(
                            largest, lm.verticalMarginForComponent(withTraits: traits, precedingTraits: items[k].traits)
                        )
                    }
                    top = max(0, largest)
                }
                frame.x = lm.marginBetweenComponent(withTraits: traits, andContentEdge: .left)
                frame.y = rowMaxY + top
                inTopRow = false
                row.removeAll(keepingCapacity: true)
                cursor.y = frame.y
                rowMaxY = frame.maxY
            }

            // Trim what would cross the right edge margin.
            let overflow = frame.maxX + right - width
            if overflow > 0 { frame.width -= overflow }

            cursor.x = frame.maxX
            rowMaxY = max(rowMaxY, frame.maxY)
            frames.append(frame)
            row.append(i)
            if row.count == 1 { rowStartX = frame.x }
            if i == items.count - 1 { centerRow(lastIndex: i, firstX: rowStartX, lastMaxX: cursor.x) }
        }

        var height = 0.0
        if !items.isEmpty {
            let bottom =
                row.map { lm.marginBetweenComponent(withTraits: items[$0].traits, andContentEdge: .bottom) }.max() ?? 0
            height = rowMaxY + max(0, bottom)
        }
        return CollectionLayoutResult(frames: frames, contentSize: Size(width: width, height: height))
    }
}

/// Where the header and the overlays go (hub-framework.md §3.5): the header at the top-left with its preferred
/// size; each overlay centred in the viewport (headless: no content inset, no keyboard).
public enum ViewChromeLayout {
    public static func headerFrame(preferredSize: Size) -> Rect {
        Rect(x: 0, y: 0, width: preferredSize.width, height: preferredSize.height)
    }

    public static func overlayFrame(
        preferredSize: Size, viewport: Size, topInset: Double = 0, keyboardHeight: Double = 0
    ) -> Rect {
        let centerX = viewport.width / 2
        let centerY = topInset + (viewport.height - topInset - keyboardHeight) / 2
        return Rect(
            x: centerX - preferredSize.width / 2, y: centerY - preferredSize.height / 2,
            width: preferredSize.width, height: preferredSize.height)
    }
}
