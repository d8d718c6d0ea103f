import Testing

@testable import HubCore

/// Frames pinned by Hub's own HUBCollectionViewLayoutTests (hub-framework.md §3.4), with Hub's mock layout
/// manager (0 unless configured), W = 320.
@Suite struct HubPinnedLayoutTests {
    @Test func topAndLeftEdgeMargins() {
        let lm = MockLayoutManager()
        lm.setEdges([C], 20)
        let result = CollectionLayout.compute(items: [item([C], 100, 100)], width: 320, header: nil, layoutManager: lm)
        #expect(result.frames == [r(20, 20, 100, 100)])
    }

    @Test func rightEdgeTrimming() {
        let lm = MockLayoutManager()
        lm.setEdges([C], 20)
        let result = CollectionLayout.compute(items: [item([C], 320, 50)], width: 320, header: nil, layoutManager: lm)
        #expect(result.frames == [r(20, 20, 280, 50)])
    }

    @Test func headerMarginIsHeaderHeightPlusMargin() {
        let lm = MockLayoutManager()
        lm.headerMargins[[F]] = 30
        let result = CollectionLayout.compute(
            items: [item([F], 320, 100)], width: 320,
            header: HeaderLayoutItem(height: 100, traits: [F]), addHeaderMargin: true,
            layoutManager: lm)
        #expect(result.frames == [r(0, 130, 320, 100)])
    }

    @Test func wrapsWhenTheWidthIsExceeded() {
        let lm = MockLayoutManager()
        lm.setEdges([C], 15)
        lm.verticalMargins[[C]] = 20
        let result = CollectionLayout.compute(
            items: [item([C], 100, 100), item([C], 100, 100), item([C], 100, 100)],
            width: 320, header: nil, layoutManager: lm)
        #expect(result.frames[2] == r(15, 135, 100, 100))
        #expect(result.frames[0] == r(15, 15, 100, 100))
        #expect(result.frames[1] == r(115, 15, 100, 100))
    }

    @Test func maxHorizontalMarginForcesANewRow() {
        let lm = MockLayoutManager()
        lm.horizontalMargins[[C]] = .greatestFiniteMagnitude
        lm.verticalMargins[[C]] = 20
        let result = CollectionLayout.compute(
            items: [item([Z], 50, 50), item([C], 100, 100)], width: 320, header: nil,
            layoutManager: lm)
        #expect(result.frames[1] == r(0, 70, 100, 100))
    }

    @Test func rowOffsetMovesEveryItemInTheRow() {
        let lm = MockLayoutManager()
        lm.rowOffset = 110
        let result = CollectionLayout.compute(
            items: [item([Z], 50, 50), item([Z], 50, 50)], width: 320, header: nil,
            layoutManager: lm)
        #expect(result.frames.map(\.x) == [110, 160])
    }

    @Test func contentSizeIncludesTheLastRowsBottomMargin() {
        let lm = MockLayoutManager()
        lm.setEdges([Z], 40, edges: [.bottom])
        let items = [
            item([C], 100, 100), item([F], 320, 100), item([C], 100, 100), item([F], 320, 100), item([Z], 50, 50),
        ]
        let result = CollectionLayout.compute(items: items, width: 320, header: nil, layoutManager: lm)
        #expect(result.contentSize == Size(width: 320, height: 490))
    }

    @Test func emptyBodyHasZeroHeight() {
        let result = CollectionLayout.compute(items: [], width: 320, header: nil, layoutManager: DefaultLayoutManager())
        #expect(result.contentSize == Size(width: 320, height: 0))
        #expect(result.frames.isEmpty)
    }
}

/// Hub's HUBDefaultComponentLayoutManagerTests (margin 10).
@Suite struct DefaultLayoutManagerTests {
    let lm = DefaultLayoutManager(margin: 10)

    @Test func compactMargins() {
        #expect(lm.horizontalMarginForComponent(withTraits: [C], precedingTraits: [C]) == 10)
        #expect(lm.verticalMarginForComponent(withTraits: [C], precedingTraits: [C]) == 10)
        for edge in [ContentEdge.top, .right, .bottom, .left] {
            #expect(lm.marginBetweenComponent(withTraits: [C], andContentEdge: edge) == 10)
        }
    }

    @Test func fullWidthMargins() {
        #expect(lm.horizontalMarginForComponent(withTraits: [F], precedingTraits: [F]) == 0)
        #expect(lm.verticalMarginForComponent(withTraits: [F], precedingTraits: [F]) == 10)
        #expect(lm.marginBetweenComponent(withTraits: [F], andContentEdge: .left) == 0)
        #expect(lm.marginBetweenComponent(withTraits: [F], andContentEdge: .right) == 0)
        #expect(lm.marginBetweenComponent(withTraits: [F], andContentEdge: .top) == 10)
        #expect(lm.marginBetweenComponent(withTraits: [F], andContentEdge: .bottom) == 10)
    }

    @Test func stackableMargins() {
        #expect(lm.verticalMarginForComponent(withTraits: [S], precedingTraits: [S]) == 0)
        #expect(lm.marginBetweenComponent(withTraits: [S], andContentEdge: .top) == 0)
        #expect(lm.marginBetweenComponent(withTraits: [S], andContentEdge: .bottom) == 0)
        #expect(lm.verticalMarginForComponent(withTraits: [S], precedingTraits: [C]) == 10)
        #expect(lm.verticalMarginForComponent(withTraits: [C], precedingTraits: [S]) == 10)
    }

    @Test func alwaysStackUpwards() {
        #expect(lm.verticalMarginForComponent(withTraits: [U], precedingTraits: [C]) == 0)
        #expect(lm.verticalMarginForComponent(withTraits: [C], precedingTraits: [U]) == 10)
    }

    @Test func centring() {
        #expect(
            lm.horizontalOffsetForComponents(
                withTraits: [[Z]], firstComponentLeadingOffset: 10,
                lastComponentTrailingOffset: 300) == 145)
        #expect(
            lm.horizontalOffsetForComponents(
                withTraits: [[Z], [C]], firstComponentLeadingOffset: 10,
                lastComponentTrailingOffset: 300) == 0)
        #expect(
            lm.horizontalOffsetForComponents(
                withTraits: [], firstComponentLeadingOffset: 10,
                lastComponentTrailingOffset: 300) == 0)
        #expect(lm.horizontalMarginForComponent(withTraits: [Z], precedingTraits: [C]) == .greatestFiniteMagnitude)
        #expect(lm.horizontalMarginForComponent(withTraits: [C], precedingTraits: [Z]) == .greatestFiniteMagnitude)
        #expect(lm.horizontalMarginForComponent(withTraits: [Z], precedingTraits: [Z]) == 10)
    }
}

/// The worked example and further trait combinations, with the expected numbers computed by hand from the
/// algorithm in hub-framework.md §3.4 (default layout manager, m = 15, W = 320 unless stated).
@Suite struct HandComputedLayoutTests {
    func layout(
        _ items: [LayoutItem], width: Double = 320, margin: Double = 15, header: HeaderLayoutItem? = nil,
        addHeaderMargin: Bool = true
    ) -> CollectionLayoutResult {
        CollectionLayout.compute(
            items: items, width: width, header: header, addHeaderMargin: addHeaderMargin,
            layoutManager: DefaultLayoutManager(margin: margin))
    }

    @Test func workedExample() {
        let result = layout([
            item([C], 130, 100), item([C], 130, 100), item([C], 130, 100), item([F], 320, 60),
            item([Z], 50, 50),
        ])
        #expect(
            result.frames == [
                r(15, 15, 130, 100), r(160, 15, 130, 100), r(15, 130, 130, 100),
                r(0, 245, 320, 60), r(135, 320, 50, 50),
            ])
        #expect(result.contentSize == Size(width: 320, height: 385))
    }

    @Test func compactRowsWrap() {
        let result = layout(Array(repeating: item([C], 90, 50), count: 4))
        #expect(result.frames == [r(15, 15, 90, 50), r(120, 15, 90, 50), r(15, 80, 90, 50), r(120, 80, 90, 50)])
        #expect(result.contentSize.height == 145)
    }

    @Test func rightEdgeTrimmingThenANewRow() {
        let result = layout([item([C], 300, 40), item([C], 100, 40)])
        #expect(result.frames == [r(15, 15, 290, 40), r(15, 70, 100, 40)])
        #expect(result.contentSize.height == 125)
    }

    @Test func widerThanTheViewIsClampedThenTrimmed() {
        let result = layout([item([C], 400, 30)])
        #expect(result.frames == [r(15, 15, 290, 30)])
        #expect(result.contentSize.height == 60)
    }

    @Test func centredRowOfTwo() {
        let result = layout([item([Z], 50, 50), item([Z], 50, 50)])
        #expect(result.frames == [r(102, 15, 50, 50), r(167, 15, 50, 50)])
        #expect(result.contentSize.height == 80)
    }

    @Test func centredThenCompactStartsANewRow() {
        let result = layout([item([Z], 60, 40), item([C], 100, 50)])
        #expect(result.frames == [r(130, 15, 60, 40), r(15, 70, 100, 50)])
        #expect(result.contentSize.height == 135)
    }

    @Test func compactThenCentredIsCentredOnItsOwnRow() {
        let result = layout([item([C], 100, 50), item([Z], 80, 30)])
        #expect(result.frames == [r(15, 15, 100, 50), r(120, 80, 80, 30)])
        #expect(result.contentSize.height == 125)
    }

    @Test func centredRowsWrapAndEachRowIsCentred() {
        let result = layout(Array(repeating: item([Z], 100, 40), count: 3))
        #expect(result.frames == [r(52, 15, 100, 40), r(167, 15, 100, 40), r(110, 70, 100, 40)])
        #expect(result.contentSize.height == 125)
    }

    @Test func stackableFullWidthRun() {
        let result = layout(Array(repeating: item([F, S], 320, 44), count: 3))
        #expect(result.frames == [r(0, 0, 320, 44), r(0, 44, 320, 44), r(0, 88, 320, 44)])
        #expect(result.contentSize.height == 132)
    }

    @Test func stackableThenNonStackable() {
        let result = layout([item([F, S], 320, 44), item([F], 320, 60)])
        #expect(result.frames == [r(0, 0, 320, 44), r(0, 59, 320, 60)])
        #expect(result.contentSize.height == 134)
    }

    @Test func nonStackableThenStackable() {
        let result = layout([item([F], 320, 60), item([F, S], 320, 44)])
        #expect(result.frames == [r(0, 15, 320, 60), r(0, 90, 320, 44)])
        #expect(result.contentSize.height == 134)
    }

    @Test func alwaysStackUpwardsHasNoMarginAboveButOneBelow() {
        let result = layout([item([F], 320, 60), item([F, U], 320, 40), item([F], 320, 50)])
        #expect(result.frames == [r(0, 15, 320, 60), r(0, 75, 320, 40), r(0, 130, 320, 50)])
        #expect(result.contentSize.height == 195)
    }

    @Test func alwaysStackUpwardsBelowACompactRow() {
        let result = layout([item([C], 100, 80), item([C], 100, 40), item([C, U], 100, 30)])
        #expect(result.frames == [r(15, 15, 100, 80), r(130, 15, 100, 40), r(15, 95, 100, 30)])
        #expect(result.contentSize.height == 140)
    }

    @Test func headerMarginInTheTopRow() {
        let result = layout(
            [item([C], 100, 50), item([C], 100, 50)], header: HeaderLayoutItem(height: 100, traits: [F]))
        #expect(result.frames == [r(15, 115, 100, 50), r(130, 115, 100, 50)])
        #expect(result.contentSize.height == 180)
    }

    @Test func headerWithoutHeaderMargin() {
        let result = layout(
            [item([C], 100, 50)], header: HeaderLayoutItem(height: 100, traits: [F]), addHeaderMargin: false)
        #expect(result.frames == [r(15, 0, 100, 50)])
        #expect(result.contentSize.height == 65)
    }

    @Test func stackableBelowAStackableHeader() {
        let result = layout([item([F, S], 320, 44)], header: HeaderLayoutItem(height: 80, traits: [F, S]))
        #expect(result.frames == [r(0, 80, 320, 44)])
        #expect(result.contentSize.height == 124)
    }

    @Test func topRowItemsUseTheirOwnTopMargin() {
        let result = layout([item([C], 100, 50), item([C, S], 100, 50), item([C], 100, 50)])
        #expect(result.frames == [r(15, 15, 100, 50), r(130, 0, 100, 50), r(15, 80, 100, 50)])
        #expect(result.contentSize.height == 145)
    }

    @Test func newRowStartsBelowTheTallestItem() {
        let result = layout([item([C], 100, 120), item([C], 100, 40), item([F], 320, 30)])
        #expect(result.frames == [r(15, 15, 100, 120), r(130, 15, 100, 40), r(0, 150, 320, 30)])
        #expect(result.contentSize.height == 195)
    }

    @Test func fullWidthBetweenCompacts() {
        let result = layout([item([C], 100, 50), item([F], 320, 60), item([C], 100, 50)])
        #expect(result.frames == [r(15, 15, 100, 50), r(0, 80, 320, 60), r(15, 155, 100, 50)])
        #expect(result.contentSize.height == 220)
    }

    @Test func customMarginAndWidth() {
        let result = layout([item([C], 90, 30), item([C], 90, 30)], width: 200, margin: 8)
        #expect(result.frames == [r(8, 8, 90, 30), r(8, 46, 90, 30)])
        #expect(result.contentSize == Size(width: 200, height: 84))
    }

    @Test func customTraitsGetStandardMargins() {
        let hero: LayoutTrait = "hero"
        let result = layout([item([hero], 200, 100), item([hero], 200, 100)])
        #expect(result.frames == [r(15, 15, 200, 100), r(15, 130, 200, 100)])
        #expect(result.contentSize.height == 245)
    }

    @Test func stackableCompactGrid() {
        let result = layout(Array(repeating: item([C, S], 100, 50), count: 4))
        #expect(result.frames == [r(15, 0, 100, 50), r(130, 0, 100, 50), r(15, 50, 100, 50), r(130, 50, 100, 50)])
        #expect(result.contentSize.height == 100)
    }

    @Test func overlayIsCentredInTheViewport() {
        let frame = ViewChromeLayout.overlayFrame(
            preferredSize: Size(width: 200, height: 100),
            viewport: Size(width: 375, height: 667))
        #expect(frame == r(87.5, 283.5, 200, 100))
        #expect(ViewChromeLayout.headerFrame(preferredSize: Size(width: 375, height: 120)) == r(0, 0, 375, 120))
    }
}

@Suite struct LayoutManagerChoiceTests {
    @Test func defaultOrRegisteredByID() throws {
        let registry = OwnedRegistry<LayoutManager>(kind: "layout manager")
        let custom = MockLayoutManager()
        custom.setEdges([C], 7)
        try registry.register(custom, forKey: "tight", owner: Owner(id: "p"))

        let chosen = try LayoutManagerChoice.resolve(id: "tight", in: registry)
        #expect(chosen === custom)
        let result = CollectionLayout.compute(
            items: [item([C], 100, 10)], width: 320, header: nil, layoutManager: chosen)
        #expect(result.frames == [r(7, 7, 100, 10)])

        let fallback = try #require(
            try LayoutManagerChoice.resolve(id: nil, in: registry, defaultMargin: 8) as? DefaultLayoutManager)
        #expect(fallback.margin == 8)

        #expect(throws: LayoutManagerChoice.UnknownID.self) {
            try LayoutManagerChoice.resolve(id: "nope", in: registry)
        }
        do { _ = try LayoutManagerChoice.resolve(id: "nope", in: registry) } catch {
            #expect("\(error)" == "no layout manager 'nope'; registered: tight")
        }
    }
}
