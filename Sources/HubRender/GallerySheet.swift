import HubCore

/// The drawings of a gallery: every story of every component at every width, grouped by plugin and namespace, as
/// one HTML page (Storybook's canvas, without the page's script) or one SVG sheet (rasterised for
/// `--format png`).
public struct GallerySheet {
    public struct Item {
        public var plugin: String
        public var namespace: String
        /// "namespace:name".
        public var component: String
        public var story: String
        /// "plugin" or "host" (the host's sample models, for components that declare no stories).
        public var source: String
        public var width: Double
        public var tree: RenderTree

        public init(
            plugin: String, namespace: String, component: String, story: String, source: String, width: Double,
            tree: RenderTree
        ) {
            self.plugin = plugin
            self.namespace = namespace
            self.component = component
            self.story = story
            self.source = source
            self.width = width
            self.tree = tree
        }

        /// "demo:row — long title @ 320".
        public var caption: String {
            "\(component) — \(story)\(source == "host" ? " (host sample)" : "") @ \(Int(width))"
        }
    }

    public var items: [Item]
    public var images: ImageResolver

    public init(items: [Item], images: ImageResolver = ImageResolver()) {
        self.items = items
        self.images = images
    }

    private func drawing(_ item: Item, index: Int) -> String {
        var svg = SVGRenderer(images: images, showFrames: false)
        svg.idPrefix = "s\(index)-"
        return svg.render(item.tree)
    }

    /// A standalone page: one section per plugin and namespace, one row per component, its stories side by side.
    /// `notes`: what the sheet leaves out and why (a plugin that did not load, a story that could not be drawn), shown
    /// above the drawings, so a missing section is not taken for a plugin with nothing to show.
    public func html(title: String = "hubhost gallery", notes: [String] = []) -> String {
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
              body { margin: 0; padding: 16px; font: 13px/1.4 system-ui, sans-serif; background: #f2f2f2; color: #222; }
              h2 { margin: 24px 0 4px; } h3 { margin: 12px 0 4px; font-family: ui-monospace, monospace; }
              .stories { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
              figure { margin: 0; background: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
              figcaption { padding: 4px 8px; font-size: 12px; color: #555; }
              .host { color: #a05a00; }
              .notes { background: #fff4e5; border-left: 4px solid #e08a00; padding: 6px 12px; }
              .notes li { font-family: ui-monospace, monospace; font-size: 12px; }
            </style></head><body>
            <h1>\(escape(title))</h1>

            """
        if !notes.isEmpty {
            out += "<section class=\"notes\"><strong>Not in this gallery</strong><ul>\n"
            for note in notes { out += "<li>\(escape(note))</li>\n" }
            out += "</ul></section>\n"
        }
        var plugin: String?
        var component: String?
        for (index, item) in items.enumerated() {
            if item.plugin != plugin {
                if component != nil { out += "</div>\n" }
                out += "<h2>\(escape(item.plugin))</h2>\n"
                plugin = item.plugin
                component = nil
            }
            if item.component != component {
                if component != nil { out += "</div>\n" }
                out += "<h3 id=\"\(escape(item.component))\">\(escape(item.component))</h3>\n<div class=\"stories\">\n"
                component = item.component
            }
            let source = item.source == "host" ? " <span class=\"host\">(host sample)</span>" : ""
            out += "<figure data-component=\"\(escape(item.component))\" data-story=\"\(escape(item.story))\" "
            out += "data-width=\"\(Int(item.width))\">\n\(drawing(item, index: index))"
            out += "<figcaption>\(escape(item.story))\(source) · \(Int(item.width))</figcaption></figure>\n"
        }
        if component != nil { out += "</div>\n" }
        out += "</body></html>\n"
        return out
    }

    /// All drawings on one SVG sheet, one component per row (its stories left to right), with captions.
    public func svg() -> (svg: String, size: Size) {
        let sheet = placedSVG()
        return (sheet.svg, sheet.size)
    }

    /// `svg()`, with where each item's drawing is on the sheet (in the order of `items`), so a page can tell which
    /// story a click is on.
    public func placedSVG() -> (svg: String, size: Size, places: [Rect]) {
        let gap = 16.0
        let caption = 18.0
        var rows: [[(Int, Item)]] = []
        for (index, item) in items.enumerated() {
            if let last = rows.last?.last?.1, last.component == item.component {
                rows[rows.count - 1].append((index, item))
            } else {
                rows.append([(index, item)])
            }
        }
        var body = ""
        var places = [Rect](repeating: .zero, count: items.count)
        var y = gap
        var width = 0.0
        for row in rows {
            var x = gap
            var rowHeight = 0.0
            for (index, item) in row {
                let canvas = item.tree.canvasSize
                body += "<text x=\"\(n(x))\" y=\"\(n(y + 12))\" font-size=\"11\" fill=\"#555555\">"
                body += "\(escape(Self.fitted(item.caption, width: max(canvas.width, 120))))</text>\n"
                let drawing = drawing(item, index: index)
                body += drawing.replacingFirst("<svg ", with: "<svg x=\"\(n(x))\" y=\"\(n(y + caption))\" ")
                places[index] = Rect(x: x, y: y + caption, width: canvas.width, height: canvas.height)
                x += max(canvas.width, 120) + gap
                rowHeight = max(rowHeight, canvas.height + caption)
            }
            width = max(width, x)
            y += rowHeight + gap
        }
        let size = Size(width: max(width, 1), height: max(y, 1))
        let svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(size.width))\" height=\"\(n(size.height))\" "
            + "viewBox=\"0 0 \(n(size.width)) \(n(size.height))\" font-family=\"DejaVu Sans Mono, Menlo, monospace\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"#f2f2f2\"/>\n" + body + "</svg>\n"
        return (svg, size, places)
    }

    private func n(_ value: Double) -> String { value.compact }

    /// `caption` cut to what fits `width` points at the sheet's 11-point monospace (about 6.6 points a character),
    /// with "…", so a long story name does not run over the next drawing's caption.
    static func fitted(_ caption: String, width: Double) -> String {
        let fits = max(4, Int(width / 6.7))
        return caption.count <= fits ? caption : String(caption.prefix(fits - 1)) + "…"
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
