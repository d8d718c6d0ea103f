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

    public internal(set) var viewModel: ViewModel
    public internal(set) var viewport: Size
    public internal(set) var contentOffset = Point.zero
    /// The offset last set programmatically (Hub's content-offset rule compares with it).
    public internal(set) var lastProgrammaticOffset = Point.zero
    public internal(set) var isLoaded = false
    /// The most body instances live at once so far.
    public internal(set) var peakLiveBodyCount = 0
    /// Problems met while replaying (a target off screen, …), with the script line of the step (0: none), also in
    /// the trace as errors.
    public internal(set) var problems: [(step: Int, message: String)] = []

    /// Displayed wrappers by id: the observer tables (content offset, action observers).
    var registered: [Int: ComponentWrapper] = [:]
    /// `registered` in id order, kept until the table changes (every action and scroll reads it).
    var registeredOrder: [ComponentWrapper]?
    /// Body indexes on screen.
    var displayedBody: [Int: ComponentWrapper] = [:]
    var isScrolling = false

    // Selection (Hub's gesture recognizer with a single-gesture synchronizer).
    weak var gestureWrapper: ComponentWrapper?
    var pendingHighlight: (wrapper: ComponentWrapper, token: Int)?
    var nextToken = 0

    // For finding the body components in a band of y quickly: running max of maxY, running min of minY from the end.
    var prefixMaxY: [Double] = []
    var suffixMinY: [Double] = []

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
        (clock as? ManualClock)?.onRunaway = { [weak self] owner in
            self?.problem(
                "timers of \(owner.displayName) kept scheduling themselves with no delay "
                    + "(\(ManualClock.maxFiringsPerAdvance) in one step): its pending timers are cancelled")
        }
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
            // A plugin's actions chaining without end is a problem of the step (exit 1), not only a trace line.
            if case .failed(.chainTooLong) = outcome { self?.problem("\(name)\(model): \(outcome)") }
        }
        self.actions.didFinish = { [weak self] context, chain in
            let name = context.actionIdentifier?.description ?? "default selection"
            // Named as its start was (trigger and model): two actions of one name finishing can be told apart.
            let model = context.componentModel.map { " for [\($0.identifier)]" } ?? ""
            self?.trace?.add(
                .action, "\(name) (\(context.trigger))\(model) finished" + (chain.map { ", chains to \($0)" } ?? ""),
                [
                    ("action", .optional(context.actionIdentifier?.description)), ("finished", .bool(true)),
                    ("trigger", .string("\(context.trigger)")),
                    ("model", .optional(context.componentModel?.identifier)), ("chain", .optional(chain?.description)),
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
    var chromeWrappers: [ComponentWrapper] {
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
            if images.complete(uri: uri, ok: ok) == nil { note("no component is waiting for \(uri)") }
        case .snapshot: break  // the caller (hubhost snapshot) draws `screenTree()` after this step
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
            note("unhighlight: no touch on [\(wrapper.model?.identifier ?? "?")]")
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
                    note(
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
            note(
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
            note("resize: the viewport is already \(size)")
            return
        }
        resetHighlight()
        viewport = size
        let before = displayedBody
        pipeline.render(viewModel, viewport: size, visibleRect: liveRect)
        rebuildLayoutIndex()
        let limit = max(0, (pipeline.layout?.contentSize.height ?? 0) - viewport.height)
        if contentOffset.y > limit {
            // The bounds change moved the offset: a scroll, as UIKit reports it, to every displayed observer.
            contentOffset.y = limit
            note("resize clamped the offset to y \(limit.compact)")
            for wrapper in registeredWrappers where wrapper.component.contentOffsetObserver != nil {
                wrapper.component.contentOffsetObserver?.updateViewForChangedContentOffset(contentOffset)
            }
        }
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
        // A script may make any component perform an action (to exercise handlers); in Hub only a component with
        // an action performer can, which the trace says.
        if wrapper.component.actionPerformerSupport == nil {
            note(
                "[\(wrapper.model?.identifier ?? "?")] has no action performer: the action is performed as if it had one"
            )
        }
        _ = componentWrapper(wrapper, performAction: identifier, customData: customData)
    }

}
