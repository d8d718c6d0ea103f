import CRsvg
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// A raster image: 32-bit premultiplied ARGB pixels (cairo's ARGB32), row by row.
///
/// PNGs are drawn from hubhost's own SVG by librsvg into a cairo surface and written by cairo, with the fonts
/// the SVG names (DejaVu Sans Mono, Debian's fonts-dejavu-core), so one build draws the same bytes on any
/// machine that has that font. The SVG holds only `data:` images (`ImageResolver`), so librsvg reads no file.
public struct PNGImage: Equatable, Sendable {
    public var width: Int
    public var height: Int
    /// 0xAARRGGBB, premultiplied, `width * height` of them.
    public var pixels: [UInt32]

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Why a drawing of `width`×`height` points at `scale` is too large for a PNG, or nil: asked before the SVG is
    /// written, so a view too tall is refused before that work (at 300k components, 20 s and 760 MB).
    public static func sizeProblem(width: Double, height: Double, scale: Double) -> String? {
        let (pixelWidth, pixelHeight) = pixelSize(width: width, height: height, scale: scale)
        guard pixelWidth > 32_768 || pixelHeight > 32_768 else { return nil }
        return "\(pixelWidth)×\(pixelHeight) pixels is larger than a PNG hubhost draws (32768)"
    }

    /// Whole pixels for `width`×`height` points at `scale` (bounded, so an absurd size cannot trap).
    private static func pixelSize(width: Double, height: Double, scale: Double) -> (Int, Int) {
        (max(1, Int(min(1e15, (width * scale).rounded(.up)))), max(1, Int(min(1e15, (height * scale).rounded(.up)))))
    }

    /// Draws `svg` (whose size is `width`×`height` points) at `scale` pixels per point.
    public static func rasterize(svg: String, width: Double, height: Double, scale: Double = 1) throws -> PNGImage {
        if let problem = sizeProblem(width: width, height: height, scale: scale) {
            throw Failure(description: problem)
        }
        let (pixelWidth, pixelHeight) = pixelSize(width: width, height: height, scale: scale)
        let cairo = try Rsvg.api()
        let surface = cairo.image_surface_create(Int32(HUB_CAIRO_FORMAT_ARGB32), Int32(pixelWidth), Int32(pixelHeight))
        defer { cairo.surface_destroy(surface) }
        guard cairo.surface_status(surface) == HUB_CAIRO_STATUS_SUCCESS else {
            throw Failure(description: "cannot make a \(pixelWidth)×\(pixelHeight) image")
        }
        let context = cairo.create(surface)
        defer { cairo.destroy(context) }
        var error: UnsafeMutablePointer<hub_gerror>?
        let bytes = Array(svg.utf8)
        guard
            let handle = bytes.withUnsafeBufferPointer({
                cairo.rsvg_handle_new_from_data($0.baseAddress, $0.count, &error)
            })
        else { throw Failure(description: "librsvg cannot read the drawing: \(message(error, cairo))") }
        defer { cairo.g_object_unref(UnsafeMutableRawPointer(handle)) }
        cairo.scale(context, scale, scale)
        var viewport = hub_rsvg_rectangle(x: 0, y: 0, width: width, height: height)
        guard cairo.rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else {
            throw Failure(description: "librsvg cannot draw: \(message(error, cairo))")
        }
        cairo.surface_flush(surface)
        var image = PNGImage(surface: surface!, cairo)
        // A size that is not whole pixels (375 points at 1.5) leaves the last column or row partly covered: it is
        // drawn over white, as the drawing's own background is, not left semi-transparent.
        let partialColumn = (width * scale).rounded(.up) != width * scale
        let partialRow = (height * scale).rounded(.up) != height * scale
        if partialColumn { for y in 0..<image.height { image.makeOpaqueOverWhite(x: image.width - 1, y: y) } }
        if partialRow { for x in 0..<image.width { image.makeOpaqueOverWhite(x: x, y: image.height - 1) } }
        return image
    }

    /// The pixel at (x, y) composited over white (premultiplied: each channel gains what alpha lacks).
    private mutating func makeOpaqueOverWhite(x: Int, y: Int) {
        let argb = pixels[y * width + x]
        let missing = 255 - (argb >> 24)
        guard missing > 0 else { return }
        func channel(_ shift: UInt32) -> UInt32 { min(255, ((argb >> shift) & 0xFF) + missing) << shift }
        pixels[y * width + x] = 0xFF00_0000 | channel(16) | channel(8) | channel(0)
    }

    private static func message(_ error: UnsafeMutablePointer<hub_gerror>?, _ cairo: hub_rsvg_api) -> String {
        guard let error else { return "unknown error" }
        defer { cairo.g_error_free(error) }
        // GLib's messages may end with a newline, which a one-line report would show escaped.
        let text = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        return String(text.reversed().drop { $0.isNewline || $0 == " " }.reversed())
    }

    /// Copies a cairo ARGB32 surface's pixels.
    init(surface: OpaquePointer, _ cairo: hub_rsvg_api) {
        let width = Int(cairo.image_surface_get_width(surface))
        let height = Int(cairo.image_surface_get_height(surface))
        let stride = Int(cairo.image_surface_get_stride(surface))
        var pixels = [UInt32](repeating: 0, count: width * height)
        if let data = cairo.image_surface_get_data(surface) {
            for row in 0..<height {
                let source = UnsafeRawPointer(data + row * stride).assumingMemoryBound(to: UInt32.self)
                pixels.withUnsafeMutableBufferPointer { destination in
                    (destination.baseAddress! + row * width).update(from: source, count: width)
                }
            }
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public init(width: Int, height: Int, pixels: [UInt32]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at (x, y), unpremultiplied, as 0xRRGGBBAA (the vocabulary's `Color` order).
    public func color(x: Int, y: Int) -> Color? {
        guard x >= 0, y >= 0, x < width, y < height else { return nil }
        let argb = pixels[y * width + x]
        let a = argb >> 24
        func channel(_ shift: UInt32) -> UInt32 {
            let value = (argb >> shift) & 0xFF
            return a == 0 ? 0 : min(255, (value * 255 + a / 2) / a)
        }
        return Color(rgba: channel(16) << 24 | channel(8) << 16 | channel(0) << 8 | a)
    }

    /// The PNG file's bytes (cairo's encoder: no timestamps, so equal pixels give equal bytes).
    public func pngData() throws -> Data {
        let cairo = try Rsvg.api()
        let surface = makeSurface(cairo)
        defer { cairo.surface_destroy(surface) }
        final class Sink { var data = Data() }
        let sink = Sink()
        let status = cairo.surface_write_to_png_stream(
            surface,
            { closure, bytes, length in
                guard let closure, let bytes else { return Int32(HUB_CAIRO_STATUS_WRITE_ERROR) }
                Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().data.append(bytes, count: Int(length))
                return Int32(HUB_CAIRO_STATUS_SUCCESS)
            }, Unmanaged.passUnretained(sink).toOpaque())
        guard status == HUB_CAIRO_STATUS_SUCCESS else { throw Failure(description: "cannot encode the PNG") }
        return sink.data
    }

    /// Decodes PNG bytes; nil when they are not a PNG (or librsvg cannot be loaded).
    public init?(png data: Data) {
        guard let cairo = try? Rsvg.api() else { return nil }
        final class Source {
            let data: Data
            var offset = 0
            init(_ data: Data) { self.data = data }
        }
        let source = Source(data)
        let surface = cairo.image_surface_create_from_png_stream(
            { closure, bytes, length in
                guard let closure, let bytes else { return Int32(HUB_CAIRO_STATUS_READ_ERROR) }
                let source = Unmanaged<Source>.fromOpaque(closure).takeUnretainedValue()
                let count = Int(length)
                guard source.offset + count <= source.data.count else { return Int32(HUB_CAIRO_STATUS_READ_ERROR) }
                source.data.copyBytes(to: bytes, from: source.offset..<(source.offset + count))
                source.offset += count
                return Int32(HUB_CAIRO_STATUS_SUCCESS)
            }, Unmanaged.passUnretained(source).toOpaque())
        defer { cairo.surface_destroy(surface) }
        let format = surface.map { cairo.image_surface_get_format($0) }
        guard let surface, cairo.surface_status(surface) == HUB_CAIRO_STATUS_SUCCESS,
            format == HUB_CAIRO_FORMAT_ARGB32 || format == HUB_CAIRO_FORMAT_RGB24
        else { return nil }
        self.init(surface: surface, cairo)
        if format == HUB_CAIRO_FORMAT_RGB24 {
            pixels = pixels.map { $0 | 0xFF00_0000 }
        }
    }

    private func makeSurface(_ cairo: hub_rsvg_api) -> OpaquePointer? {
        let surface = cairo.image_surface_create(Int32(HUB_CAIRO_FORMAT_ARGB32), Int32(width), Int32(height))
        let stride = Int(cairo.image_surface_get_stride(surface))
        if let data = cairo.image_surface_get_data(surface) {
            pixels.withUnsafeBufferPointer { source in
                for row in 0..<height {
                    UnsafeMutableRawPointer(data + row * stride).assumingMemoryBound(to: UInt32.self)
                        .update(from: source.baseAddress! + row * width, count: width)
                }
            }
        }
        cairo.surface_mark_dirty(surface)
        return surface
    }
}

/// librsvg, loaded on the first PNG (see crsvg.h).
extension PNGImage {
    /// The font hubhost's drawings name.
    public static let fontFamily = "DejaVu Sans Mono"

    /// What fontconfig draws `fontFamily` with, when that is not the font itself.
    public enum FontProblem: Sendable {
        /// Another font: the same build then draws other pixels than on a machine that has it, and goldens
        /// recorded on one fail on the other.
        case substitute(String)
        /// No font at all (an empty or broken fontconfig setup): every text is drawn as boxes.
        case noFont
    }

    /// Nil when `fontFamily` is installed (or fontconfig cannot be asked).
    public static let fontProblem: FontProblem? = {
        var family = [CChar](repeating: 0, count: 256)
        switch hub_rsvg_matched_family(fontFamily, &family, family.count) {
        case 0: return nil
        case -1: return .noFont
        default:
            let matched = String(cString: family)
            return matched.hasPrefix(fontFamily) ? nil : .substitute(matched)
        }
    }()

    /// `fontProblem` as a sentence, when there is one.
    public static var missingFontWarning: String? {
        switch fontProblem {
        case nil: return nil
        case .noFont:
            return "fontconfig finds no font at all (Debian's fonts-dejavu-core installs \(fontFamily)): every text "
                + "of a PNG is drawn as boxes, and will not match images drawn where the font is"
        case .substitute(let matched):
            return "the font \(fontFamily) is not installed (Debian's fonts-dejavu-core): PNGs are drawn with "
                + "\(matched) instead, and will not match images drawn where it is"
        }
    }
}

extension PNGImage {
    /// Draws SVG image `bytes` alone in a child process, as large as a drawing can place it (a 32768-pixel frame:
    /// what librsvg lays out at that scale is what fails; only a 16-pixel corner is kept): nil when it drew, else
    /// why not (librsvg crashed or took over 10 s). Images inside a view are untrusted, and librsvg aborts the
    /// process on some (a text of font size 1e9, drawn larger than its own size), which was the whole render's.
    public static func trySVGImageApart(_ bytes: [UInt8]) -> String? {
        let side = 16.0
        let text =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(side))\" height=\"\(Int(side))\"><image "
            + "width=\"32768\" height=\"32768\" preserveAspectRatio=\"none\" href=\"data:image/svg+xml;base64,"
            + Data(bytes).base64EncodedString() + "\"/></svg>"
        _ = try? Rsvg.api()  // loaded once, here, not in each child
        fflush(nil)
        let child = fork()
        guard child >= 0 else { return nil }  // no child: drawn as it is
        if child == 0 {
            // The child's output goes nowhere: only whether it ends well says anything.
            let null = open("/dev/null", O_WRONLY)
            if null >= 0 {
                dup2(null, 1)
                dup2(null, 2)
            }
            alarm(10)
            _exit((try? rasterize(svg: text, width: side, height: side)) == nil ? 1 : 0)
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        if signal == SIGALRM { return "librsvg took over 10 s to draw this SVG image" }
        if signal != 0 {
            let name = [SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE"][signal]
            return "librsvg crashes drawing this SVG image (\(name ?? "signal \(signal)"))"
        }
        return nil
    }
}

enum Rsvg {
    /// The function table, or an error saying why librsvg cannot be loaded.
    static func api() throws -> hub_rsvg_api {
        var reason = [CChar](repeating: 0, count: 512)
        guard let table = hub_rsvg_load(&reason, reason.count) else {
            throw PNGImage.Failure(description: String(cString: reason))
        }
        return table.pointee
    }
}

/// How two images differ, pixel by pixel.
public struct PixelDiff: Sendable {
    /// Pixels whose channels differ by more than the per-channel threshold, and pixels only one image has.
    public var differing: Int
    /// The pixels of the area both images cover together (the larger width by the larger height).
    public var total: Int
    /// Over that area: red where the pixels differ, magenta where only one image has pixels, a faded copy of the
    /// expected image elsewhere.
    public var image: PNGImage?
    /// The images are not the same size: they differ whatever the tolerance.
    public var sizeChanged: Bool
    /// The smallest rectangle holding every differing pixel (x, y, width, height), when there is one: where to look.
    public var bounds: (x: Int, y: Int, width: Int, height: Int)?

    public var fraction: Double { total == 0 ? 0 : Double(differing) / Double(total) }

    /// Compares `actual` with `expected`; a channel difference up to `channelThreshold` (0…255) is not a difference.
    /// Images of different sizes are compared over the area they share, top-left aligned (a row added at the
    /// bottom shows as the new row, not as everything moved).
    public init(expected: PNGImage, actual: PNGImage, channelThreshold: UInt32 = 0) {
        let width = max(expected.width, actual.width)
        let height = max(expected.height, actual.height)
        sizeChanged = expected.width != actual.width || expected.height != actual.height
        var count = 0
        var (minX, minY, maxX, maxY) = (Int.max, Int.max, -1, -1)
        var marked = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let inExpected = x < expected.width && y < expected.height
                let inActual = x < actual.width && y < actual.height
                var mark: UInt32 = 0xFFFF_00FF  // only one image has this pixel
                if inExpected && inActual {
                    let a = expected.pixels[y * expected.width + x]
                    let b = actual.pixels[y * actual.width + x]
                    mark = Self.differs(a, b, channelThreshold) ? 0xFFFF_0000 : Self.faded(a)
                }
                if mark == 0xFFFF_0000 || mark == 0xFFFF_00FF {
                    count += 1
                    (minX, minY, maxX, maxY) = (min(minX, x), min(minY, y), max(maxX, x), max(maxY, y))
                }
                marked[y * width + x] = mark
            }
        }
        differing = count
        total = width * height
        bounds = maxX < 0 ? nil : (minX, minY, maxX - minX + 1, maxY - minY + 1)
        image = PNGImage(width: width, height: height, pixels: marked)
    }

    private static func differs(_ a: UInt32, _ b: UInt32, _ threshold: UInt32) -> Bool {
        guard a != b else { return false }
        for shift: UInt32 in [0, 8, 16, 24] {
            let x = (a >> shift) & 0xFF
            let y = (b >> shift) & 0xFF
            if (x > y ? x - y : y - x) > threshold { return true }
        }
        return false
    }

    /// A faded copy (a quarter of each channel over white), for context.
    private static func faded(_ a: UInt32) -> UInt32 {
        func fade(_ v: UInt32) -> UInt32 { 191 + v / 4 }
        return 0xFF00_0000 | fade((a >> 16) & 0xFF) << 16 | fade((a >> 8) & 0xFF) << 8 | fade(a & 0xFF)
    }
}
