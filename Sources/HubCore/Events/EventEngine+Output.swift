import FoundationEssentials

/// The engine's state as a render tree, and how events and problems are described in the trace.
extension EventEngine {
    // MARK: Output

    /// The view as it is now, for the renderers: live components drawn, the others with their frames; with
    /// `bodyWithin`, only the body components whose frames reach into that range of content y (the preview of a
    /// large view draws the part near where its page is scrolled).
    public func renderTree(bodyWithin range: ClosedRange<Double>? = nil) -> RenderTree {
        func node(_ wrapper: ComponentWrapper) -> RenderNode? {
            guard let model = wrapper.model else { return nil }
            return pipeline.node(for: wrapper, model: model, frame: wrapper.frame)
        }
        let frames = pipeline.layout?.frames ?? []
        var body: [RenderNode] = []
        body.reserveCapacity(viewModel.body.count)
        for (index, model) in viewModel.body.enumerated() {
            if let range, index < frames.count,
                frames[index].maxY < range.lowerBound || frames[index].minY > range.upperBound
            {
                continue
            }
            if let wrapper = pipeline.bodyWrappers[index], let n = node(wrapper) {
                body.append(n)
                continue
            }
            body.append(
                RenderNode(
                    model: model, kind: pipeline.sizing.entry(for: model).kind,
                    frame: index < frames.count ? frames[index] : .zero))
        }
        return RenderTree(
            viewID: viewModel.identifier, title: viewModel.title, viewport: viewport,
            contentSize: pipeline.layout?.contentSize ?? .zero, header: pipeline.headerWrapper.flatMap(node),
            body: body, overlays: pipeline.overlayWrappers.compactMap(node))
    }

    /// The screen as it is now, what a snapshot of a scripted step shows: the viewport at the content offset. The
    /// body components it shows are moved up by the offset, the header stays pinned over them at the top (Hub's
    /// header is not in the scrolling content), the overlays are where they are, and the drawing is exactly the
    /// viewport's size however long the view or tall its header (the whole content of a long view, most of it
    /// without live instances, drew blank: a 100k view was too tall to draw at all).
    public func screenTree() -> RenderTree {
        let shown = visibleRect
        var tree = renderTree(bodyWithin: shown.minY...shown.maxY)
        tree.body = tree.body.compactMap { node in
            guard node.frame.intersects(shown) else { return nil }
            var moved = node
            moved.frame = node.frame.offsetBy(dx: 0, dy: -shown.minY)
            return moved
        }
        tree.contentSize = viewport
        tree.screen = viewport  // a header taller than the screen is cut by it, as on a device
        return tree
    }

    // MARK: Trace helpers

    /// Something worth saying that is not a problem.
    func note(_ message: String) { trace?.add(.note, message) }

    /// An event that could not apply as asked.
    func problem(_ message: String) {
        problems.append((trace?.step ?? 0, message))
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
        case .snapshot: return "snapshot"
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
        case .snapshot(let name): return "snapshot \(TerminalText.quoted(name))"
        }
    }
}
