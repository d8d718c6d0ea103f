import FoundationEssentials

/// Which components are displayed: appearance and disappearance, the content-offset rule, and the live set of
/// body components around the viewport as it scrolls.
extension EventEngine {
    // MARK: Appearance (hub-framework.md §4.2, §4.5, §4.8)

    /// willDisplay: will-appear (unless already appeared since the last model change and not scrolling), the
    /// content-offset rule, and the observer tables.
    func display(_ wrapper: ComponentWrapper, force: Bool) {
        if force || isScrolling || !wrapper.viewHasAppearedSinceLastModelChange {
            appear(wrapper)
            applyContentOffsetRule(wrapper)
        } else {
            registerVisibleChildren(of: wrapper)
        }
        register(wrapper)
    }

    /// Hub's wrapper viewWillAppear: the component, then each visible child (recursively), which the view
    /// controller then treats as appearing.
    func appear(_ wrapper: ComponentWrapper) {
        wrapper.appearanceCount += 1
        trace?.add(
            .appear, "[\(wrapper.model?.identifier ?? "?")] will appear (\(wrapper.appearanceCount))",
            [
                ("model", .optional(wrapper.model?.identifier)), ("appearance", .int(wrapper.appearanceCount)),
                ("instance", .optional(wrapper.traceName)),
            ])
        wrapper.component.viewObserver?.viewWillAppear()
        for index in wrapper.visibleChildIndexes.sorted() {
            guard let child = wrapper.children[index] else { continue }
            appear(child)
            childDidAppear(child)
        }
        wrapper.viewHasAppearedSinceLastModelChange = true
    }

    func childDidAppear(_ child: ComponentWrapper) {
        images.loadImages(for: child, containerSize: child.containerSize)
        applyContentOffsetRule(child)
        register(child)
    }

    func registerVisibleChildren(of wrapper: ComponentWrapper) {
        for index in wrapper.visibleChildIndexes.sorted() {
            guard let child = wrapper.children[index] else { continue }
            register(child)
            registerVisibleChildren(of: child)
        }
    }

    /// Hub: an observer is updated on will-appear when it appears for the first time or the offset is not the
    /// last one set programmatically.
    func applyContentOffsetRule(_ wrapper: ComponentWrapper) {
        guard let observer = wrapper.component.contentOffsetObserver else { return }
        if wrapper.appearanceCount == 1 || contentOffset != lastProgrammaticOffset {
            observer.updateViewForChangedContentOffset(contentOffset)
        }
    }

    func register(_ wrapper: ComponentWrapper) {
        if registered.updateValue(wrapper, forKey: wrapper.id) !== wrapper { registeredOrder = nil }
    }

    /// didEndDisplaying: out of the observer tables, with its children.
    func endDisplay(_ wrapper: ComponentWrapper) {
        guard registered.removeValue(forKey: wrapper.id) != nil else { return }
        registeredOrder = nil
        trace?.add(
            .disappear, "[\(wrapper.model?.identifier ?? "?")] did disappear",
            [("model", .optional(wrapper.model?.identifier)), ("instance", .optional(wrapper.traceName))])
        for index in wrapper.children.keys.sorted() { endDisplay(wrapper.children[index]!) }
    }

    /// The displayed wrappers in a stable order (by id); destroyed ones are dropped.
    var registeredWrappers: [ComponentWrapper] {
        if let registeredOrder, !registeredOrder.contains(where: { $0.isDestroyed || $0.isInPool }) {
            return registeredOrder
        }
        registered = registered.filter { !$0.value.isDestroyed && !$0.value.isInPool }
        let order = registered.keys.sorted().map { registered[$0]! }
        registeredOrder = order
        return order
    }

    /// Wrappers in the observer tables (for tests and the trace).
    public var displayedWrappers: [ComponentWrapper] { registeredWrappers }

    // MARK: Scrolling: the live set

    /// The band of content where body components are live.
    public var liveRect: Rect {
        let buffer = viewport.height * bufferFraction
        return Rect(x: 0, y: contentOffset.y - buffer, width: viewport.width, height: viewport.height + 2 * buffer)
    }

    /// The content the viewport shows.
    public var visibleRect: Rect { Rect(origin: contentOffset, size: viewport) }

    func rebuildLayoutIndex() {
        let frames = pipeline.layout?.frames ?? []
        prefixMaxY = []
        prefixMaxY.reserveCapacity(frames.count)
        var running = -Double.infinity
        for frame in frames {
            running = max(running, frame.maxY)
            prefixMaxY.append(running)
        }
        suffixMinY = Array(repeating: 0, count: frames.count)
        running = .infinity
        for i in frames.indices.reversed() {
            running = min(running, frames[i].minY)
            suffixMinY[i] = running
        }
    }

    /// Body indexes whose frames intersect `rect`, ascending; O(log n + k).
    public func bodyIndexes(intersecting rect: Rect) -> [Int] {
        guard let frames = pipeline.layout?.frames, !frames.isEmpty else { return [] }
        // First index whose running max of maxY passes the top; last whose running min of minY is above the bottom.
        var lo = 0
        var hi = frames.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if prefixMaxY[mid] > rect.minY { hi = mid } else { lo = mid + 1 }
        }
        let first = lo
        lo = first
        hi = frames.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if suffixMinY[mid] < rect.maxY { lo = mid + 1 } else { hi = mid }
        }
        guard first < lo else { return [] }
        return (first..<lo).filter { frames[$0].intersects(rect) }
    }

    func onScreenIndexes() -> [Int] { bodyIndexes(intersecting: visibleRect) }

    /// Moves instances between the pool and the models entering the live band; runs appearance for the
    /// components entering and leaving the viewport.
    func updateLiveBody() {
        let wanted = Set(bodyIndexes(intersecting: liveRect))
        let onScreen = Set(onScreenIndexes())
        // Leaving the viewport.
        for index in displayedBody.keys.sorted()
        where !onScreen.contains(index) || pipeline.bodyWrappers[index] !== displayedBody[index] {
            endDisplay(displayedBody.removeValue(forKey: index)!)
        }
        // Leaving the live band: the UI state is saved for the model it showed, the instance goes to the pool.
        for index in pipeline.bodyWrappers.keys.sorted() where !wanted.contains(index) {
            let wrapper = pipeline.bodyWrappers.removeValue(forKey: index)!
            if gestureWrapper === wrapper { gestureWrapper = nil }
            wrapper.saveUIState()
            wrapper.enqueueForReuse()
        }
        // Entering the live band: an instance from the pool (or a new one), configured for the model.
        let frames = pipeline.layout?.frames ?? []
        for index in wanted.sorted() where pipeline.bodyWrappers[index] == nil {
            let model = viewModel.body[index]
            let wrapper = pipeline.pool.wrapper(for: model, parent: nil)
            wrapper.delegate = self
            wrapper.loadView()
            wrapper.setFrame(frames[index])  // before configure: children take the parent's size as container
            wrapper.configure(with: model, containerSize: viewport)
            pipeline.bodyWrappers[index] = wrapper
            images.loadImages(for: wrapper, containerSize: viewport)
        }
        // Entering the viewport.
        for index in onScreen.sorted() where displayedBody[index] == nil {
            guard let wrapper = pipeline.bodyWrappers[index] else { continue }
            displayedBody[index] = wrapper
            display(wrapper, force: false)
        }
        peakLiveBodyCount = max(peakLiveBodyCount, pipeline.bodyWrappers.count)
    }
}
