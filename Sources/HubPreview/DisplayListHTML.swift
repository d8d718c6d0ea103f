import HubCore

/// Draws a render tree as absolutely positioned HTML elements, one per display-list item. The preview uses it
/// when no other HTML renderer is given; element ids carry the model id so tests and tools can find components.
public enum DisplayListHTML {
    public static func render(_ tree: RenderTree) -> String {
        var out = "<div class=\"hub-view\" style=\"position:relative;width:\(px(tree.canvasSize.width));height:\(px(tree.canvasSize.height))\">"
        if let header = tree.header { node(header, origin: .zero, into: &out) }
        for item in tree.body { node(item, origin: .zero, into: &out) }
        for item in tree.overlays { node(item, origin: .zero, into: &out) }
        return out + "</div>"
    }

    private static func node(_ node: RenderNode, origin: Point, into out: inout String) {
        let frame = node.frame.offsetBy(dx: origin.x, dy: origin.y)
        out += "<div class=\"hub-component\" data-model-id=\"\(escape(node.modelID))\" data-component=\"\(escape(node.componentIdentifier.description))\""
        out += " style=\"position:absolute;left:\(px(frame.x));top:\(px(frame.y));width:\(px(frame.width));height:\(px(frame.height))\">"
        for item in node.displayList {
            switch item {
            case let .rect(r, style):
                out += "<div style=\"\(box(r))background:\(css(style.fill));border-radius:\(px(style.cornerRadius));"
                if style.stroke.isVisible && style.strokeWidth > 0 {
                    out += "box-sizing:border-box;border:\(px(style.strokeWidth)) solid \(css(style.stroke));"
                }
                out += "\"></div>"
            case let .text(r, string, style):
                let align = ["left", "center", "right"][style.alignment.rawValue]
                out += "<div style=\"\(box(r))overflow:hidden;font:\(style.weight) \(px(style.fontSize))/1.25 sans-serif;color:\(css(style.color));text-align:\(align)\">\(escape(string))</div>"
            case let .image(r, uri, _, placeholder):
                out += "<div class=\"hub-image\" data-uri=\"\(escape(uri ?? ""))\" style=\"\(box(r))background:\(css(placeholder))\"></div>"
            case .child:
                break // children are drawn from their own nodes, at the slot the parent placed them in
            }
        }
        for child in node.children { self.node(child, origin: .zero, into: &out) }
        out += "</div>"
    }

    private static func box(_ r: Rect) -> String {
        "position:absolute;left:\(px(r.x));top:\(px(r.y));width:\(px(r.width));height:\(px(r.height));"
    }
    private static func px(_ v: Double) -> String { v.compact + "px" }
    private static func css(_ color: Color) -> String {
        "rgba(\(color.rgba >> 24),\((color.rgba >> 16) & 0xFF),\((color.rgba >> 8) & 0xFF),\(color.alpha.compact))"
    }
    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
