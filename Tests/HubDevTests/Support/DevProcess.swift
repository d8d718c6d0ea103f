import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real `hubhost dev` process on a temp folder, and an HTTP client for its preview server.
final class DevProcess {
    let process = Process()
    let output: URL
    private(set) var port: UInt16 = 0

    /// Starts `hubhost dev VIEW --plugins PLUGINS --port 0 …` and waits until it serves.
    /// `view` nil: `hubhost dev --gallery`. `fixedPort`: a free port chosen here instead of `--port 0`, as people
    /// run it (the default port is fixed).
    /// `directory`: where it runs (nil: this process's working directory). `port`: that port (a restart on the
    /// port an earlier one served).
    init(
        view: URL?, plugins: URL, cache: URL, extra: [String] = [], fixedPort: Bool = false, directory: URL? = nil,
        port: UInt16? = nil
    ) throws {
        output = cache.appendingPathComponent("dev-\(UUID().uuidString.prefix(6)).log")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.executableURL = TestSupport.hubhost
        if let directory { process.currentDirectoryURL = directory }
        process.arguments =
            [
                "dev", view?.path ?? "--gallery", "--plugins", plugins.path, "--port",
                try port.map(String.init) ?? (fixedPort ? String(Self.freePort()) : "0"), "--plugin-cache",
                cache.path,
                "--quiet-ms", "100",
            ] + extra
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let served = TestSupport.waitUntil(timeout: 60) {
            // "serving http://127.0.0.1:PORT/" (or "http://[::1]:PORT/" with --host ::1)
            guard let line = self.lines.first(where: { $0.contains("serving http://") }),
                let at = line.range(of: "serving http://"),
                let url = line[at.upperBound...].split(separator: "/").first,
                let port = UInt16(url.split(separator: ":").last ?? "")
            else { return !self.process.isRunning }
            self.port = port
            return true
        }
        guard served, port != 0 else {
            stop()
            throw TestFailure("hubhost dev did not start:\n\(log)")
        }
    }

    deinit { stop() }

    /// A port nothing listens on now (the kernel's pick for port 0, released).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestFailure("bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Everything the process printed so far.
    var log: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
    var lines: [String] { log.split(separator: "\n").map(String.init) }

    /// The current frame (`GET /frame`).
    func frame() throws -> Frame {
        let (status, body) = try HTTP.request(port: port, "GET", "/frame")
        guard status == 200 else { throw TestFailure("GET /frame: \(status)") }
        return try JSONDecoder().decode(Frame.self, from: body)
    }

    /// Waits for a frame satisfying `condition` (polling `GET /frame`); returns it, or nil after `timeout`.
    func waitForFrame(timeout: Double = 30, _ condition: (Frame) -> Bool) -> Frame? {
        var found: Frame?
        _ = TestSupport.waitUntil(timeout: timeout) {
            guard process.isRunning, let frame = try? frame(), condition(frame) else { return false }
            found = frame
            return true
        }
        return found
    }

    func tap(_ indexPath: [Int]) throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["indexPath": indexPath])
        let (_, reply) = try HTTP.request(port: port, "POST", "/tap", body: body)
        return String(decoding: reply, as: UTF8.self)
    }

    /// The part of `PreviewFrame` the tests read.
    struct Frame: Decodable {
        struct Problem: Decodable {
            var kind: String
            var message: String
        }
        struct Box: Decodable {
            var indexPath: [Int]
            var id: String
            var component: String
        }
        var sequence: Int
        var html: String
        var cause: String
        var problems: [Problem]
        var boxes: [Box]
        var settledAt: Double?
        var renderedAt: Double
        var width: Double
        /// The interactive view's width (the gallery's sheet is wider).
        var viewWidth: Double?
        var height: Double
        struct Window: Decodable {
            var top: Double
            var bottom: Double
            var components: Int
        }
        /// A large view's drawn part (nil: all of it).
        var window: Window?
        struct Extra: Decodable { var width: Double }
        /// The view at the page's other widths.
        var extras: [Extra]?
        struct PluginRow: Decodable {
            var file: String
            var version: String?
            var state: String
            var reason: String?
        }
        /// The plugins panel.
        var plugins: [PluginRow]?
        struct StoryKey: Decodable, Equatable {
            var component: String
            var story: String
        }
        struct StoryPlace: Decodable {
            var component: String
            var story: String
            var width: Double
            var x: Double, y: Double, w: Double, h: Double
        }
        /// Gallery mode: where each story is on the sheet, and the story open on its canvas.
        var stories: [StoryPlace]?
        var story: StoryKey?
    }

    /// POSTs `object` as JSON to `path` and returns the reply's text.
    @discardableResult
    func post(_ path: String, _ object: Any) throws -> String {
        let body = try JSONSerialization.data(withJSONObject: object)
        let (_, reply) = try HTTP.request(port: port, "POST", path, body: body)
        return String(decoding: reply, as: UTF8.self)
    }
}

/// A minimal HTTP/1.1 client over a socket: enough for the preview's routes (no URLSession needed).
enum HTTP {
    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw TestFailure("connect to port \(port) failed")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func send(_ fd: Int32, _ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// One request with `Connection: close`, as the preview's own page makes it (its Host, and for a body a JSON
    /// content type and its Origin) unless `headers` says otherwise (a nil value leaves a header out); returns the
    /// status and the (de-chunked) body.
    static func request(
        port: UInt16, _ method: String, _ path: String, body: Data = Data(),
        headers: [String: String?] = [:]
    ) throws -> (Int, Data) {
        var fields: [(String, String?)] = [("Host", "127.0.0.1:\(port)"), ("Connection", "close")]
        if !body.isEmpty {
            fields += [
                ("Content-Type", "application/json"), ("Origin", "http://127.0.0.1:\(port)"),
                ("Content-Length", "\(body.count)"),
            ]
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            fields.append((name, value))
        }
        var head = "\(method) \(path) HTTP/1.1\r\n"
        for case (let name, let value?) in fields { head += "\(name): \(value)\r\n" }
        return try exchange(port: port, Data((head + "\r\n").utf8) + body, path: path)
    }

    /// Everything the server sends until it closes the connection (or the read times out).
    static func readToEnd(_ fd: Int32) -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return received }
            received.append(contentsOf: buffer[0..<n])
        }
    }

    /// Sends `request` as it is and returns the whole response as text, head included (for what `request` does not
    /// show: headers, a body after HEAD).
    static func raw(port: UInt16, _ request: String) throws -> String {
        let fd = try connect(port: port)
        defer { close(fd) }
        send(fd, Data(request.utf8))
        return String(decoding: readToEnd(fd), as: UTF8.self)
    }

    /// Sends raw request bytes and reads the response.
    static func exchange(port: UInt16, _ bytes: Data, path: String) throws -> (Int, Data) {
        let fd = try connect(port: port)
        defer { close(fd) }
        send(fd, bytes)
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
            if let (status, body) = parse(response) { return (status, body) }
        }
        guard let parsed = parse(response, atEnd: true) else { throw TestFailure("bad HTTP response to \(path)") }
        return parsed
    }

    /// Parses a complete response (Content-Length or chunked), or nil when more bytes are needed.
    static func parse(_ response: Data, atEnd: Bool = false) -> (Int, Data)? {
        guard let split = response.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: response[..<split.lowerBound], as: UTF8.self).lowercased()
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = response[split.upperBound...]
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
            return body.count >= length ? (status, Data(body.prefix(length))) : nil
        }
        if head.contains("transfer-encoding: chunked") {
            var events = ChunkedDecoder()
            let (data, finished) = events.feed(Data(body))
            return finished || atEnd ? (status, data) : nil
        }
        return atEnd ? (status, Data(body)) : nil
    }
}

/// Decodes a chunked transfer-encoded stream incrementally.
struct ChunkedDecoder {
    private var buffer = Data()
    /// Feeds bytes; returns the payload bytes decoded so far and whether the last chunk arrived.
    mutating func feed(_ bytes: Data) -> (Data, Bool) {
        buffer.append(bytes)
        var out = Data()
        while let lineEnd = buffer.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: buffer[buffer.startIndex..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { return (out, false) }
            if size == 0 { return (out, true) }
            let start = lineEnd.upperBound
            guard buffer.distance(from: start, to: buffer.endIndex) >= size + 2 else { break }
            let end = buffer.index(start, offsetBy: size)
            out.append(buffer[start..<end])
            buffer = Data(buffer[buffer.index(end, offsetBy: 2)...])
        }
        return (out, false)
    }
}

/// Reads server-sent events from `GET /events` on a background thread.
final class EventStreamReader: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var events: [String] = []
    private var thread: Thread?

    init(port: UInt16) throws {
        fd = try HTTP.connect(port: port)
        HTTP.send(fd, Data("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8))
        let thread = Thread { [self] in readLoop() }
        self.thread = thread
        thread.start()
    }

    /// The `data:` payloads of the `render` events received so far.
    var renderEvents: [String] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    private func readLoop() {
        var raw = Data()
        var decoder = ChunkedDecoder()
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        var headerDone = false
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            raw.append(contentsOf: buffer[0..<n])
            if !headerDone {
                guard let split = raw.range(of: Data("\r\n\r\n".utf8)) else { continue }
                headerDone = true
                raw = Data(raw[split.upperBound...])
            }
            let (payload, _) = decoder.feed(raw)
            raw = Data()
            text += String(decoding: payload, as: UTF8.self)
            // Events end with a blank line.
            while let end = text.range(of: "\n\n") {
                let event = String(text[..<end.lowerBound])
                text = String(text[end.upperBound...])
                if event.contains("event: render"),
                    let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") })
                {
                    lock.lock()
                    events.append(String(data.dropFirst(6)))
                    lock.unlock()
                }
            }
        }
        Glibc.close(fd)
    }
}
