/// Hub's image loading for component wrappers (`loadImagesForComponentWrapper`): for components with the
/// image-handling extension it asks the preferred size of the main, background and each custom image, starts one
/// load per URL shared by every component waiting for it, and delivers the result to each waiting component whose
/// *current* model still has that URL for that image (older requests are stale and dropped). A failed load drops
/// every request for its URL.
///
/// Loads finish asynchronously, as in Hub: at the end of the event that asked (`.endOfEvent`), after a latency on
/// the event clock (`.after`), or only when told (`.manual`: `complete(uri:ok:)`, the script's `image` event).
public final class ComponentImageLoader {
    public enum Delivery: Equatable {
        case endOfEvent
        case after(seconds: Double)
        case manual
    }

    public let source: ImageSource
    public var delivery: Delivery
    let clock: EventClock
    var trace: EventTrace?

    private struct Request {
        let kind: ImageData.Kind
        let identifier: String?
        weak var wrapper: ComponentWrapper?
        let requestedAt: Double
    }
    /// Requests waiting for a URL, in request order; a URL is here while its one load is in flight.
    private var waiting: [String: [Request]] = [:]
    private var inFlight: [String] = []

    public init(source: ImageSource, delivery: Delivery = .endOfEvent, clock: EventClock) {
        self.source = source
        self.delivery = delivery
        self.clock = clock
    }

    /// URLs whose load has not finished, in the order they started.
    public var pendingURIs: [String] { inFlight }

    /// URLs whose last load failed (until one succeeds).
    public private(set) var failedURIs: Set<String> = []

    /// The bytes of the remote images (`https:`…) a plugin's loader supplied, newest last, so a drawing shows what
    /// was delivered (hubhost reads only local files and `data:` URIs itself). At most `suppliedBudget` bytes:
    /// the oldest go first, and are drawn as placeholders again.
    public private(set) var supplied: [String: ImageBytes] = [:]
    private var suppliedOrder: [String] = []
    private var suppliedBytes = 0
    public static let suppliedBudget = 64 << 20

    /// `supplied` as a drawing asks for it.
    public func suppliedImage(_ uri: String) -> [UInt8]? { supplied[uri]?.bytes }

    /// `supplied` as it is now, for a drawing made later (a snapshot step's, a frame's).
    public var suppliedSoFar: (String) -> [UInt8]? { { [supplied] in supplied[$0]?.bytes } }

    /// The URLs a drawing of this moment shows as their placeholders, not their images: loads still in flight or
    /// failed (a component's image view stays empty until an image is delivered to it).
    public var unshownURIs: Set<String> { failedURIs.union(inFlight) }

    /// Asks `wrapper`'s component for the images of its current model and requests them (Hub's order: main,
    /// background, then custom images by key).
    public func loadImages(for wrapper: ComponentWrapper, containerSize: Size) {
        guard let handling = wrapper.component.imageHandling, let model = wrapper.model else { return }
        var images: [ImageData] = []
        if let main = model.mainImage { images.append(main) }
        if let background = model.backgroundImage { images.append(background) }
        for key in model.customImages.keys.sorted() { images.append(model.customImages[key]!) }
        for data in images {
            if let local = data.local, case .success(let image) = source.load(local) {
                handling.updateView(
                    forLoadedImage: LoadedImage(
                        uri: local, kind: data.kind, identifier: data.identifier,
                        pixelSize: image.pixelSize, bytes: image.bytes),
                    from: data, model: model, animated: false)
            }
            guard let uri = data.uri, !uri.isEmpty else { continue }
            let size = handling.preferredSizeForImage(data, model: model, containerSize: containerSize)
            guard size.width > 0 || size.height > 0 else { continue }  // zero: the component does not want it
            let first = waiting[uri] == nil
            waiting[uri, default: []].append(
                Request(
                    kind: data.kind, identifier: data.identifier, wrapper: wrapper,
                    requestedAt: clock.now))
            if first {
                inFlight.append(uri)
                trace?.add(
                    .image, "load \(uri) started (\(data.kind), wanted \(size), for [\(model.identifier)])",
                    [("uri", .string(uri)), ("status", .string("started"))])
                if case .after(let seconds) = delivery {
                    clock.schedule(after: seconds) { [weak self] in self?.complete(uri: uri, ok: true) }
                }
            } else {
                trace?.add(
                    .image, "\(uri) already loading: [\(model.identifier)] waits for it (\(data.kind))",
                    [("uri", .string(uri)), ("status", .string("shared"))])
            }
        }
    }

    /// Finishes the load of `uri`: with its bytes from the source when `ok`, else as failed. Returns how many
    /// components got the image; nil when nothing was waiting for `uri`.
    @discardableResult
    public func complete(uri: String, ok: Bool) -> Int? {
        guard waiting[uri] != nil else { return nil }
        let result =
            ok ? source.load(uri) : .failure(ImageLoadError(uri: uri, reason: "the load failed (as the script says)"))
        return finish(uri: uri, result: result)
    }

    /// Completes every load in flight (end of an event in `.endOfEvent` mode).
    public func flush() {
        guard delivery == .endOfEvent else { return }
        while let uri = inFlight.first {
            if complete(uri: uri, ok: true) == nil { inFlight.removeFirst() }
        }
    }

    @discardableResult
    private func finish(uri: String, result: Result<ImageBytes, ImageLoadError>) -> Int {
        let requests = waiting.removeValue(forKey: uri) ?? []
        inFlight.removeAll { $0 == uri }
        switch result {
        case .failure(let error):
            failedURIs.insert(uri)
            trace?.add(
                .image, "\(uri) failed: \(error.reason); dropped \(requests.count) waiting",
                [("uri", .string(uri)), ("status", .string("failed")), ("reason", .string(error.reason))])
            return 0
        case .success(let image):
            failedURIs.remove(uri)
            keepIfSupplied(uri, image)
            var delivered = 0
            var stale = 0
            for request in requests {
                // Hub re-reads the wrapper's current model: a wrapper now showing another URL gets nothing.
                guard let wrapper = request.wrapper, !wrapper.isDestroyed, let model = wrapper.model,
                    model.imageData(request.kind, identifier: request.identifier)?.uri == uri,
                    let handling = wrapper.component.imageHandling,
                    let data = model.imageData(request.kind, identifier: request.identifier)
                else {
                    stale += 1
                    continue
                }
                let loaded = LoadedImage(
                    uri: uri, kind: request.kind, identifier: request.identifier,
                    pixelSize: image.pixelSize, bytes: image.bytes)
                handling.updateView(
                    forLoadedImage: loaded, from: data, model: model,
                    animated: clock.now - request.requestedAt > 0.07)
                delivered += 1
            }
            trace?.add(
                .image,
                "\(uri) loaded (\(image.bytes.count) bytes, \(image.pixelSize)): delivered to \(delivered)"
                    + (stale > 0 ? ", dropped \(stale) stale" : ""),
                [
                    ("uri", .string(uri)), ("status", .string("loaded")), ("delivered", .int(delivered)),
                    ("stale", .int(stale)),
                ])
            return delivered
        }
    }

    /// Keeps `image` when a plugin's loader supplied it (a scheme other than files and `data:`).
    private func keepIfSupplied(_ uri: String, _ image: ImageBytes) {
        switch ImageSource.scheme(of: uri) {
        case nil, "file"?, "data"?: return
        default: break
        }
        if let old = supplied.removeValue(forKey: uri) {
            suppliedBytes -= old.bytes.count
            suppliedOrder.removeAll { $0 == uri }
        }
        guard image.bytes.count <= Self.suppliedBudget else { return }
        while suppliedBytes + image.bytes.count > Self.suppliedBudget, !suppliedOrder.isEmpty {
            let oldest = suppliedOrder.removeFirst()
            suppliedBytes -= supplied.removeValue(forKey: oldest)?.bytes.count ?? 0
        }
        supplied[uri] = image
        suppliedOrder.append(uri)
        suppliedBytes += image.bytes.count
    }
}
