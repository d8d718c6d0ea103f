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
        ByteWriter.string { writeDocument(tree, to: &$0) }
    }

    /// Streams the SVG to `sink` in chunks of about 64 KiB.
    public func render(_ tree: RenderTree, to sink: (UnsafeRawBufferPointer) -> Void) {
        ByteWriter.stream(to: sink) { writeDocument(tree, to: &$0) }
    }

    /// Streams the SVG to `sink` while `render` renders the view: `render` passes the stream to the pipeline
    /// (`RenderPipeline.Options.bodyStream`, with display lists kept) and returns its tree. Each body component is
    /// written as soon as it is drawn, so its display list is not kept; the output is what `render(_:to:)` writes
    /// for the same tree.
    public func renderStreaming(
        to sink: (UnsafeRawBufferPointer) -> Void, _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) -> RenderTree {
        ByteWriter.stream(to: sink) { out in
            var state = (out: out, clips: 0)
            let tree = StreamedDocument.write(
                &state,
                opening: { state, tree, _ in writeOpening(tree, to: &state.out) },
                node: { state, node in draw(node, at: node.frame, depth: 1, clips: &state.clips, to: &state.out) },
                closing: { state, tree in writeClosing(tree, clips: &state.clips, to: &state.out) }, render)
            out = state.out
            return tree
        }
    }

    func writeDocument(_ tree: RenderTree, to out: inout ByteWriter) {
        var clips = 0
        writeOpening(tree, to: &out)
        for node in tree.body { draw(node, at: node.frame, depth: 1, clips: &clips, to: &out) }
        writeClosing(tree, clips: &clips, to: &out)
    }

    /// Up to the body's group: the document, its title and background.
    func writeOpening(_ tree: RenderTree, to out: inout ByteWriter) {
        let canvas = tree.canvasSize
        out.write("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        n(canvas.width, &out)
        out.write("\" height=\"")
        n(canvas.height, &out)
        out.write("\" viewBox=\"0 0 ")
        n(canvas.width, &out)
        out.byte(0x20)
        n(canvas.height, &out)
        out.write("\" font-family=\"DejaVu Sans Mono, Menlo, monospace\">\n")
        if let title = tree.title ?? tree.viewID {
            out.write("<title>")
            out.writeXMLEscaped(title)
            out.write("</title>\n")
        }
        out.write("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n")
        out.write("<g class=\"body\">\n")
    }

    /// After the body: the header over it, the overlays, the end of the document.
    func writeClosing(_ tree: RenderTree, clips: inout Int, to out: inout ByteWriter) {
        out.write("</g>\n")
        if let header = tree.header {
            out.write("<g class=\"header\">\n")
            draw(header, at: header.frame, depth: 1, clips: &clips, to: &out)
            out.write("</g>\n")
        }
        if !tree.overlays.isEmpty {
            out.write("<g class=\"overlays\">\n")
            out.write("<rect x=\"0\" y=\"0\" width=\"")
            n(tree.viewport.width, &out)
            out.write("\" height=\"")
            n(tree.viewport.height, &out)
            out.write("\" fill=\"none\" stroke=\"#999999\" stroke-dasharray=\"6 4\"/>\n")
            for node in tree.overlays { draw(node, at: node.frame, depth: 1, clips: &clips, to: &out) }
            out.write("</g>\n")
        }
        out.write("</svg>\n")
    }

    /// Children are clipped to their parent's bounds, as a parent view clips its subviews (a carousel's strip).
    func draw(_ node: RenderNode, at frame: Rect, depth: Int, clips: inout Int, to out: inout ByteWriter) {
        guard depth < 64 else { return }  // a child cycle cannot recurse forever
        out.write("<g transform=\"translate(")
        n(frame.x, &out)
        out.byte(UInt8(ascii: ","))
        n(frame.y, &out)
        out.write(")\" data-id=\"")
        out.writeXMLEscaped(node.modelID)
        out.write("\" data-component=\"")
        out.writeXMLEscaped(node.componentIdentifier.description)
        out.write("\">\n")
        if showFrames {
            out.write("<rect width=\"")
            n(frame.width, &out)
            out.write("\" height=\"")
            n(frame.height, &out)
            out.write("\" fill=\"none\" stroke=\"#cccccc\" stroke-width=\"0.5\"/>\n")
        }
        var clipID: Int?
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
                    clipID = clips
                    out.write("<clipPath id=\"")
                    clipName(clips, &out)
                    out.write("\"><rect width=\"")
                    n(frame.width, &out)
                    out.write("\" height=\"")
                    n(frame.height, &out)
                    out.write("\"/></clipPath>\n")
                }
                out.write("<g clip-path=\"url(#")
                clipName(clipID!, &out)
                out.write(")\">\n")
                draw(child, at: r, depth: depth + 1, clips: &clips, to: &out)
                out.write("</g>\n")
            }
        }
        out.write("</g>\n")
    }

    private func clipName(_ number: Int, _ out: inout ByteWriter) {
        out.write(idPrefix)
        out.write("clip")
        out.write(number)
    }

    /// ` fill="#rrggbb"` (and its opacity), or ` fill="none"`.
    private func paint(_ attribute: StaticString, _ color: Color, _ out: inout ByteWriter) {
        out.byte(0x20)
        out.write(attribute)
        guard color.isVisible else { return out.write("=\"none\"") }
        out.write("=\"#")
        // color.hexRGB, without making a string.
        let rgb = color.rgba >> 8
        for shift in stride(from: 20, through: 0, by: -4) {
            let digit = UInt8((rgb >> UInt32(shift)) & 0xF)
            out.byte(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
        out.byte(UInt8(ascii: "\""))
        if color.opacity < 1 {
            out.byte(0x20)
            out.write(attribute)
            out.write("-opacity=\"")
            n((color.opacity * 1000).rounded() / 1000, &out)
            out.byte(UInt8(ascii: "\""))
        }
    }

    private func rect(_ r: Rect, _ style: RectStyle, to out: inout ByteWriter) {
        out.write("<rect x=\"")
        n(r.x, &out)
        out.write("\" y=\"")
        n(r.y, &out)
        out.write("\" width=\"")
        n(max(0, r.width), &out)
        out.write("\" height=\"")
        n(max(0, r.height), &out)
        out.byte(UInt8(ascii: "\""))
        if style.cornerRadius > 0 {
            out.write(" rx=\"")
            n(style.cornerRadius, &out)
            out.byte(UInt8(ascii: "\""))
        }
        paint("fill", style.fill, &out)
        if style.stroke.isVisible, style.strokeWidth > 0 {
            paint("stroke", style.stroke, &out)
            out.write(" stroke-width=\"")
            n(style.strokeWidth, &out)
            out.byte(UInt8(ascii: "\""))
        }
        out.write("/>\n")
    }

    private func text(_ r: Rect, _ string: String, _ style: TextStyle, to out: inout ByteWriter) {
        let lineHeight = TextMetrics.lineHeight(for: style)
        let advance = TextMetrics.advance(for: style)
        var lines = TextMetrics.lines(string, style: style, maxWidth: r.width)
        // Lines below the frame are not drawn (at least one is).
        let fitting = max(1, Int(saturating: (r.height / lineHeight).rounded(.down) + 0.001))
        if r.height > 0, lines.count > fitting { lines = Array(lines.prefix(fitting)) }
        let anchor: StaticString
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
            let width = Double(TextMetrics.cells(line)) * advance
            out.write("<text x=\"")
            n(x, &out)
            out.write("\" y=\"")
            n(baseline, &out)
            out.write("\" font-size=\"")
            n(style.fontSize, &out)
            out.byte(UInt8(ascii: "\""))
            if style.weight != 400 {
                out.write(" font-weight=\"")
                out.write(style.weight)
                out.byte(UInt8(ascii: "\""))
            }
            if style.alignment != .left {
                out.write(" text-anchor=\"")
                out.write(anchor)
                out.byte(UInt8(ascii: "\""))
            }
            paint("fill", style.color, &out)
            out.write(" textLength=\"")
            n(width, &out)
            out.write("\" lengthAdjust=\"spacingAndGlyphs\">")
            out.writeXMLEscaped(ShapedText.cappingClusters(line))
            out.write("</text>\n")
        }
    }

    private func image(_ r: Rect, uri: String?, mode: ContentMode, placeholder: Color, to out: inout ByteWriter) {
        rect(r, RectStyle(fill: placeholder), to: &out)
        guard let uri, let href = images.resolve(uri) else { return }
        let aspect: StaticString
        switch mode {
        case .scaleToFill: aspect = "none"
        case .aspectFit: aspect = "xMidYMid meet"
        case .aspectFill: aspect = "xMidYMid slice"
        }
        out.write("<image x=\"")
        n(r.x, &out)
        out.write("\" y=\"")
        n(r.y, &out)
        out.write("\" width=\"")
        n(r.width, &out)
        out.write("\" height=\"")
        n(r.height, &out)
        out.write("\" preserveAspectRatio=\"")
        out.write(aspect)
        out.write("\" href=\"")
        out.writeXMLEscaped(href)
        out.write("\"/>\n")
    }

    /// A coordinate, rounded to hundredths, in its shortest form.
    private func n(_ value: Double, _ out: inout ByteWriter) {
        let cents = (value * 100).rounded()
        if abs(cents) < 1e15 { return out.write(hundredths: Int(cents)) }
        out.write(number: cents / 100)
    }
}

/// Text as it goes to a shaper (pango and harfbuzz draw PNGs; a browser draws SVG and the preview).
enum ShapedText {
    /// The most Unicode scalars one grapheme cluster keeps. Shaping takes time quadratic in a cluster's length,
    /// and a view's title is a server's: 10,000 emoji joined by ZWJ (one cluster) took 54 s to draw as PNG, a
    /// letter with 100,000 combining accents 36 s. Real text has no cluster near this long (Unicode's
    /// stream-safe format allows 30 combining marks in a row).
    static let maxClusterScalars = 32

    /// `line` with each grapheme cluster of more than `maxClusterScalars` scalars cut to its first ones. A line
    /// too short to hold such a cluster, or ASCII (clusters of one or two), is returned as it is, unscanned.
    static func cappingClusters(_ line: String) -> String {
        guard line.utf8.count > maxClusterScalars, line.utf8.contains(where: { $0 >= 0x80 }) else { return line }
        guard line.contains(where: { $0.unicodeScalars.count > maxClusterScalars }) else { return line }
        var capped = ""
        for cluster in line {
            if cluster.unicodeScalars.count <= maxClusterScalars {
                capped.append(cluster)
            } else {
                capped.unicodeScalars.append(contentsOf: cluster.unicodeScalars.prefix(maxClusterScalars))
            }
        }
        return capped
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
        case "\u{FFFE}", "\u{FFFF}": out += "\u{FFFD}"  // not XML 1.0 characters
        default:
            if c.value < 0x20 && c != "\n" && c != "\t" { out += " " } else { out.unicodeScalars.append(c) }
        }
    }
    return out
}

/// Draws a view as SVG, its element ids starting with the prefix (several drawings share one page), remote images
/// with the bytes a plugin's image loader supplied (nil: the placeholder).
public typealias ViewDrawing = (
    _ tree: RenderTree, _ idPrefix: String, _ suppliedImages: @escaping (String) -> [UInt8]?
) -> String
