import FlyingFox
import FlyingSocks
import Foundation

/// The live preview's HTTP server (FlyingFox), loopback only unless told otherwise.
///
/// Routes: `GET /` the page; `GET /frame` the current frame as JSON; `GET /events` server-sent events, one
/// `render` event per new frame (the current one first); `POST /tap` with `{"indexPath": [i, …]}` taps that
/// component.
///
/// # Thread safety
/// `publish` may be called from any thread; taps are handed to `onTap` on the server's tasks.
public final class PreviewServer: @unchecked Sendable {
    public let bindAddress: String
    public let requestedPort: UInt16
    /// Told about a click in the page; returns what happened, for the page's log.
    public var onTap: @Sendable (_ indexPath: [Int], _ section: String) -> String = { _, _ in "no handler" }

    private var server: HTTPServer?
    private let lock = NSLock()
    private var latest: PreviewFrame?
    private var latestEvent: [UInt8] = []
    private var subscribers: [UUID: AsyncStream<[UInt8]>.Continuation] = [:]

    public init(bindAddress: String = "127.0.0.1", port: UInt16 = 0) {
        self.bindAddress = bindAddress
        self.requestedPort = port
    }

    /// Starts listening and returns the port (useful with port 0, which picks a free one).
    public func start() async throws -> UInt16 {
        // IPv4 loopback by default (FlyingFox's `.loopback` is IPv6 ::1, which "127.0.0.1" URLs do not reach).
        let ip = bindAddress == "localhost" ? "127.0.0.1" : bindAddress
        let address: any SocketAddress = ip.contains(":") ? try .inet6(ip6: ip, port: requestedPort)
                                                          : try .inet(ip4: ip, port: requestedPort)
        let server = HTTPServer(address: address, timeout: 3600, logger: .disabled)
        await server.appendRoute("GET /") { _ in
            HTTPResponse(statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                         body: Data(PreviewPage.html.utf8))
        }
        await server.appendRoute("GET /frame") { [weak self] _ in
            let frame = self?.currentFrame
            let data = (try? JSONEncoder().encode(frame)) ?? Data("null".utf8)
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: data)
        }
        await server.appendRoute("GET /events") { [weak self] _ in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            return HTTPResponse(statusCode: .ok,
                                headers: [.contentType: "text/event-stream", .init("Cache-Control"): "no-cache"],
                                body: HTTPBodySequence(from: EventBytes(stream: self.subscribe())))
        }
        await server.appendRoute("POST /tap") { [weak self] request in
            let body = try await request.bodyData
            struct Tap: Decodable { var indexPath: [Int]; var section: String? }
            guard let tap = try? JSONDecoder().decode(Tap.self, from: body) else {
                return HTTPResponse(statusCode: .badRequest, body: Data("expected {\"indexPath\": [int]}".utf8))
            }
            let result = self?.onTap(tap.indexPath, tap.section ?? "body") ?? "gone"
            let reply = try JSONSerialization.data(withJSONObject: ["indexPath": tap.indexPath, "result": result])
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: reply)
        }
        self.server = server
        Task { try? await server.run() }
        try await server.waitUntilListening(timeout: 10)
        Task { [weak self] in await self?.heartbeat() }
        if case .ip4(_, let port)? = await server.listeningAddress { return port }
        if case .ip6(_, let port)? = await server.listeningAddress { return port }
        return requestedPort
    }

    public func stop() async {
        let all = lock.withLock {
            defer { subscribers = [:] }
            return Array(subscribers.values)
        }
        for continuation in all { continuation.finish() }
        await server?.stop(timeout: 1)
    }

    public var currentFrame: PreviewFrame? {
        lock.lock(); defer { lock.unlock() }
        return latest
    }

    /// Makes `frame` current and pushes it to every open page.
    public func publish(_ frame: PreviewFrame) {
        guard let json = try? JSONEncoder().encode(frame) else { return }
        // One `data:` line per event: the JSON has no raw newlines (the encoder escapes them in strings).
        let event = Array("event: render\nid: \(frame.sequence)\ndata: ".utf8) + Array(json) + Array("\n\n".utf8)
        lock.lock()
        latest = frame
        latestEvent = event
        let targets = Array(subscribers.values)
        lock.unlock()
        for continuation in targets { continuation.yield(event) }
    }

    /// A stream for one page: the current frame first, then every new one.
    private func subscribe() -> AsyncStream<[UInt8]> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(8))
        lock.lock()
        subscribers[id] = continuation
        // Tell the browser to retry quickly if the connection drops, then send what is current.
        continuation.yield(Array("retry: 500\n\n".utf8))
        if !latestEvent.isEmpty { continuation.yield(latestEvent) }
        lock.unlock()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.lock(); self.subscribers[id] = nil; self.lock.unlock()
        }
        return stream
    }

    /// A comment line every 10 s keeps idle connections (and proxies) from timing out.
    private func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 10_000_000_000)
            let targets = lock.withLock { Array(subscribers.values) }
            if server == nil { return }
            for continuation in targets { continuation.yield(Array(": ping\n\n".utf8)) }
        }
    }

    /// How many pages are connected.
    public var subscriberCount: Int {
        lock.lock(); defer { lock.unlock() }
        return subscribers.count
    }
}

/// Server-sent event bytes as FlyingFox's body sequence wants them: each event one buffer, sent as one chunk.
struct EventBytes: AsyncBufferedSequence, Sendable {
    typealias Element = UInt8
    let stream: AsyncStream<[UInt8]>

    func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator()) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        var base: AsyncStream<[UInt8]>.Iterator
        var pending: [UInt8] = []

        mutating func next() async throws -> UInt8? {
            if pending.isEmpty { pending = await base.next() ?? [] }
            return pending.isEmpty ? nil : pending.removeFirst()
        }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            if !pending.isEmpty { defer { pending = [] }; return pending }
            return await base.next()
        }
    }
}
