import CHubPlugin
import FoundationEssentials
import HubCore
import HubInjection

extension PluginHost {
    /// An event engine for `viewModel` over this host's plugins: components from the registry, actions from
    /// the action factories and handlers plugins registered, the default selection action opening URIs through
    /// the URI-opener service (the host's records them in `services.openedURIs`), images from files inside the
    /// folders `imageAccess` allows (default: `viewFile`'s folder) and `data:` URIs, other schemes through a
    /// plugin's image-loader service if one is loaded. A registry per engine, so engines made again on one host
    /// (dev reloads) never chain each other's URI openers.
    /// Call `load()` (or apply an event) to render it. `events` and `dev` both build their engines here; `dev`
    /// passes its long-lived `pipeline`, so instances, the reuse pool and UI states carry over between renders.
    public func makeEventEngine(
        viewModel: ViewModel, viewport: Size, viewFile: URL? = nil,
        layoutManager: LayoutManager = DefaultLayoutManager(),
        imageDelivery: ComponentImageLoader.Delivery = .endOfEvent,
        imageAccess: ImageAccess? = nil, pipeline: RenderPipeline? = nil
    ) -> EventEngine {
        let pipeline = pipeline ?? RenderPipeline(registry: registry, layoutManager: layoutManager)
        let actions = ActionRegistry(
            factories: actionFactories,
            handlers: { [weak self] in self?.actionHandlers.map(\.handler) ?? [] },
            uriOpener: { [weak self] uri in
                guard let self, case .success(let opened) = self.services.openURI(uri) else { return false }
                return opened
            })
        let source = ImageSource(access: imageAccess ?? ImageAccess(viewFile: viewFile))
        source.otherSchemes = { [weak self] uri in self?.loadImageThroughPlugin(uri) ?? Self.noLoader(uri) }
        let engine = EventEngine(
            pipeline: pipeline, viewModel: viewModel, viewport: viewport, clock: scheduler,
            actions: actions, imageSource: source, imageDelivery: imageDelivery)
        engine.viewURI = viewFile.map { $0.standardizedFileURL.absoluteString }
        return engine
    }

    /// Loads through the image-loader service when a plugin provides it (the host's own provider only reads
    /// files, which `ImageSource` already does).
    func loadImageThroughPlugin(_ uri: String) -> Result<ImageBytes, ImageLoadError> {
        guard let provider = services.registry.provider(of: ServiceKey(id: HUB_SERVICE_IMAGE_LOADER)),
            provider.owner != .host
        else { return Self.noLoader(uri) }
        switch services.loadImage(uri) {
        case .success(let image):
            return .success(ImageBytes(bytes: image.bytes, pixelSize: image.size == .zero ? nil : image.size))
        case .failure(let error):
            return .failure(ImageLoadError(uri: uri, reason: "\(error) (image loader of \(provider.owner))"))
        }
    }

    /// The bytes a plugin's image-loader service gives for `uri` now, or nil (none loaded, or the load failed): a
    /// one-shot drawing's images of remote URIs, which hubhost never fetches itself.
    public func suppliedImage(_ uri: String) -> [UInt8]? {
        guard case .success(let image) = loadImageThroughPlugin(uri) else { return nil }
        return image.bytes
    }

    static func noLoader(_ uri: String) -> Result<ImageBytes, ImageLoadError> {
        .failure(ImageLoadError(uri: uri, reason: ImageSource.noLoaderReason(ImageSource.scheme(of: uri) ?? "")))
    }
}
