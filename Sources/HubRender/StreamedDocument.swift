import HubCore

/// A document written while the pipeline renders (`RenderPipeline.Options.bodyStream`): the opening when the
/// pipeline begins the body, each body node as soon as it is drawn, the closing from the tree `render` returns.
/// `State` (the writer and what it carries from node to node) lives in a box meanwhile, since the stream's
/// closures outlive any `inout` access; a pipeline that keeps the stream and renders again later writes nothing.
enum StreamedDocument {
    static func write<State>(
        _ state: inout State,
        opening: @escaping (inout State, _ tree: RenderTree, _ bodyCount: Int) -> Void,
        node: @escaping (inout State, RenderNode) -> Void,
        closing: (inout State, RenderTree) -> Void,
        _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) -> RenderTree {
        let box = Box(state)
        let stream = RenderPipeline.BodyStream(
            begin: { tree, count in
                if box.state != nil { opening(&box.state!, tree, count) }
            },
            node: { drawn in
                if box.state != nil { node(&box.state!, drawn) }
            })
        let tree = render(stream)
        closing(&box.state!, tree)
        state = box.state!
        // The stream may outlive this call (a pipeline that keeps it): it writes nothing more, and keeps nothing
        // of the output (whose sink must not outlive the writer that `ByteWriter.stream` lends).
        box.state = nil
        return tree
    }

    private final class Box<State> {
        var state: State?
        init(_ state: State) { self.state = state }
    }
}
