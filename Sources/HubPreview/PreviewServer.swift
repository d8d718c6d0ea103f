import Foundation
import HubCore
import HubHost
import HubRender
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The live preview's HTTP server (Hummingbird, on SwiftNIO), loopback only unless told otherwise.
///
/// Routes: `GET /` the page; `GET /frame` the current frame as JSON; `GET /events` server-sent events, one
/// `render` event per new frame (the current one first); `POST /tap` with `{"indexPath": [i, …]}` taps that
/// component. Every route is behind `PreviewGuard`: loopback `Host` names only, same-origin JSON posts with
/// bounded bodies, at most 32 event streams; a malformed tap gets a 400 naming the field. Below the guard, the
/// server library refuses a request line or headers over 16 KiB with a 400 and closes the connection, reads every
/// byte once (an unread body is skipped, not parsed as the next request) and closes connections idle for a minute:
/// any web page the developer visits can send such requests to a loopback port.
///
/// # Thread safety
/// `publish` may be called from any thread; taps are handed to `onTap` on the server's tasks.
public final class PreviewServer: @unchecked Sendable {
    public let bindAddress: String
    public let requestedPort: UInt16
    /// Told about a click in the page; returns what happened, for the page's log.
    public var onTap: @Sendable (_ indexPath: [Int], _ section: String) -> String = { _, _ in "no handler" }
    /// Told about the workbench's requests (inspect, edit, widths); returns the answer (JSON text for inspect).
    public var onRequest: @Sendable (_ request: PreviewRequest) -> String = { _ in "no handler" }

    private var serverTask: Task<Void, Never>?
    private var running = false
    private let lock = NSLock()
    private var latestJSON: Data?
    private var currentJSON: Data? { lock.withLock { latestJSON } }
    private var latestEvent: [UInt8] = []
    private var subscribers: [UUID: AsyncStream<[UInt8]>.Continuation] = [:]
    /// The port requests must name in their Host header; nil until listening.
    private var boundPort: UInt16?

    /// What exported files are called ("home" for home.json: home.svg, home@2x.png); "view" by default.
    public var exportName = "view"

    /// What an export of `frame` is named: the open story's (as `snapshot` names its golden) or the view's.
    /// A `Content-Disposition` for a download named `fileName` (the view file's name, which may hold anything): a
    /// quoted name with what it cannot hold (quotes, backslashes, anything but printable ASCII) as `_`, and the
    /// exact name in UTF-8 as RFC 6266 gives it (`filename*`) when they differ (`q"<b>x.svg` made a malformed
    /// header, and `café.png` raw UTF-8 in one).
    static func attachment(_ fileName: String) -> String {
        let plain = String(
            String.UnicodeScalarView(
                fileName.unicodeScalars.map { scalar in
                    scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "\\" ? scalar : "_"
                }))
        guard plain != fileName else { return "attachment; filename=\"\(plain)\"" }
        let kept = Set("!#$&+-.^_`|~".utf8)
        var encoded = ""
        for byte in fileName.utf8 {
            let isAlphanumeric =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            encoded +=
                isAlphanumeric || kept.contains(byte) ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }
        return "attachment; filename=\"\(plain)\"; filename*=UTF-8''\(encoded)"
    }

    func exportName(of frame: PreviewFrame) -> String {
        guard let story = frame.story else { return exportName }
        return Showcase.Shot.name(component: story.component, story: story.story)
    }

    public init(bindAddress: String = "127.0.0.1", port: UInt16 = 0) {
        self.bindAddress = bindAddress
        self.requestedPort = port
    }

    /// Starts listening and returns the port (useful with port 0, which picks a free one).
    public func start() async throws -> UInt16 {
        // IPv4 loopback by default ("localhost" may resolve to ::1 first, which "127.0.0.1" URLs do not reach).
        let ip = bindAddress == "localhost" ? "127.0.0.1" : bindAddress
        let router = Router(context: PreviewRequestContext.self)
        route(.get, "/", on: router) { [weak self] _ in
            // Server-rendered first paint: the current drawing is in the page; events only update it.
            // Never inside another site's frame: there a click on that site would tap the view (clickjacking).
            PreviewGuard.answer(
                type: "text/html; charset=utf-8",
                Data(PreviewPage.html(current: self?.currentJSON, drawing: self?.currentFrame?.html).utf8),
                headers: [.contentSecurityPolicy: "frame-ancestors 'none'"])
        }
        // Browsers ask for it on every page load: an empty answer, not a 404 in the console.
        route(.get, "/favicon.ico", on: router) { _ in Response(status: .noContent) }
        route(.get, "/export.svg", on: router) { [weak self] _ in
            guard let self, let frame = self.currentFrame, !frame.html.isEmpty else {
                return PreviewGuard.reply(.notFound, "no drawing yet")
            }
            if let refusal = Self.partialDrawing(frame) { return refusal }
            return PreviewGuard.answer(
                type: "image/svg+xml", Data(frame.html.utf8),
                headers: [.contentDisposition: Self.attachment(self.exportName(of: frame) + ".svg")])
        }
        route(.get, "/export.png", on: router) { [weak self] request in
            guard let self, let frame = self.currentFrame, !frame.html.isEmpty else {
                return PreviewGuard.reply(.notFound, "no drawing yet")
            }
            if let refusal = Self.partialDrawing(frame) { return refusal }
            // ?scale=2 draws at two pixels per point, as `render --scale` does.
            // A plain decimal (Double() also reads "0x2" and "+2"), 0.25 to 8, at most two decimals.
            let text = request.query("scale") ?? "1"
            let plain =
                !text.isEmpty && text.count <= 6 && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
                && text.filter { $0 == "." }.count <= 1
                && (text.split(separator: ".").dropFirst().first?.count ?? 0) <= 2
            guard plain, let scale = Double(text), scale >= 0.25 && scale <= 8 else {
                return PreviewGuard.reply(.badRequest, "scale: expected a number from 0.25 to 8, such as 2 or 1.5")
            }
            // Said before anything is drawn, with what draws it instead (the page's link would save this text).
            if let problem = PNGImage.sizeProblem(width: frame.width, height: frame.height, scale: scale) {
                return PreviewGuard.reply(
                    .contentTooLarge, "the view is \(problem); the SVG link (or `hubhost render --format svg`) draws it"
                )
            }
            do {
                let png = try PNGImage.rasterize(
                    svg: frame.html, width: frame.width, height: frame.height, scale: scale
                ).pngData()
                let suffix = scale == 1 ? "" : "@\(String(printf: "%g", scale))x"
                return PreviewGuard.answer(
                    type: "image/png", png,
                    headers: [
                        .contentDisposition: Self.attachment(self.exportName(of: frame) + suffix + ".png")
                    ])
            } catch {
                return PreviewGuard.reply(.internalServerError, "cannot draw the PNG: \(error)")
            }
        }
        route(.get, "/frame", on: router) { [weak self] _ in
            let data = self?.currentJSON ?? Data("null".utf8)
            return PreviewGuard.answer(type: "application/json", data)
        }
        route(.get, "/events", on: router) { [weak self] _ in
            guard let self else { return Response(status: .serviceUnavailable) }
            guard let (stream, continuation) = self.subscribe() else {
                return PreviewGuard.reply(
                    .serviceUnavailable,
                    "too many open event streams (at most \(PreviewGuard.maxEventStreams))")
            }
            // A page that has gone frees its place at once (its connection closes), not at the next write.
            // (The server lets a peer half-close: a gone page's connection would stay open until a write failed.)
            if let channel = Self.requestChannel {
                channel.closeFuture.whenComplete { _ in continuation.finish() }
                _ = channel.pipeline.addHandler(PeerClosedWatcher { continuation.finish() }, position: .first)
            }
            // Each event is written (and flushed) as it comes.
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    for await event in stream { try await writer.write(ByteBuffer(bytes: event)) }
                    try await writer.finish(nil)
                })
        }
        route(.post, "/tap", on: router) { [weak self] request in
            let tap: PreviewGuard.Tap
            switch PreviewGuard.Tap.parse(try await request.bodyData()) {
            case .success(let parsed): tap = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            let result = self?.onTap(tap.indexPath, tap.section) ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["indexPath": tap.indexPath, "result": result])
            // Nothing at that index path: not found, with the reason in the body as for any tap.
            let status: HTTPResponse.Status = result.hasPrefix(DevLoop.noSuchComponent) ? .notFound : .ok
            return PreviewGuard.answer(status, type: "application/json", reply)
        }
        route(.get, "/inspect", on: router) { [weak self] request in
            // ?section=body&path=1.2; "overlays" as event scripts spell it, and the header with no path as /tap and
            // scripts name it (the page's boxes give it 0).
            var section = request.query("section") ?? "body"
            if section == "overlays" { section = "overlay" }
            let pathText = request.query("path") ?? ""
            // Every part a number ("abc" or "1..2" is no path: it was read as the first component's).
            let parts =
                section == "header" && pathText.isEmpty
                ? ["0"] : pathText.split(separator: ".", omittingEmptySubsequences: false)
            let path = parts.compactMap { Int($0) }
            guard ["body", "header", "overlay"].contains(section), !path.isEmpty, path.count == parts.count,
                path.count <= InputLimits.indexPathDepth, path.allSatisfy({ $0 >= 0 && $0 < InputLimits.index })
            else { return PreviewGuard.reply(.badRequest, "inspect: section and path (i.j.k) expected") }
            let answer = self?.onRequest(PreviewRequest(kind: .inspect, indexPath: path, section: section)) ?? "null"
            guard answer != "null" else {
                let at = path.map(String.init).joined(separator: ".")
                return PreviewGuard.reply(.notFound, "nothing at \(section) \(at) (not in the view, or not drawn now)")
            }
            return PreviewGuard.answer(type: "application/json", Data(answer.utf8))
        }
        route(.post, "/edit", on: router) { [weak self] request in
            let body = try await request.bodyData()
            let tap: PreviewGuard.Tap
            switch PreviewGuard.Tap.parse(body) {
            case .success(let parsed): tap = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            let model: String
            switch PreviewGuard.parseModel(body) {
            case .success(let parsed): model = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            let answer =
                self?.onRequest(
                    PreviewRequest(kind: .edit, indexPath: tap.indexPath, section: tap.section, model: model)) ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["result": answer])
            return PreviewGuard.answer(type: "application/json", reply)
        }
        route(.post, "/widths", on: router) { [weak self] request in
            let change: PreviewGuard.WidthsChange
            switch PreviewGuard.parseWidths(try await request.bodyData()) {
            case .success(let parsed): change = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            let answer =
                self?.onRequest(PreviewRequest(kind: .widths, widths: change.extra, width: change.interactive))
                ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["result": answer])
            return PreviewGuard.answer(type: "application/json", reply)
        }
        route(.post, "/story", on: router) { [weak self] request in
            let story: StoryKey?
            switch PreviewGuard.parseStory(try await request.bodyData()) {
            case .success(let parsed): story = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            var open = PreviewRequest(kind: .story)
            open.story = story
            let answer = self?.onRequest(open) ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["result": answer])
            // A story no loaded plugin has is not found; stories in a loop that shows a view file, a conflict.
            let status: HTTPResponse.Status =
                answer.hasPrefix(DevLoop.noSuchStory)
                ? .notFound
                : answer.hasPrefix(DevLoop.notTheGallery) ? .conflict : .ok
            return PreviewGuard.answer(status, type: "application/json", reply)
        }
        route(.post, "/scroll", on: router) { [weak self] request in
            let scroll: (y: Double, height: Double, page: String?)
            switch PreviewGuard.parseScroll(try await request.bodyData()) {
            case .success(let parsed): scroll = parsed
            case .failure(let error): return PreviewGuard.reply(.badRequest, error.message)
            }
            let answer =
                self?.onRequest(PreviewRequest(kind: .scroll, y: scroll.y, height: scroll.height, page: scroll.page))
                ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["result": answer])
            return PreviewGuard.answer(type: "application/json", reply)
        }
        let listening = ListeningPort()
        let app = Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        HTTP1RequestNormalizer.Installer(), ContinueAnswerer(),
                        FirstRequestDeadline(seconds: PreviewGuard.firstRequestSeconds),
                    ], idleTimeout: .seconds(60))),
            configuration: .init(
                address: .hostname(ip, port: Int(requestedPort)),
                availableConnectionsDelegate: MaximumAvailableConnections(PreviewGuard.maxConnections)),
            onServerRunning: { channel in listening.set(port: channel.localAddress?.port, error: nil) },
            // The server's own log lines (started, connection errors) are not the developer's business.
            logger: Logger(label: "hubhost.preview", factory: { _ in SwiftLogNoOpLogHandler() }))
        // run() fails at once when the port cannot be bound (already in use, not permitted): that error is the
        // answer, rather than waiting out a timeout for a server that will never listen.
        serverTask = Task {
            do { try await app.run() } catch { listening.set(port: nil, error: error) }
        }
        let deadline = Date().addingTimeInterval(10)
        var bound: UInt16
        while true {
            let state = listening.state
            if let error = state.error { throw Self.describe(error, port: requestedPort) }
            if let port = state.port {
                bound = UInt16(port)
                break
            }
            guard Date() < deadline else { throw PreviewServerError(message: "not listening after 10 s") }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        lock.withLock {
            boundPort = bound
            running = true
        }
        Task { [weak self] in await self?.heartbeat() }
        return bound
    }

    /// Why the server could not start, in the user's words: a port in use is the common case (a second `dev`).
    private static func describe(_ error: Error, port: UInt16) -> PreviewServerError {
        if let ioError = error as? IOError {
            if ioError.errnoCode == EADDRINUSE {
                return PreviewServerError(
                    message: "port \(port) is in use (another hubhost dev?); pick another with --port, or --port 0")
            }
            if ioError.errnoCode == EACCES {
                return PreviewServerError(message: "not permitted to listen on port \(port)")
            }
        }
        return PreviewServerError(message: "\(error)")
    }

    /// Adds a route behind the guard, so no route can skip it. A GET route also answers HEAD (`curl -I`, link
    /// checkers) with the status and headers a GET gets and no body; but the event stream, which would hold one
    /// of its places for a request that reads nothing.
    private func route(
        _ method: HTTPRequest.Method, _ path: String, on router: Router<PreviewRequestContext>,
        _ handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        let guardian = PreviewGuard(bindAddress: bindAddress)
        let guarded: @Sendable (Request, PreviewRequestContext) async throws -> Response = {
            [weak self] request, context in
            let port = self?.lock.withLock { self?.boundPort } ?? nil
            guard let port else { return PreviewGuard.reply(.serviceUnavailable, "starting") }
            if let refusal = guardian.refusal(of: request, port: port) { return refusal }
            return try await Self.$requestChannel.withValue(context.channel) { try await handler(request) }
        }
        router.on(RouterPath(path), method: method, use: guarded)
        guard method == .get else { return }
        guard path != "/events" else {
            router.on(RouterPath(path), method: .head) { _, _ in
                var refused = PreviewGuard.reply(.methodNotAllowed, "the event stream answers GET only")
                refused.headers[.allow] = "GET"
                return refused
            }
            return
        }
        router.on(RouterPath(path), method: .head) { request, context in
            let response = try await guarded(request, context)
            var head = response.createHeadResponse()
            if let length = response.body.contentLength { head.headers[.contentLength] = String(length) }
            return head
        }
    }

    /// The connection of the request a route is answering.
    @TaskLocal static var requestChannel: (any Channel)?

    public func stop() async {
        let (all, task) = lock.withLock {
            defer {
                subscribers = [:]
                running = false
            }
            return (Array(subscribers.values), serverTask)
        }
        for continuation in all { continuation.finish() }
        // Cancelling the server's task shuts it down; a second is enough for open connections to close.
        task?.cancel()
        let ended = Task { await task?.value }
        _ = await withTaskGroup(of: Void.self) { group in
            group.addTask { await ended.value }
            group.addTask { try? await Task.sleep(nanoseconds: 1_000_000_000) }
            await group.next()
            group.cancelAll()
        }
    }

    public var currentFrame: PreviewFrame? {
        lock.lock()
        let json = latestJSON
        lock.unlock()
        return json.flatMap { try? JSONDecoder().decode(PreviewFrame.self, from: $0) }
    }

    /// Makes `frame` current and pushes it to every open page.
    public func publish(_ frame: PreviewFrame) {
        guard let json = try? JSONEncoder().encode(frame) else { return }
        publish(json: json, sequence: frame.sequence)
    }

    /// Makes a frame already encoded as JSON (without raw newlines, as JSONEncoder writes it) current and pushes
    /// it, so a frame that arrives encoded (from `dev`'s worker) is never decoded and encoded again.
    public func publish(json: Data, sequence: Int) {
        // One `data:` line per event: the JSON has no raw newlines (the encoder escapes them in strings).
        let event = Array("event: render\nid: \(sequence)\ndata: ".utf8) + Array(json) + Array("\n\n".utf8)
        lock.lock()
        latestJSON = json
        latestEvent = event
        let targets = Array(subscribers.values)
        lock.unlock()
        for continuation in targets { continuation.yield(event) }
    }

    /// Pushes a named event (`log`, `activity`) to every open page. Log lines are also kept (the last 500) for
    /// pages that open later.
    public func publish(event name: String, json: Data) {
        let event = Array("event: \(name)\ndata: ".utf8) + Array(json) + Array("\n\n".utf8)
        lock.lock()
        if name == "log" {
            recentLogs.append(event)
            if recentLogs.count > 500 { recentLogs.removeFirst(recentLogs.count - 500) }
        }
        let targets = Array(subscribers.values)
        lock.unlock()
        for continuation in targets { continuation.yield(event) }
    }
    private var recentLogs: [[UInt8]] = []

    /// A stream for one page: the current frame first, then every new one; nil when too many are open.
    private func subscribe() -> (AsyncStream<[UInt8]>, AsyncStream<[UInt8]>.Continuation)? {
        let id = UUID()
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(64))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.lock()
            self.subscribers[id] = nil
            self.lock.unlock()
        }
        lock.lock()
        guard subscribers.count < PreviewGuard.maxEventStreams else {
            lock.unlock()
            return nil
        }
        subscribers[id] = continuation
        // Tell the browser to retry quickly if the connection drops, then send what is current.
        continuation.yield(Array("retry: 500\n\n".utf8))
        if !latestEvent.isEmpty { continuation.yield(latestEvent) }
        if !recentLogs.isEmpty { continuation.yield(Array(recentLogs.joined())) }
        lock.unlock()
        return (stream, continuation)
    }

    /// A `ping` event every 4 s keeps idle connections (and proxies) from timing out, and tells a page the server
    /// still answers: one that hears nothing for three of them says so (a stopped server was shown as live).
    private func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 4_000_000_000)
            let targets = lock.withLock { Array(subscribers.values) }
            guard lock.withLock({ running }) else { return }
            for continuation in targets { continuation.yield(Array("event: ping\ndata: {}\n\n".utf8)) }
        }
    }

    /// How many pages are connected.
    public var subscriberCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return subscribers.count
    }
}

extension PreviewServer {
    /// The answer to an export of a large view, which the page holds only part of: what to run instead.
    static func partialDrawing(_ frame: PreviewFrame) -> Response? {
        guard let window = frame.window else { return nil }
        return PreviewGuard.reply(
            .conflict,
            "the view has \(window.components) components: the preview draws only the part near where the page is "
                + "scrolled; `hubhost render VIEW --format svg` draws it whole")
    }
}

/// A workbench request from the page, as the dev loop (or its worker) answers it.
public struct PreviewRequest: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case tap, inspect, edit, widths, scroll, story }
    public var kind: Kind
    public var indexPath: [Int] = []
    public var section: String = "body"
    /// The new component model (edit), as JSON text.
    public var model: String?
    public var widths: [Double]?
    /// Widths: the interactive view's width (nil: unchanged).
    public var width: Double?
    /// Scroll: the content y at the top of the page's view, and how much of the view the page shows (points).
    public var y: Double?
    public var height: Double?
    /// Scroll: the page's id, echoed in the frame that answers it.
    public var page: String?
    /// Story: the story to open on the gallery's canvas (nil: back to the gallery).
    public var story: StoryKey?

    public init(
        kind: Kind, indexPath: [Int] = [], section: String = "body", model: String? = nil, widths: [Double]? = nil,
        width: Double? = nil, y: Double? = nil, height: Double? = nil, page: String? = nil
    ) {
        self.width = width
        self.page = page
        self.y = y
        self.height = height
        self.kind = kind
        self.indexPath = indexPath
        self.section = section
        self.model = model
        self.widths = widths
    }

    /// What the dev loop says to it (on the loop's queue).
    public func answer(with loop: DevLoop) -> String {
        switch kind {
        case .tap: return loop.tap(indexPath: indexPath, section: section)
        case .inspect:
            guard let inspection = loop.inspect(indexPath: indexPath, section: section),
                let json = try? JSONEncoder().encode(inspection)
            else { return "null" }
            return String(decoding: json, as: UTF8.self)
        case .edit: return loop.edit(indexPath: indexPath, section: section, modelJSON: model ?? "") ?? "edited"
        case .widths:
            loop.setWidths(extra: widths, interactive: width)
            if loop.isWindowed && !(widths ?? []).isEmpty {
                return "not drawn at other widths: the view has more than \(DevLoop.windowedBodyCount) components "
                    + "(the preview draws the part near where it is scrolled); `hubhost render --width W` draws it whole"
            }
            let extra = loop.options.extraWidths.map(DevLoop.widthText).joined(separator: ", ")
            return "drawing at \(DevLoop.widthText(loop.options.viewport.width)), and beside it at [\(extra)]"
        case .scroll: return loop.scroll(toY: y ?? 0, pageHeight: height ?? 0, page: page)
        case .story: return loop.open(story: story)
        }
    }
}

/// Why the preview server could not start.
public struct PreviewServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Answers `Expect: 100-continue` with `100 Continue` as the request's head arrives, so a client that waits for it
/// sends its body at once: curl asks so for a large body and otherwise waited a second on every such POST. (Which
/// route takes the body, and whether the guard refuses it, is decided as for any request; a body refused unread is
/// skipped.)
final class ContinueAnswerer: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data),
            request.headerFields[.expect]?.lowercased() == "100-continue"
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}

/// Reads what the server library drops when it turns an HTTP/1 request into its own types (the version, the target's
/// form), as HTTP/1.1 says: an HTTP/1.0 request without `Connection: keep-alive` gets its connection closed after
/// the response (it stayed open until the idle timeout), and a target in absolute form (`GET http://host/path`)
/// names the server by its authority, not by the `Host` header (the library kept the header and dropped the
/// target's authority, so the guard checked a name the request did not use).
final class HTTP1RequestNormalizer: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        if head.version.major == 1 && head.version.minor == 0 && !head.isKeepAlive {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        if !head.uri.hasPrefix("/"), head.uri != "*", let authority = Self.authority(ofAbsoluteTarget: head.uri) {
            // The target's authority names the server, whatever the Host header says (RFC 9112, 3.2.2).
            head.headers.replaceOrAdd(name: "Host", value: authority)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// "host:port" of "http://host:port/path…", nil for anything else.
    static func authority(ofAbsoluteTarget target: String) -> String? {
        let lowered = target.lowercased()
        guard let schemeEnd = lowered.range(of: "://"), ["http", "https"].contains(lowered[..<schemeEnd.lowerBound])
        else { return nil }
        let rest = target[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.isEmpty ? nil : String(authority)
    }

    /// Put among the server library's extra handlers (which come after its conversion), it puts the normaliser
    /// before the conversion, where the HTTP/1 head is still whole, and leaves.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = NIOAny

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            if let codec = try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self) {
                try? pipeline.addHandler(HTTP1RequestNormalizer(), position: .before(codec.handler))
            }
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}

/// Closes a connection whose first request's head has not arrived within `seconds` of its opening. The idle
/// timeout is a minute (an open page's event stream and keep-alive connections rest that long), so without this
/// a few hundred connections that send nothing, or a header a byte at a time, would hold every place the server
/// has (`PreviewGuard.maxConnections`) and keep the developer's own page waiting.
final class FirstRequestDeadline: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let seconds: Int64
    private var deadline: Scheduled<Void>?
    private var headArrived = false

    init(seconds: Int64) { self.seconds = seconds }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startClock(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startClock(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headArrived, case .head = unwrapInboundIn(data) {
            headArrived = true
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    private func startClock(_ context: ChannelHandlerContext) {
        guard deadline == nil, !headArrived else { return }
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: .seconds(seconds)) { channel.close(promise: nil) }
    }
}

/// Says when the peer has closed its side of a connection.
final class PeerClosedWatcher: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    private let closed: @Sendable () -> Void

    init(_ closed: @escaping @Sendable () -> Void) { self.closed = closed }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { closed() }
        context.fireUserInboundEventTriggered(event)
    }
}

/// What a route knows of its request beyond the request: the connection it came on (an event stream ends as the
/// page's connection closes).
struct PreviewRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The port the server listens on, or the error its `run()` ended with, read by the task waiting for it.
private final class ListeningPort: @unchecked Sendable {
    private let lock = Lock()
    private var stored: (port: Int?, error: Error?) = (nil, nil)
    func set(port: Int?, error: Error?) { lock.withLock { stored = (port ?? stored.port, error ?? stored.error) } }
    var state: (port: Int?, error: Error?) { lock.withLock { stored } }
}

extension Request {
    /// The body of a request the guard let through (so at most `PreviewGuard.maxBodyBytes`).
    func bodyData() async throws -> Data {
        Data(try await body.collect(upTo: PreviewGuard.maxBodyBytes).readableBytesView)
    }

    /// A query parameter, percent-decoded.
    func query(_ name: String) -> String? { uri.queryParameters[Substring(name)].map(String.init) }
}
