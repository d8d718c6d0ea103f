import Foundation
import HubCore
import Testing

@testable import HubRender

/// A component that draws a fixed display list (and optionally creates children), for renderer tests.
final class DrawingComponent: Component, ComponentWithChildren {
    weak var childDelegate: ChildDelegate?
    let traits: Set<LayoutTrait>
    let size: Size
    let items: [DrawItem]
    var childSizes: [Size] = []
    init(traits: Set<LayoutTrait>, size: Size, items: [DrawItem]) {
        self.traits = traits
        self.size = size
        self.items = items
    }
    var layoutTraits: Set<LayoutTrait> { traits }
    func loadView() {}
    func preferredViewSize(for model: ComponentModel, containerSize: Size) -> Size { size }
    func prepareViewForReuse() {}
    func configureView(with model: ComponentModel, containerSize: Size) {
        childSizes = model.children.indices.map { childDelegate?.createChild(at: $0) ?? .zero }
    }
    func drawView(into view: ViewBuilder, size: Size) {
        for item in items { append(item, view) }
        for (index, childSize) in childSizes.enumerated() {
            view.child(
                Rect(x: 5 + Double(index) * 50, y: 5, width: childSize.width, height: childSize.height), index: index)
        }
    }
    private func append(_ item: DrawItem, _ view: ViewBuilder) {
        switch item {
        case .rect(let r, let s): view.rect(r, s)
        case .text(let r, let t, let s): view.text(r, t, s)
        case .image(let r, let uri, let mode, let placeholder):
            view.image(r, uri: uri, mode: mode, placeholder: placeholder)
        case .child(let r, let i): view.child(r, index: i)
        }
    }
}

final class DrawingFactory: ComponentFactory {
    let makers: [String: () -> Component]
    init(_ makers: [String: () -> Component]) { self.makers = makers }
    func createComponent(forName name: String) -> Component? { makers[name]?() }
    var componentNames: [String] { makers.keys.sorted() }
}

@Suite struct RendererTests {
    let owner = Owner(id: "com.example.test@1.0#1")

    func tree(_ json: String) throws -> RenderTree {
        let viewModel = try ViewModelDecoder(file: "t.json").decode(json).viewModel
        return RenderPipeline(registry: try registry()).render(viewModel, viewport: Size(width: 300, height: 400))
    }

    func registry() throws -> ComponentRegistry {
        let registry = ComponentRegistry(fallbackHandler: DefaultFallbackHandler())
        try registry.register(
            DrawingFactory([
                "box": {
                    DrawingComponent(
                        traits: [.compactWidth], size: Size(width: 100, height: 40),
                        items: [
                            .rect(
                                Rect(x: 0, y: 0, width: 100, height: 40),
                                RectStyle(
                                    fill: Color(rgba: 0xFF00_0080), stroke: .black, strokeWidth: 1, cornerRadius: 6)),
                            .text(
                                Rect(x: 4, y: 4, width: 92, height: 40), "hello wide world",
                                TextStyle(fontSize: 10, weight: 700, alignment: .center)),
                        ])
                },
                "pic": {
                    DrawingComponent(
                        traits: [.compactWidth], size: Size(width: 40, height: 40),
                        items: [
                            .image(
                                Rect(x: 0, y: 0, width: 40, height: 40), uri: nil, mode: .aspectFit,
                                placeholder: Color(rgba: 0x00FF_00FF))
                        ])
                },
                "strip": { DrawingComponent(traits: [.fullWidth], size: Size(width: 300, height: 60), items: []) },
            ]), forNamespace: "t", owner: owner)
        return registry
    }

    /// A body of many megabytes is written while it renders, its output handed to a second thread a chunk at a
    /// time (issue 14): each format's bytes are those written from the whole tree.
    @Test func aLargeStreamedBodyIsTheOutputOfTheWholeTree() throws {
        let kinds = ["t:box", "t:pic", "t:strip", "x:y"]
        let entries = (0..<6000).map { #"{"id": "n\#($0)", "component": {"id": "\#(kinds[$0 % 4])"}}"# }
        let viewModel = try ViewModelDecoder().decode(#"{"body": [\#(entries.joined(separator: ","))]}"#).viewModel
        let registry = try registry()
        let viewport = Size(width: 300, height: 400)
        let whole = RenderPipeline(registry: registry).render(viewModel, viewport: viewport)
        func streamed(
            _ write: ((UnsafeRawBufferPointer) -> Void, (RenderPipeline.BodyStream) -> RenderTree) -> RenderTree
        )
            -> String
        {
            let pipeline = RenderPipeline(registry: registry)
            pipeline.options = RenderPipeline.Options(
                retainBodyInstances: false, keepDisplayLists: true, keepsStreamedBody: false)
            var bytes: [UInt8] = []
            // The stream stays with the pipeline: the writer must not keep the sink it was lent.
            func render(_ stream: RenderPipeline.BodyStream) -> RenderTree {
                pipeline.options.bodyStream = stream
                return pipeline.render(viewModel, viewport: viewport)
            }
            _ = write({ bytes.append(contentsOf: $0) }, render)
            return String(decoding: bytes, as: UTF8.self)
        }
        let json = JSONRenderer().render(whole)
        #expect(json.utf8.count > 1 << 20)
        #expect(streamed { JSONRenderer().renderStreaming(to: $0, $1) } == json)
        #expect(streamed { SVGRenderer().renderStreaming(to: $0, $1) } == SVGRenderer().render(whole))
        #expect(streamed { TextRenderer().renderStreaming(to: $0, $1) } == TextRenderer().render(whole))
    }

    @Test func jsonHasTheIssuesShapeWithSortedKeys() throws {
        let t = try tree(
            #"{"body": [{"id": "a", "component": {"id": "t:box"}}, {"id": "b", "component": {"id": "x:y"}}]}"#)
        let json = JSONRenderer(pretty: false).render(t)
        #expect(
            json == """
                {"body":[{"children":[],"componentIdentifier":"t:box","frame":{"height":40,"width":100,"x":15,"y":15},"id":"a","indexPath":[0],\
                "source":{"namespace":"t","plugin":"com.example.test"},"traits":["compactWidth"]},\
                {"children":[],"componentIdentifier":"x:y","frame":{"height":56,"width":300,"x":0,"y":70},"id":"b","indexPath":[1],\
                "source":"fallback","traits":["fullWidth","stackable"]}],"contentSize":{"height":126,"width":300},"header":null,\
                "overlays":[],"viewport":{"height":400,"width":300}}

                """)
        // Pretty output is the same JSON.
        let pretty = try JSONSerialization.jsonObject(with: Data(JSONRenderer().render(t).utf8))
        let compact = try JSONSerialization.jsonObject(with: Data(json.utf8))
        #expect(try #require(pretty as? NSDictionary) == (try #require(compact as? NSDictionary)))
    }

    /// A node's identifier, source and traits are written once per kind and depth and copied after (issue 14):
    /// nodes that share an identifier but not the source or the traits each keep their own, children included.
    @Test func nodesOfOneIdentifierWithOtherSourcesOrTraitsKeepTheirOwn() throws {
        let view = #"{"body": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}]}"#
        let models = try ViewModelDecoder().decode(bytes: Array(view.utf8)).viewModel.body
        let identifier = ComponentIdentifier(namespace: "ns", name: "row")
        let other = Owner(id: "com.example.other@2.0#2")
        let kinds: [(source: ComponentSource, traits: Set<LayoutTrait>)] = [
            (.factory(namespace: "ns", owner: owner), [.fullWidth]),
            (.factory(namespace: "ns", owner: owner), [.compactWidth, .stackable]),
            (.factory(namespace: "ns", owner: other), [.fullWidth]),
            (.fallback(category: "row"), [.fullWidth]),
        ]
        func node(_ k: Int, children: [RenderNode] = []) -> RenderNode {
            // A kind object per node: nodes of equal kinds are told apart by value, not by identity.
            RenderNode(
                model: models[k],
                kind: ComponentKind(componentIdentifier: identifier, source: kinds[k].source, traits: kinds[k].traits),
                frame: Rect(x: 0, y: Double(k) * 10, width: 10, height: 10), children: children)
        }
        let leaves = (0..<4).map { node($0) }
        // Each kind twice at the top (the second time from what the first wrote), and once more as a child.
        let body = leaves + leaves + [node(0, children: leaves.reversed())]
        let tree = RenderTree(viewport: Size(width: 300, height: 400), contentSize: .zero, body: body)
        let sources: [Any] = [
            ["namespace": "ns", "plugin": "com.example.test"], ["namespace": "ns", "plugin": "com.example.test"],
            ["namespace": "ns", "plugin": "com.example.other"], "fallback",
        ]
        let traits = [["fullWidth"], ["compactWidth", "stackable"], ["fullWidth"], ["fullWidth"]]
        for pretty in [true, false] {
            let json = JSONRenderer(pretty: pretty).render(tree)
            let root = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let nodes = try #require(root["body"] as? [[String: Any]])
            let children = try #require(nodes.last?["children"] as? [[String: Any]])
            let written = Array(nodes.dropLast()) + children.reversed()
            #expect(written.count == 12)
            for (index, node) in written.enumerated() {
                #expect(node["componentIdentifier"] as? String == "ns:row")
                #expect(NSArray(object: node["source"]!) == NSArray(object: sources[index % 4]), "node \(index)")
                #expect(node["traits"] as? [String] == traits[index % 4], "node \(index)")
            }
        }
    }

    @Test func childrenAppearInJSONAndAreDrawnInsideTheirParent() throws {
        let t = try tree(
            #"[{"id": "s", "component": {"id": "t:strip"}, "children": [{"id": "c0", "component": {"id": "t:pic"}}, {"id": "c1", "component": {"id": "t:box"}}]}]"#
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONRenderer().render(t).utf8)) as? [String: Any])
        let strip = try #require((object["body"] as? [[String: Any]])?.first)
        let children = try #require(strip["children"] as? [[String: Any]])
        try #require(children.count == 2)
        #expect(children.map { $0["id"] as? String } == ["c0", "c1"])
        #expect(children.map { $0["indexPath"] as? [Int] } == [[0, 0], [0, 1]])
        #expect(children[1]["frame"] as? [String: Double] == ["x": 55, "y": 5, "width": 100, "height": 40])
        let svg = SVGRenderer().render(t)
        // The strip's group contains the child's group, translated to the slot.
        let stripStart = try #require(svg.range(of: "data-id=\"s\""))
        let childStart = try #require(svg.range(of: "<g transform=\"translate(55,5)\" data-id=\"c1\""))
        #expect(stripStart.lowerBound < childStart.lowerBound)
    }

    @Test func svgDrawsRectsTextAndImages() throws {
        let t = try tree(#"[{"id": "a", "component": {"id": "t:box"}}, {"id": "p", "component": {"id": "t:pic"}}]"#)
        let svg = SVGRenderer(showFrames: false).render(t)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"400\""))
        #expect(
            svg.contains(
                ##"<rect x="0" y="0" width="100" height="40" rx="6" fill="#ff0000" fill-opacity="0.5" stroke="#000000" stroke-width="1"/>"##
            ))
        // 92 points at 6 points per bold character: 15 characters a line → "hello wide" / "world", centred.
        #expect(
            svg.contains(
                ##"<text x="50" y="13.25" font-size="10" font-weight="700" text-anchor="middle" fill="#000000" textLength="60" lengthAdjust="spacingAndGlyphs">hello wide</text>"##
            ))
        #expect(svg.contains(#">world</text>"#))
        // No URI: only the placeholder.
        #expect(svg.contains(##"<rect x="0" y="0" width="40" height="40" fill="#00ff00"/>"##))
        #expect(!svg.contains("<image"))
    }

    @Test func imagesResolveDataURIsAndFilesButNotRemoteURIs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubrender-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: folder.appendingPathComponent("a.png"))
        let resolver = ImageResolver(access: ImageAccess(viewFile: folder.appendingPathComponent("view.json")))
        #expect(resolver.resolve("data:image/png;base64,iVBORw==") == "data:image/png;base64,iVBORw==")
        // Only image bytes, typed by their signature: no other bytes reach an output.
        #expect(resolver.resolve("data:image/png;base64,AAAA") == nil)
        #expect(resolver.resolve("data:text/html;base64,iVBORw==") == "data:image/png;base64,iVBORw==")
        #expect(resolver.resolve("a.png") == "data:image/png;base64,iVBORw==")
        #expect(resolver.resolve("file:a.png") == "data:image/png;base64,iVBORw==")
        #expect(
            resolver.resolve(folder.appendingPathComponent("a.png").absoluteString) == "data:image/png;base64,iVBORw==")
        #expect(resolver.resolve("https://example.com/a.png") == nil)
        #expect(resolver.resolve("missing.png") == nil)
    }

    @Test func textOutlineIsIndentedWithSources() throws {
        let t = try tree(
            #"{"id": "v", "title": "V", "header": {"component": {"id": "t:strip"}}, "body": [{"id": "s", "component": {"id": "t:strip"}, "children": [{"id": "c0", "component": {"id": "t:pic"}}]}, {"id": "f", "text": {"title": "Fallback"}}]}"#
        )
        let text = TextRenderer().render(t)
        #expect(
            text == """
                view v "V"  viewport 300×400  content 300×206
                header
                  [0] header  t:strip  (0, 0, 300, 60)  fullWidth  ← com.example.test
                body (2)
                  [0] s  t:strip  (0, 75, 300, 60)  fullWidth  ← com.example.test
                    [0,0] c0  t:pic  (5, 5, 40, 40)  compactWidth  ← com.example.test
                  [1] f  default:row  (0, 150, 300, 56)  fullWidth,stackable  ← fallback(row)  "Fallback"
                overlays (0)

                """)
    }

    @Test func htmlIsAStandalonePageWithTheDrawingAndATable() throws {
        let t = try tree(#"[{"id": "a<b", "component": {"id": "t:box"}}]"#)
        let html = HTMLRenderer().render(t, diagnostics: ["t.json: $[1]: oops"])
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg xmlns="))
        #expect(html.contains("<td>a&lt;b</td>"))
        #expect(html.contains("t.json: $[1]: oops"))
        #expect(html.hasSuffix("</html>\n"))
        // A large view's table stops at its limit and counts the rest (a browser took 48 s and 7.9 GB to lay out
        // the table of 100k components).
        let many = (0..<(HTMLRenderer.tableLimit + 300)).map { #"{"id": "m\#($0)", "component": {"id": "t:box"}}"# }
        let large = HTMLRenderer().render(try tree("[" + many.joined(separator: ",") + "]"))
        #expect(large.components(separatedBy: "<tr><td>body</td>").count - 1 == HTMLRenderer.tableLimit)
        #expect(large.contains("… and 300 more components"))
    }
}
