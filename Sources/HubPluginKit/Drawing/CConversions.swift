import CHubPlugin

// Conversions between the shared vocabulary and the C ABI's structs (internal: only the bridges use them).

extension Size {
    init(_ size: hub_size) { self.init(width: size.width, height: size.height) }
    var c: hub_size { hub_size(width: width, height: height) }
}

extension Point {
    init(_ point: hub_point) { self.init(x: point.x, y: point.y) }
    var c: hub_point { hub_point(x: x, y: y) }
}

extension Rect {
    var c: hub_rect { hub_rect(x: x, y: y, width: width, height: height) }
}

extension TextStyle {
    var c: hub_text_style {
        let cAlignment: hub_text_alignment
        switch alignment {
        case .left: cAlignment = HUB_TEXT_LEFT
        case .center: cAlignment = HUB_TEXT_CENTER
        case .right: cAlignment = HUB_TEXT_RIGHT
        }
        return hub_text_style(
            struct_size: structSize(hub_text_style.self), font_size: fontSize,
            weight: UInt32(clamping: weight), color: color.rgba, alignment: cAlignment,
            line_limit: UInt32(clamping: lineLimit))
    }
}
