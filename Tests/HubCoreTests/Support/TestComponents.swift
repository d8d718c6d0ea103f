import HubCore

/// A log shared by the test components of one test.
final class CallLog {
    var entries: [String] = []
    var created = 0
    func add(_ s: String) { entries.append(s) }
    func take() -> [String] {
        defer { entries = [] }
        return entries
    }
}

/// Records every lifecycle call as "<call>#<instance>[:<model id>]"; keeps a restorable UI state.
final class RecordingComponent: Component, ComponentWithRestorableUIState, ComponentViewObserver {
    let log: CallLog
    let number: Int
    var traits: Set<LayoutTrait>
    var size: Size
    var uiState: String?
    var model: ComponentModel?
    var resizes: [Size] = []

    init(log: CallLog, traits: Set<LayoutTrait> = [.fullWidth], size: Size = Size(width: 320, height: 50)) {
        self.log = log
        self.traits = traits
        self.size = size
        number = log.created
        log.created += 1
    }

    var layoutTraits: Set<LayoutTrait> { traits }
    func loadView() { log.add("load#\(number)") }
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size { size }
    func prepareViewForReuse() {
        log.add("prepare#\(number)")
        uiState = nil
    }
    func configureView(with model: ComponentModel, containerSize: Size) {
        self.model = model
        log.add("configure#\(number):\(model.identifier)")
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.rect(Rect(x: 0, y: 0, width: size.width, height: size.height), RectStyle(fill: .white))
        view.text(Rect(x: 0, y: 0, width: size.width, height: 20), model?.title ?? "", TextStyle())
    }
    var currentUIState: String? { uiState }
    func restoreUIState(_ state: String) {
        log.add("restore#\(number):\(state)")
        uiState = state
    }
    func viewDidResize(_ size: Size) { resizes.append(size) }
    func viewWillAppear() {}
    func destroy() { log.add("destroy#\(number)") }
}

/// A carousel: creates one child per child model at configure, lays them out horizontally, draws them.
final class TestCarousel: Component, ComponentWithChildren {
    weak var childDelegate: ChildDelegate?
    let log: CallLog
    var model: ComponentModel?
    var childSizes: [Size] = []
    var containerSeen: Size = .zero
    init(log: CallLog) { self.log = log }
    var layoutTraits: Set<LayoutTrait> { [.fullWidth] }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        // Sizing: as tall as the tallest child plus padding (children sized through the delegate).
        var tallest = 0.0
        for index in model.children.indices {
            tallest = max(tallest, childDelegate?.createChild(at: index).height ?? 0)
        }
        return Size(width: containerSize.width, height: tallest + 20)
    }
    func prepareViewForReuse() { childSizes = [] }
    func configureView(with model: ComponentModel, containerSize: Size) {
        self.model = model
        containerSeen = containerSize
        childSizes = model.children.indices.map { childDelegate?.createChild(at: $0) ?? .zero }
    }
    func drawView(into view: ViewBuilder, size: Size) {
        var x = 10.0
        for (index, childSize) in childSizes.enumerated() {
            view.child(Rect(x: x, y: 10, width: childSize.width, height: childSize.height), index: index)
            x += childSize.width + 10
        }
    }
}

/// A child tile whose preferred size depends on the container, so tests can see the container it got.
final class TestTile: Component {
    let log: CallLog
    let number: Int
    var container: Size = .zero
    init(log: CallLog) {
        self.log = log
        number = log.created
        log.created += 1
    }
    var layoutTraits: Set<LayoutTrait> { [.compactWidth] }
    func loadView() { log.add("tile-load#\(number)") }
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size {
        Size(width: containerSize.width / 4, height: 60)
    }
    func prepareViewForReuse() { log.add("tile-prepare#\(number)") }
    func configureView(with model: ComponentModel, containerSize: Size) {
        container = containerSize
        log.add("tile-configure#\(number):\(model.identifier)")
    }
    func drawView(into view: ViewBuilder, size: Size) {
        view.rect(Rect(x: 0, y: 0, width: size.width, height: size.height), RectStyle(fill: .black))
    }
    func destroy() { log.add("tile-destroy#\(number)") }
}

/// A factory from closures; names it does not know give nil (the registry falls back).
final class TestFactory: ComponentFactory {
    var makers: [String: () -> Component?]
    init(_ makers: [String: () -> Component?]) { self.makers = makers }
    func createComponent(forName name: String) -> Component? { makers[name]?() ?? nil }
    var componentNames: [String] { makers.keys.sorted() }
}

func model(
    _ id: String, _ component: String, index: Int = 0, indexPath: [Int]? = nil, title: String? = nil,
    children: [ComponentModel] = [], category: String = "row", type: ComponentType = .body
) -> ComponentModel {
    ComponentModel(
        identifier: id, type: type, index: index, indexPath: indexPath,
        componentIdentifier: ComponentIdentifier(lenient: component, defaultNamespace: "default"),
        componentCategory: category, title: title, children: children)
}

func view(_ body: [ComponentModel], header: ComponentModel? = nil, overlays: [ComponentModel] = []) -> ViewModel {
    ViewModel(header: header, body: body, overlays: overlays)
}
