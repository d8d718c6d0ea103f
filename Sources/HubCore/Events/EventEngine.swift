/// Hub's view controller for one view, driven by events instead of touches: selection and highlight with Hub's
/// delays, hit testing, actions, scrolling with appearance and content offset, resizing, images and UI state.
///
/// It builds on the render pipeline: `load()` renders the view with live instances only for the components near
/// the viewport; scrolling then moves instances between the pool and the models entering the viewport, so the
/// number of instances is bounded by the viewport however long the view is.
///
/// Hub's rules, as implemented here (hub-framework.md §4.5–§4.8, §5):
/// - one gesture at a time; highlight becomes visible after 0.2 s unless something else happens first; a tap
///   ends in Selected, the action flow runs, and the component goes back to None 0.2 s later; the same state is
///   never sent twice; a scroll or resize resets a highlight;
/// - body components are live while they intersect the viewport plus a buffer (`bufferFraction` viewport
///   heights above and below) and *displayed* while they intersect the viewport: displaying runs will-appear
///   (skipped for a wrapper that already appeared since its last model change unless the view is scrolling),
///   the content-offset rule (first appearance, or an offset other than the last programmatic one) and puts the
///   wrapper in the observer tables (content offset, action observers); leaving the viewport takes it out again;
/// - children appear and disappear through the child delegate, only while their parent is displayed;
/// - images load for body components when they become live, for the header and overlays on configure, for
///   children when they appear.
///
/// Not thread-safe: main thread only.
public final class EventEngine: ComponentWrapperDelegate {
    public static let highlightDelay = 0.2
    public static let deselectDelay = 0.2

    public let pipeline: RenderPipeline
    public let clock: EventClock
    public let actions: ActionDispatcher
    public let images: ComponentImageLoader
    /// Where records go; nil traces nothing.
    public var trace: EventTrace? { didSet { images.trace = trace } }
    /// The view's URI in action contexts.
    public var viewURI: String?
    /// How far beyond the viewport (in viewport heights, above and below) body components stay live.
    public var bufferFraction = 0.5

    public private(set) var viewModel: ViewModel
    public private(set) var viewport: Size
    public private(set) var contentOffset = Point.zero
    /// The offset last set programmatically (Hub's content-offset rule compares with it).
    public private(set) var lastProgrammaticOffset = Point.zero
    public private(set) var isLoaded = false
    /// The most body instances live at once so far.
    public private(set) var peakLiveBodyCount = 0
    /// Problems met while replaying (a target off screen, …), also in the trace as errors.
    public private(set) var problems: [String] = []

    /// Displayed wrappers by id: the observer tables (content offset, action observers).
    private var registered: [Int: ComponentWrapper] = [:]
    /// Body indexes on screen.
    private var displayedBody: [Int: ComponentWrapper] = [:]
    private var isScrolling = false

    // Selection (Hub's gesture recognizer with a single-gesture synchronizer).
    private weak var gestureWrapper: ComponentWrapper?
    private var pendingHighlight: (wrapper: ComponentWrapper, token: Int)?
    private var nextToken = 0

    // For finding the body components in a band of y quickly: running max of maxY, running min of minY from the end.
    private var prefixMaxY: [Double] = []
    private var suffixMinY: [Double] = []

    public init(
        pipeline: RenderPipeline, viewModel: ViewModel, viewport: Size, clock: EventClock,
        actions: ActionRegistry, imageSource: ImageSource = ImageSource(),
        imageDelivery: ComponentImageLoader.Delivery = .endOfEvent
    ) {
        self.pipeline = pipeline
        self.viewModel = viewModel
        self.viewport = viewport
        self.clock = clock
        self.actions = ActionDispatcher(registry: actions)
        self.images = ComponentImageLoader(source: imageSource, delivery: imageDelivery, clock: clock)
        self.actions.didOpenURI = { [weak self] uri, opened in
            self?.trace?.add(
                .open, "\(uri): \(opened ? "opened" : "not opened")",
                [("uri", .string(uri)), ("opened", .bool(opened))])
        }
        self.actions.didHandle = { [weak self] context, outcome in
            let name = context.actionIdentifier?.description ?? "default selection"
            let model = context.componentModel.map { " for [\($0.identifier)]" } ?? ""
            self?.trace?.add(
                .action, "\(name) (\(context.trigger))\(model): \(outcome)",
                [
                    ("action", .optional(context.actionIdentifier?.description)),
                    ("trigger", .string("\(context.trigger)")),
                    ("model", .optional(context.componentModel?.identifier)),
                    ("outcome", .string(outcome.description)), ("succeeded", .bool(outcome.succeeded)),
                ])
        }
        self.actions.didFinish = { [weak self] context, chain in
            let name = context.actionIdentifier?.description ?? "default selection"
            self?.trace?.add(
                .action, "\(name) finished" + (chain.map { ", chains to \($0)" } ?? ""),
                [
                    ("action", .optional(context.actionIdentifier?.description)), ("finished", .bool(true)),
                    ("chain", .optional(chain?.description)),
                ])
        }
    }

    // MARK: Loading

    /// Renders the view (live instances near the viewport only) and runs the controller's will-appear: the
    /// header, the overlays and every displayed body component appear.
    public func load() {
        pipeline.wrapperDelegate = self
        pipeline.render(viewModel, viewport: viewport, visibleRect: liveRect)
        isLoaded = true
        rebuildLayoutIndex()
        for wrapper in chromeWrappers { images.loadImages(for: wrapper, containerSize: viewport) }
        for index in pipeline.bodyWrappers.keys.sorted() {
            let wrapper = pipeline.bodyWrappers[index]!
            images.loadImages(for: wrapper, containerSize: viewport)
        }
        for wrapper in chromeWrappers { display(wrapper, force: true) }
        for index in onScreenIndexes() {
            if let w = pipeline.bodyWrappers[index] {
                displayedBody[index] = w
                display(w, force: true)
            }
        }
        peakLiveBodyCount = max(peakLiveBodyCount, pipeline.bodyWrappers.count)
        images.flush()
    }

    /// Hub's controller viewWillAppear (the view comes back on screen): will-appear again for the header, the
    /// overlays and every displayed body component, whatever appeared before.
    public func viewWillAppear() {
        if !isLoaded {
            load()
            return
        }
        for wrapper in chromeWrappers { display(wrapper, force: true) }
        for index in displayedBody.keys.sorted() { display(displayedBody[index]!, force: true) }
        images.flush()
    }

    /// The header and the overlays.
    private var chromeWrappers: [ComponentWrapper] {
        (pipeline.headerWrapper.map { [$0] } ?? []) + pipeline.overlayWrappers
    }

    // MARK: Events

    /// Replays one event; `step` numbers its trace records (the script line).
    public func apply(_ event: ViewEvent, step: Int? = nil) {
        if !isLoaded { load() }
        if let step { trace?.step = step } else { trace?.step += 1 }
        trace?.add(.event, Self.describe(event), [("event", .string(Self.name(of: event)))])
        switch event {
        case .highlight(let target): highlight(target)
        case .unhighlight(let target): unhighlight(target)
        case .tap(let target): tap(target)
        case .scroll(let y): scroll(to: Point(x: 0, y: y))
        case .resize(let size): resize(to: size)
        case .advance(let seconds): clock.advance(by: seconds)
        case .action(let target, let identifier, let custom):
            performAction(at: target, identifier: identifier, customData: custom)
        case .image(let uri, let ok):
            if images.complete(uri: uri, ok: ok) == nil { info("no component is waiting for \(uri)") }
        }
        images.flush()
    }

    /// A touch begins on the target (Hub's gesture Began): highlight after the delay.
    public func highlight(_ target: EventTarget) {
        guard case .wrapper(let wrapper) = resolve(target, for: "highlight") else { return }
        beginGesture(on: wrapper)
    }

    /// The touch is cancelled (moved away, or the script says so): back to None.
    public func unhighlight(_ target: EventTarget) {
        guard case .wrapper(let wrapper) = resolve(target, for: "unhighlight") else { return }
        guard let active = gestureWrapper, active === wrapper else {
            info("unhighlight: no touch on [\(wrapper.model?.identifier ?? "?")]")
            return
        }
        gestureWrapper = nil
        setSelectionState(.none, of: wrapper)
    }

    /// A touch begins (unless it already did) and ends on the target: Selected, the action flow, None after the delay.
    /// A child drawn by its parent (no child component) is selected through the parent, as Hub's custom-view child.
    public func tap(_ target: EventTarget) {
        switch resolve(target, for: "tap") {
        case .wrapper(let wrapper):
            if gestureWrapper == nil { beginGesture(on: wrapper) }
            guard let active = gestureWrapper, active === wrapper else {
                if gestureWrapper != nil {
                    info(
                        "tap on [\(wrapper.model?.identifier ?? "?")] ignored: another touch is active (one gesture at a time)"
                    )
                }
                return
            }
            // Gesture Ended: Selected, then the view controller selects the model.
            gestureWrapper = nil
            setSelectionState(.selected, of: wrapper)
            if let model = wrapper.model { select(model, customData: nil, wrapper: wrapper) }
        case .drawnChild(let parent, let index):
            componentWrapper(parent, childSelectedAt: index, customData: nil)
        case .none:
            return
        }
    }

    /// Scrolls so that content point `offset` is at the viewport's top-left (clamped to the content).
    public func scroll(to offset: Point, programmatic: Bool = false) {
        let contentHeight = pipeline.layout?.contentSize.height ?? 0
        let limit = max(0, contentHeight - viewport.height)
        let y = min(max(0, offset.y), limit)
        if y != offset.y {
            info(
                "scroll clamped to y \(y.compact) (content height \(contentHeight.compact), viewport \(viewport.height.compact))"
            )
        }
        resetHighlight()
        contentOffset = Point(x: 0, y: y)
        if programmatic { lastProgrammaticOffset = contentOffset }
        isScrolling = true
        defer { isScrolling = false }
        for wrapper in registeredWrappers where wrapper.component.contentOffsetObserver != nil {
            wrapper.component.contentOffsetObserver?.updateViewForChangedContentOffset(contentOffset)
        }
        updateLiveBody()
    }

    /// A new container size: Hub's rotation (layout again, reconfigure with the new container, resize callbacks
    /// only for sizes that changed).
    public func resize(to size: Size) {
        guard size != viewport else {
            info("resize: the viewport is already \(size)")
            return
        }
        resetHighlight()
        viewport = size
        let before = displayedBody
        pipeline.render(viewModel, viewport: size, visibleRect: liveRect)
        rebuildLayoutIndex()
        let limit = max(0, (pipeline.layout?.contentSize.height ?? 0) - viewport.height)
        if contentOffset.y > limit { contentOffset.y = limit }
        for wrapper in chromeWrappers + pipeline.bodyWrappers.keys.sorted().map({ pipeline.bodyWrappers[$0]! })
        where wrapper.containerSize != size {
            wrapper.reconfigure(containerSize: size)
        }
        // Instances that are no longer where they were disappear; the rest is settled by the live-set update.
        for (index, wrapper) in before where pipeline.bodyWrappers[index] !== wrapper {
            displayedBody[index] = nil
            endDisplay(wrapper)
        }
        updateLiveBody()
        for wrapper in chromeWrappers where registered[wrapper.id] == nil { display(wrapper, force: false) }
        // Hub loads the images of visible cells again on rotation (the container changed).
        for wrapper in chromeWrappers + displayedBody.keys.sorted().map({ displayedBody[$0]! }) {
            images.loadImages(for: wrapper, containerSize: size)
        }
    }

    /// The component at `target` performs an action through its action performer (trigger `component`).
    public func performAction(at target: EventTarget, identifier: ComponentIdentifier, customData: JSONObject?) {
        guard case .wrapper(let wrapper) = resolve(target, for: "action") else { return }
        _ = componentWrapper(wrapper, performAction: identifier, customData: customData)
    }

    // MARK: Selection (hub-framework.md §4.6)

    private func beginGesture(on wrapper: ComponentWrapper) {
        if let active = gestureWrapper {
            info(
                "touch on [\(wrapper.model?.identifier ?? "?")] ignored: a touch on [\(active.model?.identifier ?? "?")] is active (one gesture at a time)"
            )
            return
        }
        gestureWrapper = wrapper
        nextToken += 1
        let token = nextToken
        pendingHighlight = (wrapper, token)
        trace?.add(
            .state, "[\(wrapper.model?.identifier ?? "?")] will highlight in \(Self.highlightDelay)s",
            [("model", .optional(wrapper.model?.identifier)), ("pending", .string("highlighted"))])
        clock.schedule(after: Self.highlightDelay) { [weak self, weak wrapper] in
            guard let self, let wrapper, let pending = self.pendingHighlight, pending.token == token,
                pending.wrapper === wrapper
            else { return }
            self.setSelectionState(.highlighted, of: wrapper)
        }
    }

    /// Hub's update rule: any update cancels a pending highlight; the same state is never sent twice; None ends
    /// the touch.
    private func setSelectionState(_ state: SelectionState, of wrapper: ComponentWrapper) {
        pendingHighlight = nil
        if state == .none, gestureWrapper === wrapper { gestureWrapper = nil }
        guard wrapper.selectionState != state, !wrapper.isDestroyed else { return }
        wrapper.selectionState = state
        trace?.add(
            .state, "[\(wrapper.model?.identifier ?? "?")] \(state)",
            [("model", .optional(wrapper.model?.identifier)), ("state", .string(state.description))])
        wrapper.component.selectionStateHandling?.updateViewForSelectionState(state)
    }

    /// Hub resets the highlighted component on every scroll event and on resize.
    private func resetHighlight() {
        if let wrapper = gestureWrapper {
            gestureWrapper = nil
            setSelectionState(.none, of: wrapper)
        }
        pendingHighlight = nil
    }

    /// Hub's selectComponentWithModel: Selected (None after the delay), the target's actions in order until one
    /// succeeds, else the default selection action. Returns whether it was handled.
    @discardableResult
    public func select(_ model: ComponentModel, customData: JSONObject?, wrapper: ComponentWrapper?) -> Bool {
        if let wrapper {
            setSelectionState(.selected, of: wrapper)
            clock.schedule(after: Self.deselectDelay) { [weak self, weak wrapper] in
                guard let self, let wrapper, wrapper.model === model, wrapper.selectionState == .selected else {
                    return
                }
                self.setSelectionState(.none, of: wrapper)
            }
        }
        for identifier in model.target?.actions ?? [] {
            if perform(trigger: .selection, identifier: identifier, customData: customData, model: model).succeeded {
                return true
            }
        }
        let handled = perform(trigger: .selection, identifier: nil, customData: customData, model: model).succeeded
        if !handled {
            trace?.add(.note, "[\(model.identifier)] selected: nothing handled it (no target URI or actions)")
        }
        return handled
    }

    /// Hub's view-controller perform: build the context, run the handler chain and the action, then tell every
    /// displayed action observer.
    @discardableResult
    public func perform(
        trigger: ActionTrigger, identifier: ComponentIdentifier?, customData: JSONObject?,
        model: ComponentModel?
    ) -> ActionOutcome {
        let context = ActionContext(
            trigger: trigger, actionIdentifier: identifier, customData: customData,
            viewURI: viewURI, viewModel: viewModel, componentModel: model)
        let outcome = actions.handle(context)
        for wrapper in registeredWrappers where wrapper.component.actionObserver != nil {
            wrapper.component.actionObserver?.actionPerformed(with: context)
        }
        return outcome
    }

    // MARK: ComponentWrapperDelegate

    public func componentWrapper(
        _ wrapper: ComponentWrapper, performAction identifier: ComponentIdentifier,
        customData: JSONObject?
    ) -> Bool {
        perform(trigger: .component, identifier: identifier, customData: customData, model: wrapper.model).succeeded
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, willDisplayChildAt index: Int) {
        // Children appear with their parent: nothing happens while the parent is not displayed (its own
        // will-appear runs them).
        guard registered[wrapper.id] != nil, let child = wrapper.children[index],
            index < (wrapper.model?.children.count ?? 0)
        else { return }
        appear(child)
        childDidAppear(child)
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, didStopDisplayingChildAt index: Int) {
        guard let child = wrapper.children[index], registered[child.id] != nil else { return }
        endDisplay(child)
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, childSelectedAt index: Int, customData: JSONObject?) {
        // Hub bounds-checks the index and selects the child model with the custom data (no visual state).
        guard let model = wrapper.model?.child(at: index) else {
            info("child \(index) of [\(wrapper.model?.identifier ?? "?")] selected, but it has no such child: ignored")
            return
        }
        trace?.add(.state, "child \(index) of [\(wrapper.model?.identifier ?? "?")] selected (drawn by its parent)")
        select(model, customData: customData, wrapper: nil)
    }

    // MARK: Appearance (hub-framework.md §4.2, §4.5, §4.8)

    /// willDisplay: will-appear (unless already appeared since the last model change and not scrolling), the
    /// content-offset rule, and the observer tables.
    private func display(_ wrapper: ComponentWrapper, force: Bool) {
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
    private func appear(_ wrapper: ComponentWrapper) {
        wrapper.appearanceCount += 1
        trace?.add(
            .appear, "[\(wrapper.model?.identifier ?? "?")] will appear (\(wrapper.appearanceCount))",
            [("model", .optional(wrapper.model?.identifier)), ("appearance", .int(wrapper.appearanceCount))])
        wrapper.component.viewObserver?.viewWillAppear()
        for index in wrapper.visibleChildIndexes.sorted() {
            guard let child = wrapper.children[index] else { continue }
            appear(child)
            childDidAppear(child)
        }
        wrapper.viewHasAppearedSinceLastModelChange = true
    }

    private func childDidAppear(_ child: ComponentWrapper) {
        images.loadImages(for: child, containerSize: child.containerSize)
        applyContentOffsetRule(child)
        register(child)
    }

    private func registerVisibleChildren(of wrapper: ComponentWrapper) {
        for index in wrapper.visibleChildIndexes.sorted() {
            guard let child = wrapper.children[index] else { continue }
            register(child)
            registerVisibleChildren(of: child)
        }
    }

    /// Hub: an observer is updated on will-appear when it appears for the first time or the offset is not the
    /// last one set programmatically.
    private func applyContentOffsetRule(_ wrapper: ComponentWrapper) {
        guard let observer = wrapper.component.contentOffsetObserver else { return }
        if wrapper.appearanceCount == 1 || contentOffset != lastProgrammaticOffset {
            observer.updateViewForChangedContentOffset(contentOffset)
        }
    }

    private func register(_ wrapper: ComponentWrapper) {
        if registered.updateValue(wrapper, forKey: wrapper.id) !== wrapper { registeredOrder = nil }
    }

    /// didEndDisplaying: out of the observer tables, with its children.
    private func endDisplay(_ wrapper: ComponentWrapper) {
        guard registered.removeValue(forKey: wrapper.id) != nil else { return }
        registeredOrder = nil
        trace?.add(
            .disappear, "[\(wrapper.model?.identifier ?? "?")] did disappear",
            [("model", .optional(wrapper.model?.identifier))])
        for index in wrapper.children.keys.sorted() { endDisplay(wrapper.children[index]!) }
    }

    /// The displayed wrappers in a stable order (by id); destroyed ones are dropped.
    private var registeredWrappers: [ComponentWrapper] {
        if let registeredOrder, !registeredOrder.contains(where: { $0.isDestroyed || $0.isInPool }) {
            return registeredOrder
        }
        registered = registered.filter { !$0.value.isDestroyed && !$0.value.isInPool }
        let order = registered.keys.sorted().map { registered[$0]! }
        registeredOrder = order
        return order
    }
    /// `registered` in id order, kept until the table changes (every action and scroll reads it).
    private var registeredOrder: [ComponentWrapper]?

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

    private func rebuildLayoutIndex() {
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

    private func onScreenIndexes() -> [Int] { bodyIndexes(intersecting: visibleRect) }

    /// Moves instances between the pool and the models entering the live band; runs appearance for the
    /// components entering and leaving the viewport.
    private func updateLiveBody() {
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

    // MARK: Targets and hit testing

    enum Resolved {
        case wrapper(ComponentWrapper)
        case drawnChild(ComponentWrapper, Int)
        case none
    }

    private func resolve(_ target: EventTarget, for event: String) -> Resolved {
        switch target {
        case .point(let point):
            guard let hit = hitTest(point) else {
                note("\(event) at \(point): no component there")
                return .none
            }
            return .wrapper(hit)
        case .indexPath(let path, let section):
            var wrapper: ComponentWrapper
            var rest = path[...]
            switch section {
            case .header:
                guard let header = pipeline.headerWrapper else {
                    note("\(event): the view has no header")
                    return .none
                }
                wrapper = header
            case .overlay:
                guard let first = rest.popFirst(), first >= 0, first < pipeline.overlayWrappers.count else {
                    note("\(event) at overlay \(path): the view has \(pipeline.overlayWrappers.count) overlay(s)")
                    return .none
                }
                wrapper = pipeline.overlayWrappers[first]
            case .body:
                guard let first = rest.popFirst() else {
                    note("\(event): an empty index path names no body component")
                    return .none
                }
                guard first >= 0, first < viewModel.body.count else {
                    note("\(event) at \(target): the body has \(viewModel.body.count) component(s)")
                    return .none
                }
                guard let live = displayedBody[first] else {
                    let y = pipeline.layout?.frames[first].minY ?? 0
                    note(
                        "\(event) at \(target): [\(viewModel.body[first].identifier)] is not on screen (its frame starts at y \(y.compact); scroll first)"
                    )
                    return .none
                }
                wrapper = live
            }
            for index in rest {
                guard let model = wrapper.model, index >= 0, index < model.children.count else {
                    note("\(event) at \(target): [\(wrapper.model?.identifier ?? "?")] has no child \(index)")
                    return .none
                }
                guard let child = wrapper.children[index] else {
                    if index == path.last { return .drawnChild(wrapper, index) }
                    note(
                        "\(event) at \(target): child \(index) of [\(model.identifier)] is drawn by its parent, not a component"
                    )
                    return .none
                }
                wrapper = child
            }
            return .wrapper(wrapper)
        }
    }

    /// The component under a viewport point: overlays (last on top), then the header, then the body at the
    /// current offset; inside a component, the child drawn on top at that point (from its current drawing).
    public func hitTest(_ point: Point) -> ComponentWrapper? {
        for overlay in pipeline.overlayWrappers.reversed() where overlay.frame.contains(point) {
            return descend(overlay, point: Point(x: point.x - overlay.frame.x, y: point.y - overlay.frame.y))
        }
        if let header = pipeline.headerWrapper, header.frame.contains(point) {
            return descend(header, point: Point(x: point.x - header.frame.x, y: point.y - header.frame.y))
        }
        let content = Point(x: point.x + contentOffset.x, y: point.y + contentOffset.y)
        for index in displayedBody.keys.sorted().reversed() {
            let wrapper = displayedBody[index]!
            if wrapper.frame.contains(content) {
                return descend(wrapper, point: Point(x: content.x - wrapper.frame.x, y: content.y - wrapper.frame.y))
            }
        }
        return nil
    }

    /// `point` is in `wrapper`'s own coordinates.
    private func descend(_ wrapper: ComponentWrapper, point: Point) -> ComponentWrapper {
        guard !wrapper.children.isEmpty else { return wrapper }
        let bounds = Rect(origin: .zero, size: wrapper.frame.size)
        // The latest drawing says where each child is; the last drawn is on top.
        for item in wrapper.draw().reversed() {
            guard case .child(let rect, let index) = item, let child = wrapper.children[index],
                rect.contains(point), bounds.contains(point)
            else { continue }
            child.setFrame(rect)
            return descend(child, point: Point(x: point.x - rect.x, y: point.y - rect.y))
        }
        return wrapper
    }

    // MARK: Output

    /// The view as it is now, for the renderers: live components drawn, the others with their frames.
    public func renderTree() -> RenderTree {
        func node(_ wrapper: ComponentWrapper) -> RenderNode? {
            guard let model = wrapper.model else { return nil }
            return pipeline.node(for: wrapper, model: model, frame: wrapper.frame)
        }
        let frames = pipeline.layout?.frames ?? []
        var body: [RenderNode] = []
        body.reserveCapacity(viewModel.body.count)
        for (index, model) in viewModel.body.enumerated() {
            if let wrapper = pipeline.bodyWrappers[index], let n = node(wrapper) {
                body.append(n)
                continue
            }
            let entry = pipeline.sizing.entry(for: model)
            body.append(
                RenderNode(
                    model: model, componentIdentifier: model.componentIdentifier, source: entry.source,
                    traits: entry.traits, frame: index < frames.count ? frames[index] : .zero))
        }
        return RenderTree(
            viewID: viewModel.identifier, title: viewModel.title, viewport: viewport,
            contentSize: pipeline.layout?.contentSize ?? .zero, header: pipeline.headerWrapper.flatMap(node),
            body: body, overlays: pipeline.overlayWrappers.compactMap(node))
    }

    // MARK: Trace helpers

    /// Something worth saying that is not a problem.
    private func info(_ message: String) { trace?.add(.note, message) }

    /// An event that could not apply as asked.
    private func note(_ message: String) {
        problems.append("step \(trace?.step ?? 0): \(message)")
        trace?.add(.error, message)
    }

    static func name(of event: ViewEvent) -> String {
        switch event {
        case .highlight: return "highlight"
        case .unhighlight: return "unhighlight"
        case .tap: return "tap"
        case .scroll: return "scroll"
        case .resize: return "resize"
        case .advance: return "advance"
        case .action: return "action"
        case .image: return "image"
        }
    }

    static func describe(_ event: ViewEvent) -> String {
        switch event {
        case .highlight(let t), .unhighlight(let t), .tap(let t): return "\(name(of: event)) \(t)"
        case .scroll(let y): return "scroll to y \(y.compact)"
        case .resize(let s): return "resize to \(s)"
        case .advance(let s): return "advance \(s.compact)s"
        case .action(let t, let id, let custom):
            return "action \(id) at \(t)" + (custom.map { " custom \(JSONValue.object($0).jsonText)" } ?? "")
        case .image(let uri, let ok): return "image \(uri) \(ok ? "ok" : "failed")"
        }
    }
}
