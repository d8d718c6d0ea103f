import HubCore

/// Draws a render tree as a standalone SVG: the body at its frames (the whole content, unscrolled), the header
/// over it at the top, then the overlays centred in the viewport (dashed outline). Each component's display list
/// is drawn in its own coordinates; a `.child` item draws that child's display list in the slot. Text is wrapped
/// and cut with `TextMetrics`, the same measurement components size with, and stretched to its measured width so
/// every viewer shows it the same.
public struct SVGRenderer {
    public var images: ImageResolver
    /// Outlines every component's frame (thin grey), handy when display lists are empty.
    public var showFrames: Bool
    /// Prefixes the ids the drawing defines (clip paths), so that several drawings can share one document.
    public var idPrefix = ""

    public init(images: ImageResolver = ImageResolver(), showFrames: Bool = true) {
        self.images = images
        self.showFrames = showFrames
    }

    public func render(_ tree: RenderTree) -> String {
        var out = ""
        writeDocument(tree, to: &out)
        return out
    }

    func writeDocument(_ tree: RenderTree, to out: inout String) {
        let canvas = tree.canvasSize
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(canvas.width))\" height=\"\(n(canvas.height))\" "
        out +=
            "viewBox=\"0 0 \(n(canvas.width)) \(n(canvas.height))\" font-family=\"DejaVu Sans Mono, Menlo, monospace\">\n"
        if let title = tree.title ?? tree.viewID { out += "<title>\(escape(title))</title>\n" }
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        var clips = 0
        out += "<g class=\"body\">\n"
        for node in tree.body { draw(node, at: node.frame, depth: 1, clips: &clips, to: &out) }
        out += "</g>\n"
        if let header = tree.header {
            out += "<g class=\"header\">\n"
            draw(header, at: header.frame, depth: 1, clips: &clips, to: &out)
            out += "</g>\n"
        }
        if !tree.overlays.isEmpty {
            out += "<g class=\"overlays\">\n"
            out +=
                "<rect x=\"0\" y=\"0\" width=\"\(n(tree.viewport.width))\" height=\"\(n(tree.viewport.height))\" fill=\"none\" stroke=\"#999999\" stroke-dasharray=\"6 4\"/>\n"
            for node in tree.overlays { draw(node, at: node.frame, depth: 1, clips: &clips, to: &out) }
            out += "</g>\n"
        }
        out += "</svg>\n"
    }

    /// Children are clipped to their parent's bounds, as a parent view clips its subviews (a carousel's strip).
    private func draw(_ node: RenderNode, at frame: Rect, depth: Int, clips: inout Int, to out: inout String) {
        guard depth < 64 else { return }  // a child cycle cannot recurse forever
        out +=
            "<g transform=\"translate(\(n(frame.x)),\(n(frame.y)))\" data-id=\"\(escape(node.modelID))\" data-component=\"\(escape(node.componentIdentifier.description))\">\n"
        if showFrames {
            out +=
                "<rect width=\"\(n(frame.width))\" height=\"\(n(frame.height))\" fill=\"none\" stroke=\"#cccccc\" stroke-width=\"0.5\"/>\n"
        }
        var clipID: String?
        for item in node.displayList {
            switch item {
            case .rect(let r, let style): rect(r, style, to: &out)
            case .text(let r, let string, let style): text(r, string, style, to: &out)
            case .image(let r, let uri, let mode, let placeholder):
                image(r, uri: uri, mode: mode, placeholder: placeholder, to: &out)
            case .child(let r, let index):
                guard let child = node.child(at: index) else { break }
                if clipID == nil {
                    clips += 1
                    clipID = "\(idPrefix)clip\(clips)"
                    out +=
                        "<clipPath id=\"\(clipID!)\"><rect width=\"\(n(frame.width))\" height=\"\(n(frame.height))\"/></clipPath>\n"
                }
                out += "<g clip-path=\"url(#\(clipID!))\">\n"
                draw(child, at: r, depth: depth + 1, clips: &clips, to: &out)
                out += "</g>\n"
            }
        }
        out += "</g>\n"
    }

    private func paint(_ attribute: String, _ color: Color) -> String {
        guard color.isVisible else { return " \(attribute)=\"none\"" }
        var s = " \(attribute)=\"\(color.hexRGB)\""
        if color.opacity < 1 { s += " \(attribute)-opacity=\"\(n((color.opacity * 1000).rounded() / 1000))\"" }
        return s
    }

    private func rect(_ r: Rect, _ style: RectStyle, to out: inout String) {
        out += "<rect x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(max(0, r.width)))\" height=\"\(n(max(0, r.height)))\""
        if style.cornerRadius > 0 { out += " rx=\"\(n(style.cornerRadius))\"" }
        out += paint("fill", style.fill)
        if style.stroke.isVisible, style.strokeWidth > 0 {
            out += paint("stroke", style.stroke) + " stroke-width=\"\(n(style.strokeWidth))\""
        }
        out += "/>\n"
    }

    private func text(_ r: Rect, _ string: String, _ style: TextStyle, to out: inout String) {
        let lineHeight = TextMetrics.lineHeight(for: style)
        let advance = TextMetrics.advance(for: style)
        var lines = TextMetrics.lines(string, style: style, maxWidth: r.width)
        // Lines below the frame are not drawn (at least one is).
        let fitting = max(1, Int(saturating: (r.height / lineHeight).rounded(.down) + 0.001))
        if r.height > 0, lines.count > fitting { lines = Array(lines.prefix(fitting)) }
        let anchor: String
        let x: Double
        switch style.alignment {
        case .left:
            anchor = "start"
            x = r.x
        case .center:
            anchor = "middle"
            x = r.x + r.width / 2
        case .right:
            anchor = "end"
            x = r.maxX
        }
        for (i, line) in lines.enumerated() where !line.isEmpty {
            // Baseline: centred in the line box, about 0.8 em below the top of the glyphs.
            let baseline = r.y + Double(i) * lineHeight + (lineHeight - style.fontSize) / 2 + style.fontSize * 0.8
            let width = Double(line.count) * advance
            out += "<text x=\"\(n(x))\" y=\"\(n(baseline))\" font-size=\"\(n(style.fontSize))\""
            if style.weight != 400 { out += " font-weight=\"\(style.weight)\"" }
            if anchor != "start" { out += " text-anchor=\"\(anchor)\"" }
            out += paint("fill", style.color)
            out += " textLength=\"\(n(width))\" lengthAdjust=\"spacingAndGlyphs\">\(escape(line))</text>\n"
        }
    }

    private func image(_ r: Rect, uri: String?, mode: ContentMode, placeholder: Color, to out: inout String) {
        rect(r, RectStyle(fill: placeholder), to: &out)
        guard let uri, let href = images.resolve(uri) else { return }
        let aspect: String
        switch mode {
        case .scaleToFill: aspect = "none"
        case .aspectFit: aspect = "xMidYMid meet"
        case .aspectFill: aspect = "xMidYMid slice"
        }
        out +=
            "<image x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" preserveAspectRatio=\"\(aspect)\" href=\"\(escape(href))\"/>\n"
    }

    private func n(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return Writer.format(rounded == 0 ? 0 : rounded)
    }
}

/// XML/HTML text escaping (the renderers, the gallery, and the CLI's report and graph).
public func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for c in s.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default:
            if c.value < 0x20 && c != "\n" && c != "\t" { out += " " } else { out.unicodeScalars.append(c) }
        }
    }
    return out
}
