import Dispatch
import Foundation
import HubCore
import HubHost
import HubRender

/// Connects the development loop to the preview server: every render becomes a frame pushed to the open pages,
/// every click in a page becomes a tap on the loop's queue, and every reload prints one terminal line.
public final class DevPreview: @unchecked Sendable {
    public let loop: DevLoop
    public let server: PreviewServer
    /// Turns a render tree into the HTML the page shows (the HTML renderer's output).
    public let html: ViewDrawing
    /// Draws gallery mode's shots on one sheet (`hubhost gallery`'s SVG).
    public let gallery: GallerySheetDrawing
    /// Where the one line per reload goes.
    public var printLine: (String) -> Void = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    public init(
        loop: DevLoop, server: PreviewServer, html: @escaping ViewDrawing,
        gallery: @escaping GallerySheetDrawing
    ) {
        self.loop = loop
        self.server = server
        self.html = html
        self.gallery = gallery
        loop.onRender = { [weak self] output in self?.rendered(output) }
        loop.host.onPluginLog = { [weak server] record, level, message in
            let entry = DevWorkerChannel.LogEntry(level: level.rawValue, source: record.displayName, message: message)
            if let json = try? JSONEncoder().encode(entry) { server?.publish(event: "log", json: json) }
        }
        loop.onActivity = { [weak server] activity in
            if let json = try? JSONEncoder().encode(["activity": activity ?? ""]) {
                server?.publish(event: "activity", json: json)
            }
        }
        let queue = loop.options.queue
        server.onTap = { [weak self] indexPath, section in
            // Plugin calls happen on the loop's queue only.
            queue.sync { self?.loop.tap(indexPath: indexPath, section: section) ?? "gone" }
        }
        server.onRequest = { [weak self] request in
            queue.sync { self.map { request.answer(with: $0.loop) } ?? "gone" }
        }
    }

    private func rendered(_ output: DevLoop.Output) {
        let frame = Self.frame(from: output, html: html, gallery: gallery)
        server.publish(frame)
        for line in Self.terminalLines(output, alreadySaid: &saidViewWarnings) { printLine(line) }
    }

    /// The view's warnings the terminal shows now (each is said once while it stands).
    private var saidViewWarnings: Set<String> = []

    /// What the terminal shows for a render: the reload line, warnings, and the view's warnings when the view or a
    /// plugin changed (a tap or an edit in the page does not repeat them).
    /// A view warning is said when it appears, not again with every reload while it stands (4,252 of 5,354 lines a
    /// long session printed were the same warnings); `alreadySaid` is the caller's record of what stands.
    /// The session's own warnings (retired Swift images over their budget) are said the same way, when they
    /// change: one was printed again with every tap.
    public static func terminalLines(_ output: DevLoop.Output, alreadySaid: inout Set<String>) -> [String] {
        var lines = output.reloads.map(\.description)
        let sessionWarnings = output.warnings.map { "session: " + $0 }
        lines += output.warnings.filter { !alreadySaid.contains("session: " + $0) }.map { "warning: \($0)" }
        alreadySaid.subtract(alreadySaid.filter { $0.hasPrefix("session: ") })
        alreadySaid.formUnion(sessionWarnings)
        switch output.reload.result {
        case .tapped, .edited, .widths: break
        case .scrolled: return []
        default:
            lines += output.viewWarnings.filter { !alreadySaid.contains($0) }.map { "warning: \($0)" }
            alreadySaid = Set(output.viewWarnings).union(sessionWarnings)
        }
        return lines
    }

    /// The page's frame for a render: HTML, one box per component (in view coordinates), problems.
    public static func frame(
        from output: DevLoop.Output, html: ViewDrawing, gallery: GallerySheetDrawing
    ) -> PreviewFrame {
        var boxes: [PreviewFrame.Box] = []
        // A box for each component where it can be seen: children only inside their parent's visible part (a
        // carousel's strip), so a child scrolled out of its strip has no click target over the strip.
        func collect(_ node: RenderNode, section: String, origin: Point, visible: Rect?) {
            let frame = node.frame.offsetBy(dx: origin.x, dy: origin.y)
            let shown = visible.map { frame.intersection($0) } ?? frame
            guard shown.width > 0, shown.height > 0 else { return }
            boxes.append(
                .init(
                    indexPath: node.indexPath, section: section, id: node.modelID,
                    component: node.componentIdentifier.description,
                    x: shown.x, y: shown.y, width: shown.width, height: shown.height))
            // Only children the parent drew get a target: one it never placed sits at (0, 0) unseen.
            let placed = Set(
                node.displayList.compactMap { item -> Int? in
                    if case .child(_, let index) = item { return index } else { return nil }
                })
            for child in node.children where node.displayList.isEmpty || placed.contains(child.indexPath.last ?? -1) {
                collect(child, section: section, origin: frame.origin, visible: shown)
            }
        }
        if let tree = output.tree {
            for node in tree.body { collect(node, section: "body", origin: .zero, visible: nil) }
            // Drawn over the body, so listed after it: the page's last box on top wins a click.
            if let header = tree.header { collect(header, section: "header", origin: .zero, visible: nil) }
            for node in tree.overlays { collect(node, section: "overlay", origin: .zero, visible: nil) }
        }
        var problems = output.quarantines.map { PreviewFrame.Problem(kind: "quarantine", message: $0.description) }
        problems += output.viewIssues.map { PreviewFrame.Problem(kind: "json", message: $0) }
        for reload in output.reloads where reload.result == .rejected {
            problems.append(.init(kind: "reload", message: reload.description))
        }
        problems += output.warnings.map { PreviewFrame.Problem(kind: "memory", message: $0) }
        problems += output.viewWarnings.map { PreviewFrame.Problem(kind: "warning", message: $0) }
        let size = output.tree?.canvasSize ?? Size(width: 375, height: 667)
        var frame = PreviewFrame(
            sequence: output.sequence, html: output.tree.map { html($0, "", output.suppliedImages) } ?? "",
            width: size.width,
            height: size.height, boxes: boxes, problems: problems,
            cause: cause(of: output), tapped: output.tapped, tappedSection: output.tappedSection,
            plugins: output.plugins,
            settledAt: output.reload.settledAt, lastEventAt: output.reload.lastEventAt,
            renderedAt: output.reload.renderedAt)
        if let window = output.window {
            frame.window = .init(top: window.lowerBound, bottom: window.upperBound, components: output.bodyCount)
        }
        if output.reload.result == .scrolled {
            frame.scrolled = true
            frame.scrolledBy = output.scrolledBy
        }
        if let shots = output.gallery {
            // Gallery mode: every story on one sheet (no boxes: stories are pictures, not a view to tap; a click on
            // one opens it on the canvas, where it is).
            let (svg, size, places) = gallery(shots)
            frame.html = svg
            frame.width = size.width
            frame.height = size.height
            frame.boxes = []
            frame.stories = zip(shots, places).map { shot, place in
                PreviewFrame.StoryPlace(
                    component: shot.entry.component, story: shot.story.name, width: shot.width, place: place)
            }
        }
        frame.story = output.openStory
        // Each drawing on the page has ids of its own: every SVG numbers its clip paths from 1, and in one document
        // `url(#clip1)` is the first element with that id, the main view's (a 768-pt drawing was cut at 375).
        frame.extraWidths = output.extraWidths.isEmpty ? nil : output.extraWidths
        frame.viewWidth = output.viewWidth
        frame.extras = output.extras.enumerated().map { index, extra in
            PreviewFrame.Extra(
                width: extra.width, height: extra.tree.canvasSize.height,
                html: html(extra.tree, "w\(index)-", output.suppliedImages))
        }
        return frame
    }
}

extension DevPreview {
    /// What the page's header says led to a frame: the reload, or for plugins rebuilt together, how many and the
    /// last of them (the terminal has a line for each).
    static func cause(of output: DevLoop.Output) -> String {
        let count = output.earlierReloads.count + 1
        guard count > 1 else { return output.reload.description }
        return "\(count) plugins reloaded together, the last: \(output.reload.description)"
    }
}

/// Draws shots on one gallery sheet: the SVG, its size and where each shot is on it.
public typealias GallerySheetDrawing = ([Showcase.Shot]) -> (svg: String, size: Size, places: [Rect])
