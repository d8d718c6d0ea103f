import FoundationEssentials

/// What an event is aimed at: index paths and points resolved to components (hit testing).
extension EventEngine {
    // MARK: Targets and hit testing

    enum Resolved {
        case wrapper(ComponentWrapper)
        case drawnChild(ComponentWrapper, Int)
        case none
    }

    /// The live component at `path` of `section` ([] is the header itself), or nil; reports nothing (for
    /// inspectors).
    public func wrapper(at path: [Int], section: ComponentType) -> ComponentWrapper? {
        var rest = path[...]
        var wrapper: ComponentWrapper?
        switch section {
        case .header: wrapper = pipeline.headerWrapper
        case .overlay:
            guard let first = rest.popFirst(), pipeline.overlayWrappers.indices.contains(first) else { return nil }
            wrapper = pipeline.overlayWrappers[first]
        case .body:
            guard let first = rest.popFirst() else { return nil }
            wrapper = displayedBody[first]
        }
        for index in rest { wrapper = wrapper?.children[index] }
        return wrapper
    }

    func resolve(_ target: EventTarget, for event: String) -> Resolved {
        switch target {
        case .point(let point):
            // Points are in screen coordinates: one off the screen touches nothing (it hit the components laid out
            // below the screen's edge).
            guard point.x >= 0, point.y >= 0, point.x < viewport.width, point.y < viewport.height else {
                problem(
                    "\(event) at \(point): outside the \(viewport.width.compact)×\(viewport.height.compact) screen")
                return .none
            }
            guard let hit = hitTest(point) else {
                problem("\(event) at \(point): no component there")
                return .none
            }
            return .wrapper(hit)
        case .indexPath(let path, let section):
            var wrapper: ComponentWrapper
            var rest = path[...]
            switch section {
            case .header:
                guard let header = pipeline.headerWrapper else {
                    problem("\(event): the view has no header")
                    return .none
                }
                wrapper = header
            case .overlay:
                guard let first = rest.popFirst(), first >= 0, first < pipeline.overlayWrappers.count else {
                    problem("\(event) at overlay \(path): the view has \(pipeline.overlayWrappers.count) overlay(s)")
                    return .none
                }
                wrapper = pipeline.overlayWrappers[first]
            case .body:
                guard let first = rest.popFirst() else {
                    problem("\(event): an empty index path names no body component")
                    return .none
                }
                guard first >= 0, first < viewModel.body.count else {
                    problem("\(event) at \(target): the body has \(viewModel.body.count) component(s)")
                    return .none
                }
                guard let live = displayedBody[first] else {
                    let y = pipeline.layout?.frames[first].minY ?? 0
                    problem(
                        "\(event) at \(target): [\(viewModel.body[first].identifier)] is not on screen (its frame starts at y \(y.compact); scroll first)"
                    )
                    return .none
                }
                wrapper = live
            }
            for index in rest {
                guard let model = wrapper.model, index >= 0, index < model.children.count else {
                    problem("\(event) at \(target): [\(wrapper.model?.identifier ?? "?")] has no child \(index)")
                    return .none
                }
                guard let child = wrapper.children[index] else {
                    if index == path.last { return .drawnChild(wrapper, index) }
                    problem(
                        "\(event) at \(target): child \(index) of [\(model.identifier)] is drawn by its parent, not a component"
                    )
                    return .none
                }
                // A parent that says which children it shows (will-display) decides which can be touched: one it
                // scrolled out of its strip is not on screen. (A parent that never says is taken at its word.)
                if registered[child.id] == nil, wrapper.children.values.contains(where: { registered[$0.id] != nil }) {
                    problem(
                        "\(event) at \(target): child \(index) of [\(model.identifier)] is not displayed by its parent "
                            + "(scroll it into view first)")
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
    func descend(_ wrapper: ComponentWrapper, point: Point) -> ComponentWrapper {
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
}
