import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

@testable import HubRender

/// Renders every view in examples/ with the shipped demo plugins (built next to the test binary) and checks the
/// JSON output's structure: every model present once, in order, with its index path, component identifier and
/// source, frames inside the content, children under their parent; plus frames computed by hand where the
/// components' sizes are the host's own (fallback) components.
@Suite(.serialized, .pluginCode) struct ExampleRenderTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let examples = packageRoot.appendingPathComponent("examples")
    static let binDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent()
    static let viewport = Size(width: 375, height: 667)

    /// One host for the suite: the Swift plugin image stays mapped once loaded.
    nonisolated(unsafe) static let host: PluginHost = {
        let host = PluginHost(
            cacheDirectory: ProcessScratch.folder("hubrender-tests"))
        for name in ["libHubDemoSwift.so", "libHubDemoC.so"] {
            _ = host.load(file: binDirectory.appendingPathComponent(name))
        }
        return host
    }()

    struct Rendered {
        var viewModel: ViewModel
        var issues: [DecodeIssue]
        var json: [String: Any]
    }

    func render(_ name: String) throws -> Rendered {
        // One host shared by the suite's tests (serialized): each test drives it from its own thread.
        Self.host.adoptCurrentThread()
        let loaded = Self.host.plugins.filter(\.isLoaded).compactMap(\.id)
        try #require(
            loaded.count == 2,
            "demo plugins not loaded from \(Self.binDirectory.path): \(Self.host.plugins.map { $0.reason ?? "" })")
        let decoded = try ViewModelDecoder().decode(contentsOf: Self.examples.appendingPathComponent(name))
        let pipeline = RenderPipeline(registry: Self.host.registry)
        let tree = pipeline.render(decoded.viewModel, viewport: Self.viewport)
        let text = JSONRenderer(
            naming: SourceNaming { owner in
                Self.host.plugins.first { $0.owner == owner }?.id ?? "?"
            }
        ).render(tree)
        pipeline.tearDown()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        return Rendered(viewModel: decoded.viewModel, issues: decoded.issues, json: json)
    }

    static func frame(_ node: [String: Any]) throws -> Rect {
        let f = try #require(node["frame"] as? [String: Double])
        return Rect(
            x: try #require(f["x"]), y: try #require(f["y"]),
            width: try #require(f["width"]), height: try #require(f["height"]))
    }

    /// Checks one node against its model, recursively; returns how many nodes it checked.
    @discardableResult
    func check(_ node: [String: Any], against model: ComponentModel, within container: Size?) throws -> Int {
        #expect(node["id"] as? String == model.identifier)
        #expect(node["indexPath"] as? [Int] == model.indexPath)
        #expect(node["componentIdentifier"] as? String == model.componentIdentifier.description)
        let namespace = model.componentIdentifier.namespace
        let names = [
            "demo": ["row", "header", "card", "image", "carousel"], "cdemo": ["banner", "badge", "tile", "divider"],
        ]
        if let known = names[namespace], known.contains(model.componentIdentifier.name) {
            let source = node["source"] as? [String: String]
            #expect(source?["namespace"] == namespace, "\(model.identifier)")
            #expect(source?["plugin"] == (namespace == "demo" ? "com.hubhost.demo" : "com.hubhost.cdemo"))
        } else {
            #expect(node["source"] as? String == "fallback", "\(model.identifier) should fall back")
        }
        let frame = try Self.frame(node)
        #expect(frame.width >= 0 && frame.height >= 0)
        if let container {
            #expect(
                frame.x >= 0 && frame.maxX <= container.width + 1e-9,
                "\(model.identifier) \(frame) outside \(container)")
        }
        var count = 1
        let children = try #require(node["children"] as? [[String: Any]])
        for child in children {
            let index = try #require((child["indexPath"] as? [Int])?.last)
            try #require(model.children.indices.contains(index), "\(model.identifier): no child \(index)")
            count += try check(child, against: model.children[index], within: nil)
        }
        return count
    }

    /// Every example: every model is a node, in order.
    @Test(arguments: [
        "home.json", "traits.json", "fallback.json", "carousel.json", "images.json", "custom-data.json",
        "problems.json", "large.json",
    ])
    func everyComponentIsPresent(_ name: String) throws {
        let r = try render(name)
        let body = try #require(r.json["body"] as? [[String: Any]])
        #expect(body.count == r.viewModel.body.count)
        var previousY = -Double.infinity
        for (node, model) in zip(body, r.viewModel.body) {
            try check(node, against: model, within: Self.viewport)
            // Rows go down the page.
            let y = try Self.frame(node).y
            #expect(y >= previousY - 1e-9)
            previousY = max(previousY, y)
        }
        let overlays = try #require(r.json["overlays"] as? [[String: Any]])
        #expect(overlays.count == r.viewModel.overlays.count)
        for (node, model) in zip(overlays, r.viewModel.overlays) {
            try check(node, against: model, within: Self.viewport)
        }
        if let header = r.viewModel.header {
            let node = try #require(r.json["header"] as? [String: Any])
            try check(node, against: header, within: nil)
            #expect(try Self.frame(node).origin == .zero)
        } else {
            #expect(r.json["header"] is NSNull)
        }
        let content = try #require(r.json["contentSize"] as? [String: Double])
        #expect(content["width"] == 375)
        let lowest = try body.map { try Self.frame($0).maxY }.max() ?? 0
        #expect(try #require(content["height"]) >= lowest)
        // Only problems.json has problems.
        #expect(r.issues.isEmpty == (name != "problems.json"))
    }

    /// The fallback example is laid out with the host's fallback components, whose sizes are known:
    /// rows 375×72 with a subtitle (56 without), fullWidth + stackable; cards 120×150, compactWidth.
    @Test func fallbackFramesComputedByHand() throws {
        let r = try render("fallback.json")
        let body = try #require(r.json["body"] as? [[String: Any]])
        let frames = try body.map(Self.frame)
        try #require(frames.count == 7)
        #expect(
            Array(frames.prefix(6)) == [
                Rect(x: 0, y: 0, width: 375, height: 72),  // stackable: no top margin
                Rect(x: 15, y: 87, width: 120, height: 150),  // card below a row: 72 + 15
                Rect(x: 0, y: 252, width: 375, height: 72),  // 237 + 15
                Rect(x: 15, y: 339, width: 120, height: 150),  // 324 + 15
                Rect(x: 0, y: 504, width: 375, height: 72),  // 489 + 15
                Rect(x: 0, y: 576, width: 375, height: 56),  // two stackables: no margin
            ])
        // The demo row below a stackable fallback row: 632 + 15, full width.
        #expect(frames[6].origin == Point(x: 0, y: 647) && frames[6].width == 375)
        #expect(try #require(r.json["contentSize"] as? [String: Double])["height"] == frames[6].maxY + 15)
        #expect(
            body.map { $0["componentIdentifier"] as? String } == [
                "nowhere:row", "nowhere:card", "demo:nope", "cdemo:nope", "default:row", "default:row", "demo:row",
            ])
    }

    /// traits.json ends banner, divider (fullWidth + alwaysStackUpwards), row: no margin above the divider
    /// although the banner is not stackable, the usual 15 below it.
    @Test func alwaysStackUpwardsHugsTheComponentAbove() throws {
        let r = try render("traits.json")
        let body = try #require(r.json["body"] as? [[String: Any]])
        let ids = body.map { $0["id"] as? String }
        let banner = try Self.frame(body[try #require(ids.firstIndex(of: "full-2"))])
        let divider = try Self.frame(body[try #require(ids.firstIndex(of: "upwards-1"))])
        let row = try Self.frame(body[try #require(ids.firstIndex(of: "full-3"))])
        #expect(divider == Rect(x: 0, y: banner.maxY, width: 375, height: 9))
        #expect(row.y == divider.maxY + 15)
        #expect(
            body[try #require(ids.firstIndex(of: "upwards-1"))]["traits"] as? [String] == [
                "alwaysStackUpwards", "fullWidth",
            ])
    }

    @Test func carouselChildrenAreNodesInsideTheirParent() throws {
        let r = try render("carousel.json")
        let bodyNodes = try #require(r.json["body"] as? [[String: Any]])
        try #require(bodyNodes.count > 1)
        let albums = bodyNodes[1]
        let children = try #require(albums["children"] as? [[String: Any]])
        try #require(children.count == 4)
        #expect(children.map { $0["id"] as? String } == ["album-1", "album-2", "album-3", "album-4"])
        #expect(children.map { $0["indexPath"] as? [Int] } == [[1, 0], [1, 1], [1, 2], [1, 3]])
        #expect((children[2]["source"] as? [String: String])?["namespace"] == "cdemo")
        #expect(children[3]["source"] as? String == "fallback")
        // Each child's size is its preferred size for the parent's frame as container: the C tile is
        // min(120, (375 − 45) / 2) square.
        #expect(try Self.frame(children[2]).size == Size(width: 120, height: 120))
    }

    @Test func headerAndOverlayPlacement() throws {
        let r = try render("home.json")
        let header = try #require(r.json["header"] as? [String: Any])
        let headerFrame = try Self.frame(header)
        #expect(headerFrame.origin == .zero && headerFrame.width == 375)
        // The first body row starts below the header plus the default margin (the demo header is fullWidth,
        // the banner fullWidth: 15).
        let first = try Self.frame(try #require((r.json["body"] as? [[String: Any]])?.first))
        #expect(first.y == headerFrame.height + 15)
        // The overlay is centred in the viewport.
        let overlay = try Self.frame(try #require((r.json["overlays"] as? [[String: Any]])?.first))
        #expect(overlay.x + overlay.width / 2 == 375.0 / 2)
        #expect(abs(overlay.y + overlay.height / 2 - 667.0 / 2) < 1e-9)
    }

    /// `render --format svg` streams the body out of the pipeline (issue 14, goal 4): the document is the one
    /// drawn from the whole tree, and the tree it returns keeps no display list.
    @Test(arguments: ["home.json", "carousel.json", "traits.json", "images.json"])
    func aStreamedSVGIsTheSVGOfTheWholeTree(_ name: String) throws {
        let (expected, streamed, tree, bodyCount) = try Self.wholeAndStreamed(
            name, whole: { SVGRenderer().render($0) },
            streaming: { sink, render in SVGRenderer().renderStreaming(to: sink, render) })
        #expect(streamed == expected)
        let nodes = tree.body.flatMap { $0.allNodes }
        #expect(nodes.allSatisfy { $0.displayList.isEmpty })
        #expect(tree.body.count == bodyCount)
    }

    /// `render --format json` and `--format text` stream too, keeping no body node: the output is the one
    /// written from the whole tree.
    @Test(arguments: ["home.json", "carousel.json", "traits.json", "images.json", "problems.json"])
    func streamedJSONAndTextAreThoseOfTheWholeTree(_ name: String) throws {
        for pretty in [true, false] {
            let json = try Self.wholeAndStreamed(
                name, whole: { JSONRenderer(pretty: pretty).render($0) },
                streaming: { sink, render in JSONRenderer(pretty: pretty).renderStreaming(to: sink, render) },
                keepsStreamedBody: false)
            #expect(json.streamed == json.whole, "pretty: \(pretty)")
            #expect(json.tree.body.isEmpty)
        }
        let text = try Self.wholeAndStreamed(
            name, whole: { TextRenderer().render($0) },
            streaming: { sink, render in TextRenderer().renderStreaming(to: sink, render) }, keepsStreamedBody: false)
        #expect(text.streamed == text.whole)
        #expect(text.tree.body.isEmpty)
        // And the HTML page (it kept every display list and node: 605 MB for 300k components, against 124 for SVG).
        let html = try Self.wholeAndStreamed(
            name, whole: { HTMLRenderer().render($0, diagnostics: ["a problem"]) },
            streaming: { sink, render in HTMLRenderer().renderStreaming(to: sink, diagnostics: ["a problem"], render) },
            keepsStreamedBody: false)
        #expect(html.streamed == html.whole)
        #expect(html.tree.body.isEmpty)
    }

    /// The example `name` rendered whole then written by `whole`, and rendered by a one-shot pipeline whose body
    /// `streaming` writes as it is drawn; with the streaming pipeline's tree and the view's body count.
    static func wholeAndStreamed(
        _ name: String, whole: (RenderTree) -> String,
        streaming: (
            _ sink: (UnsafeRawBufferPointer) -> Void, _ render: (RenderPipeline.BodyStream) -> RenderTree
        ) -> RenderTree,
        keepsStreamedBody: Bool = true
    ) throws -> (whole: String, streamed: String, tree: RenderTree, bodyCount: Int) {
        host.adoptCurrentThread()
        let decoded = try ViewModelDecoder().decode(contentsOf: examples.appendingPathComponent(name))
        let wholePipeline = RenderPipeline(registry: host.registry)
        let expected = whole(wholePipeline.render(decoded.viewModel, viewport: viewport))
        wholePipeline.tearDown()

        let pipeline = RenderPipeline(registry: host.registry)
        pipeline.options = RenderPipeline.Options(
            retainBodyInstances: false, keepDisplayLists: true, keepsStreamedBody: keepsStreamedBody)
        var bytes: [UInt8] = []
        func render(_ stream: RenderPipeline.BodyStream) -> RenderTree {
            pipeline.options.bodyStream = stream
            defer { pipeline.options.bodyStream = nil }
            return pipeline.render(decoded.viewModel, viewport: viewport)
        }
        let tree = streaming({ bytes.append(contentsOf: $0) }, render)
        pipeline.tearDown()
        return (expected, String(decoding: bytes, as: UTF8.self), tree, decoded.viewModel.body.count)
    }
}
