/// Makes components report every call the host makes into them to an `EventTrace` (install `decorate` as the
/// registry's `componentDecorator`). Each instance gets a name, `namespace:name#n` in creation order, and the
/// trace shows the model it was last configured with.
public final class ComponentTracer {
    public let trace: EventTrace
    private var nextInstance = 0

    public init(trace: EventTrace) { self.trace = trace }

    public func decorate(_ component: Component, source: ComponentSource, identifier: ComponentIdentifier) -> Component
    {
        nextInstance += 1
        let name = "\(identifier)#\(nextInstance)"
        let origin: String
        switch source {
        case .factory(let namespace, let owner): origin = "\(namespace) of \(owner)"
        case .fallback(let category): origin = "fallback for category \(category)"
        }
        trace.add(.call, "\(name) created (\(origin))", [("instance", .string(name)), ("method", .string("create"))])
        return TracingComponent(component, name: name, tracer: self)
    }

    fileprivate func call(
        _ instance: TracingComponent, _ method: StaticString, _ detail: @autoclosure () -> String = "",
        _ fields: @autoclosure () -> [(String, JSONValue)] = []
    ) {
        call(
            instance, method,
            appending: { message in
                let detail = detail()
                if !detail.isEmpty {
                    message.add(" ")
                    message.add(detail)
                }
            }, fields())
    }

    /// The message's bytes, reused from call to call (main thread only, like the components it traces).
    private let message = TraceText()

    /// `appending` writes the call's details onto the message. This runs for every call into every component, so
    /// the line is built as bytes in one reused buffer and made a string once (appending to a String piece by
    /// piece cost more than the call it traced).
    fileprivate func call(
        _ instance: TracingComponent, _ method: StaticString, appending detail: (TraceText) -> Void,
        _ fields: @autoclosure () -> [(String, JSONValue)] = []
    ) {
        message.removeAll()
        message.add(instance.name)
        if let model = instance.modelID {
            message.add(" [")
            message.add(model)
            message.add("]")
        }
        message.add(" ")
        message.add(method)
        detail(message)
        if trace.takesCallBytes { return message.withBytes(trace.addCall) }
        trace.add(
            .call, message.string,
            [
                ("instance", .string(instance.name)), ("model", .optional(instance.modelID)),
                ("method", .string(method.description)),
            ] + fields())
    }
}

/// A trace line built as UTF-8 bytes in one buffer reused from line to line. Raw memory rather than an array:
/// a line is a dozen appends of a few bytes each, and an array's uniqueness and capacity checks per append cost
/// as much as the copies.
final class TraceText {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init() {
        capacity = 256
        start = .allocate(capacity: capacity)
    }

    deinit { start.deallocate() }

    func removeAll() { count = 0 }

    /// Room for `more` bytes after the ones written.
    @inline(__always) private func reserve(_ more: Int) {
        if count + more > capacity { grow(to: count + more) }
    }

    private func grow(to needed: Int) {
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: max(needed, capacity * 2))
        larger.update(from: start, count: count)
        start.deallocate()
        start = larger
        capacity = max(needed, capacity * 2)
    }

    private func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        if let base = bytes.baseAddress { (start + count).update(from: base, count: bytes.count) }
        count += bytes.count
    }

    func add(_ text: StaticString) {
        add(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The string's own bytes when it has them in one piece (a copy into a `var` for `withUTF8` made the trace
    /// a twentieth slower); a bridged string is made contiguous first.
    func add(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ add($0) }) == nil {
            var text = text
            text.withUTF8 { add($0) }
        }
    }

    /// "375×667", as `Size.description` writes it.
    func add(_ size: Size) {
        add(size.width)
        add("×")
        add(size.height)
    }

    private func add(_ value: Double) {
        reserve(Double.maxCompactLength)
        count += value.writeCompact(into: start + count)
    }

    var string: String { String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self) }

    func withBytes(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        body(UnsafeBufferPointer(start: start, count: count))
    }
}

/// A component that forwards everything to the component it wraps and traces each call. It offers exactly the
/// extensions the wrapped component offers.
final class TracingComponent: Component, ComponentWithChildren, ComponentWithImageHandling,
    ComponentWithRestorableUIState,
    ComponentWithSelectionState, ComponentContentOffsetObserver, ComponentViewObserver, ComponentActionPerformer,
    ComponentActionObserver
{
    let inner: Component
    let name: String
    /// Strong: the tracer holds no components, and an instance may be destroyed after the tracer is dropped.
    let tracer: ComponentTracer
    /// The model last configured (for the trace).
    private(set) var modelID: String?

    init(_ inner: Component, name: String, tracer: ComponentTracer) {
        self.inner = inner
        self.name = name
        self.tracer = tracer
    }

    var layoutTraits: Set<LayoutTrait> {
        let traits = inner.layoutTraits
        tracer.call(self, "layoutTraits", "→ \(traits.map(\.rawValue).sorted().joined(separator: ","))")
        return traits
    }

    func loadView() {
        tracer.call(self, "loadView")
        inner.loadView()
    }

    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        let size = inner.preferredViewSize(for: model, containerSize: containerSize)
        tracer.call(
            self, "preferredViewSize",
            appending: { message in
                message.add(" (")
                message.add(model.identifier)
                message.add(", container ")
                message.add(containerSize)
                message.add(") → ")
                message.add(size)
            },
            [("for", .string(model.identifier)), ("container", .size(containerSize)), ("result", .size(size))])
        return size
    }

    func prepareViewForReuse() {
        tracer.call(self, "prepareViewForReuse")
        inner.prepareViewForReuse()
    }

    func configureView(with model: ComponentModel, containerSize: Size) {
        modelID = model.identifier
        tracer.call(
            self, "configureView",
            appending: { message in
                message.add(" (container ")
                message.add(containerSize)
                message.add(")")
            }, [("container", .size(containerSize))])
        inner.configureView(with: model, containerSize: containerSize)
    }

    func drawView(into view: ViewBuilder, size: Size) {
        let before = view.items.count
        inner.drawView(into: view, size: size)
        tracer.call(self, "drawView", "(\(size)) → \(view.items.count - before) items", [("size", .size(size))])
    }

    func destroy() {
        tracer.call(self, "destroy")
        inner.destroy()
    }

    // MARK: Extensions: offered when the wrapped component offers them

    var childrenSupport: ComponentWithChildren? { inner.childrenSupport == nil ? nil : self }
    var imageHandling: ComponentWithImageHandling? { inner.imageHandling == nil ? nil : self }
    var restorableUIState: ComponentWithRestorableUIState? { inner.restorableUIState == nil ? nil : self }
    var selectionStateHandling: ComponentWithSelectionState? { inner.selectionStateHandling == nil ? nil : self }
    var contentOffsetObserver: ComponentContentOffsetObserver? { inner.contentOffsetObserver == nil ? nil : self }
    var viewObserver: ComponentViewObserver? { inner.viewObserver == nil ? nil : self }
    var actionPerformerSupport: ComponentActionPerformer? { inner.actionPerformerSupport == nil ? nil : self }
    var actionObserver: ComponentActionObserver? { inner.actionObserver == nil ? nil : self }

    var childDelegate: ChildDelegate? {
        get { inner.childrenSupport?.childDelegate }
        set {
            tracer.call(self, "setChildDelegate")
            inner.childrenSupport?.childDelegate = newValue
        }
    }

    func preferredSizeForImage(_ image: ImageData, model: ComponentModel, containerSize: Size) -> Size {
        let size =
            inner.imageHandling?.preferredSizeForImage(image, model: model, containerSize: containerSize) ?? .zero
        tracer.call(
            self, "preferredSizeForImage",
            "(\(image.kind)\(image.identifier.map { " " + $0 } ?? ""), \(image.uri ?? "no uri")) → \(size)",
            [("image", .string("\(image.kind)")), ("uri", .optional(image.uri)), ("result", .size(size))])
        return size
    }

    func updateView(forLoadedImage image: LoadedImage, from data: ImageData, model: ComponentModel, animated: Bool) {
        tracer.call(
            self, "imageLoaded", "(\(image.kind), \(image.uri), \(image.bytes.count) bytes, animated \(animated))",
            [("uri", .string(image.uri)), ("bytes", .int(image.bytes.count)), ("animated", .bool(animated))])
        inner.imageHandling?.updateView(forLoadedImage: image, from: data, model: model, animated: animated)
    }

    var currentUIState: String? {
        let state = inner.restorableUIState?.currentUIState
        tracer.call(self, "currentUIState", "→ \(state ?? "nil")", [("result", .optional(state))])
        return state
    }

    func restoreUIState(_ state: String) {
        tracer.call(self, "restoreUIState", "(\(state))", [("state", .string(state))])
        inner.restorableUIState?.restoreUIState(state)
    }

    func updateViewForSelectionState(_ state: SelectionState) {
        tracer.call(self, "updateSelectionState", "(\(state))", [("state", .string(state.description))])
        inner.selectionStateHandling?.updateViewForSelectionState(state)
    }

    func updateViewForChangedContentOffset(_ offset: Point) {
        tracer.call(self, "contentOffsetChanged", "(\(offset))", [("offset", .point(offset))])
        inner.contentOffsetObserver?.updateViewForChangedContentOffset(offset)
    }

    func viewDidResize(_ size: Size) {
        tracer.call(self, "viewDidResize", "(\(size))", [("size", .size(size))])
        inner.viewObserver?.viewDidResize(size)
    }

    func viewWillAppear() {
        tracer.call(self, "viewWillAppear")
        inner.viewObserver?.viewWillAppear()
    }

    var actionPerformer: ActionPerformer? {
        get { inner.actionPerformerSupport?.actionPerformer }
        set {
            tracer.call(self, "setActionPerformer")
            inner.actionPerformerSupport?.actionPerformer = newValue
        }
    }

    func actionPerformed(with context: ActionContext) {
        tracer.call(
            self, "actionPerformed",
            "(\(context.actionIdentifier?.description ?? "default selection"), \(context.trigger))",
            [("action", .optional(context.actionIdentifier?.description))])
        inner.actionObserver?.actionPerformed(with: context)
    }
}

extension ComponentWrapper {
    /// The instance's name in a trace ("ns:name#3"), when its component is traced: JSON records of appearance and
    /// selection carry it, so they can be joined to the call records of the same instance.
    var traceName: String? { (component as? TracingComponent)?.name }
}
