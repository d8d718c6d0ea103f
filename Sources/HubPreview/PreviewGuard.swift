import Foundation
import HubCore
import HubHost
import Hummingbird

/// The checks every preview request passes before a route sees it.
///
/// The preview serves the user's view and accepts taps, so a web page from another site must not reach it: not by
/// DNS rebinding (a foreign name resolving to 127.0.0.1 — refused by the `Host` check, 421), nor by a cross-site
/// form or fetch (refused by the same-origin check on every POST, 403). POST bodies are JSON and bounded; the
/// number of open event streams is capped.
struct PreviewGuard: Sendable {
    static let maxBodyBytes = 64 << 10
    static let maxEventStreams = 32
    /// How long a new connection may take to send its first request's head (`FirstRequestDeadline`).
    static let firstRequestSeconds: Int64 = 10
    /// Connections open at once: past it the server accepts no more until one closes (the rest wait in the
    /// kernel's queue), so connections alone never use up the descriptors the dev loop needs (plugins, the file
    /// watcher, the worker's pipes). Half the descriptor limit, 64 to 512.
    static var maxConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 256 }
        return Int(max(64, min(512, limit.rlim_cur / 2)))
    }

    /// The address the server is bound to ("127.0.0.1", "::1", "0.0.0.0", a name…).
    let bindAddress: String

    /// The `host:port` values a request may carry for a server listening on `port`. Listening on every interface
    /// (`--host 0.0.0.0` or `::`), the machine's own addresses and name as well, read at each request (an address
    /// can change while `dev` runs): a browser elsewhere on the network names the machine so. A name another site
    /// controls still gets 421, which is what stops DNS rebinding; an address literal cannot be rebound.
    func allowedHosts(port: UInt16) -> Set<String> {
        var names: Set<String> = ["localhost", "127.0.0.1", bindAddress]
        if bindAddress.contains(":") { names.insert("[\(bindAddress)]") }
        if bindAddress == "::1" { names.insert("[::1]") }
        if MachineAddresses.isWildcard(bindAddress) {
            names.insert("[::1]")
            names.formUnion(MachineAddresses.interfaceAddresses())
            let name = MachineAddresses.hostName()
            if !name.isEmpty { names.insert(name) }
        }
        return Set(names.filter { !MachineAddresses.isWildcard($0) }.map { "\($0):\(port)" })
    }

    /// nil when `request` may go on; otherwise the response that refuses it.
    func refusal(of request: Request, port: UInt16) -> Response? {
        // HTTP/1's Host header is the request's authority here.
        guard let host = request.head.authority?.lowercased() else {
            return Self.reply(.badRequest, "missing Host header")
        }
        let allowed = allowedHosts(port: port)
        guard allowed.contains(host) else {
            return Self.reply(
                .misdirectedRequest, "this preview answers only for \(allowed.sorted().joined(separator: ", "))")
        }
        // A second Host: which one names the server would be ambiguous. (A target in absolute form, "GET
        // http://other/…", names it by its authority: `HTTP1RequestNormalizer` makes that the Host.)
        guard field("host", of: request) == nil else { return Self.reply(.badRequest, "more than one Host header") }
        // Browsers say where each request comes from. Another site's page may link to the preview (a navigation
        // of the whole tab to the page), but may not load anything from it: an <img> of /export.png?scale=8 costs
        // a core, event streams opened and dropped hold every place the page's own would take, and the page in
        // its frame would take that site's clicks as taps.
        if let site = field("sec-fetch-site", of: request), site == "cross-site" || site == "same-site",
            !(request.method == .get && request.uri.path == "/" && field("sec-fetch-mode", of: request) == "navigate"
                && field("sec-fetch-dest", of: request) == "document")
        {
            return Self.reply(.forbidden, "cross-site request (\(site)) for \(request.uri.path)")
        }
        guard request.method == .post else { return nil }
        // Browsers send Origin on every cross-origin POST (and Sec-Fetch-Site on every request they make).
        if let origin = request.headers[.origin]?.lowercased() {
            guard origin == "http://\(host)" else {
                return Self.reply(.forbidden, "cross-origin request from \(origin)")
            }
        } else if let site = field("sec-fetch-site", of: request) {
            guard site == "same-origin" || site == "none" else {
                return Self.reply(.forbidden, "cross-site request (\(site))")
            }
        } else {
            return Self.reply(.forbidden, "POST needs a same-origin Origin or Sec-Fetch-Site header")
        }
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type == "application/json" || type.hasPrefix("application/json;") else {
            return Self.reply(.unsupportedMediaType, "expected Content-Type: application/json")
        }
        guard let length = request.headers[.contentLength].flatMap({ Int($0) }) else {
            return Self.reply(.lengthRequired, "POST needs a Content-Length")
        }
        guard length <= Self.maxBodyBytes else {
            return Self.reply(.contentTooLarge, "body of \(length) bytes, over the limit of \(Self.maxBodyBytes)")
        }
        return nil
    }

    /// The value of header `name` (lower case), in lower case.
    private func field(_ name: String, of request: Request) -> String? {
        request.headers.first(where: { $0.name.canonicalName == name })?.value.lowercased()
    }

    /// A refusal (or any short answer): `message` as plain text.
    static func reply(_ status: HTTPResponse.Status, _ message: String) -> Response {
        answer(status, type: "text/plain; charset=utf-8", Data((message + "\n").utf8))
    }

    /// An answer of `type` with `body`, and any further `headers`.
    static func answer(
        _ status: HTTPResponse.Status = .ok, type: String, _ body: Data, headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = type
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A request's body as a JSON object; otherwise what is wrong with it (its JSON error, or what it is instead)
    /// and what was `expected`.
    static func bodyObject(_ body: Data, expected: String) -> Result<JSONObject, TapError> {
        let value: JSONValue
        do { value = try JSONValue.parse(body) } catch {
            return .failure(TapError("body: not valid JSON (\(error)); expected \(expected)"))
        }
        guard let object = value.objectValue else {
            return .failure(TapError("body: expected \(expected), found \(value.typeDescription)"))
        }
        return .success(object)
    }

    /// A tap request's body, validated field by field.
    struct Tap: Equatable {
        var indexPath: [Int]
        var section: String

        /// Parses `{"indexPath": [i, …], "section": "body"|"header"|"overlay"}`; the error names the field.
        static func parse(_ body: Data) -> Result<Tap, TapError> {
            let object: JSONObject
            switch bodyObject(body, expected: "{\"indexPath\": [int, …]}") {
            case .success(let parsed): object = parsed
            case .failure(let error): return .failure(error)
            }
            var section = "body"
            if let value = object["section"] {
                guard let text = value.stringValue, ["body", "header", "overlay", "overlays"].contains(text) else {
                    return .failure(
                        TapError(
                            "section: expected \"body\", \"header\" or \"overlay\" (or \"overlays\"), found \(value.typeDescription)"
                        ))
                }
                section = text == "overlays" ? "overlay" : text
            }
            guard let items = object["indexPath"]?.arrayValue else {
                return .failure(TapError("indexPath: expected an array of non-negative integers"))
            }
            guard items.count <= InputLimits.indexPathDepth else {
                return .failure(TapError("indexPath: \(items.count) levels, more than \(InputLimits.indexPathDepth)"))
            }
            guard !items.isEmpty || section == "header" else { return .failure(TapError("indexPath: empty")) }
            var path: [Int] = []
            for (position, item) in items.enumerated() {
                guard case .number(let n) = item, n >= 0, n == n.rounded(), n < Double(InputLimits.index) else {
                    return .failure(
                        TapError(
                            "indexPath[\(position)]: expected a non-negative integer, found \(item.typeDescription)"))
                }
                path.append(Int(n))
            }
            return .success(Tap(indexPath: path, section: section))
        }
    }

    /// What `POST /widths` changes: the widths drawn beside the view, the interactive view's width, or both.
    struct WidthsChange: Equatable {
        var extra: [Double]?
        var interactive: Double?
    }

    /// `{"widths": [320, 768]}`: up to 6 widths from 1 to 4096 points drawn beside the view, as `--widths` takes;
    /// `{"width": 414}`: the interactive view's width, as `--width` takes. Either or both.
    static func parseWidths(_ body: Data) -> Result<WidthsChange, TapError> {
        let expected = "{\"widths\": [number, …]} or {\"width\": number}"
        let object: JSONObject
        switch bodyObject(body, expected: expected) {
        case .success(let parsed): object = parsed
        case .failure(let error): return .failure(error)
        }
        guard object["widths"] != nil || object["width"] != nil else {
            return .failure(TapError("widths: expected \(expected)"))
        }
        var change = WidthsChange()
        if let value = object["width"] {
            guard case .number(let n) = value, InputLimits.containerWidths.contains(n) else {
                return .failure(TapError("width: expected a number from 1 to 4096, found \(value.typeDescription)"))
            }
            change.interactive = n
        }
        guard let value = object["widths"] else { return .success(change) }
        guard let items = value.arrayValue else {
            return .failure(TapError("widths: expected an array of numbers, found \(value.typeDescription)"))
        }
        guard items.count <= 6 else { return .failure(TapError("widths: at most 6")) }
        var widths: [Double] = []
        for (position, item) in items.enumerated() {
            guard case .number(let n) = item, InputLimits.containerWidths.contains(n) else {
                return .failure(
                    TapError("widths[\(position)]: expected a number from 1 to 4096, found \(item.typeDescription)"))
            }
            widths.append(n)
        }
        change.extra = widths
        return .success(change)
    }

    /// `{"y": 1200, "height": 900, "page": "k3x9"}`: the content y at the top of the page's view and how much it
    /// shows, in points, and the page's id (optional; at most 64 letters and digits).
    static func parseScroll(_ body: Data) -> Result<(y: Double, height: Double, page: String?), TapError> {
        let object: JSONObject
        switch bodyObject(body, expected: "{\"y\": number, \"height\": number}") {
        case .success(let parsed): object = parsed
        case .failure(let error): return .failure(error)
        }
        var values: [Double] = []
        for (key, range) in [("y", 0.0...1e9), ("height", 1.0...100_000.0)] {
            guard case .number(let n)? = object[key], range.contains(n) else {
                return .failure(
                    TapError(
                        "\(key): expected a number from \(Int(range.lowerBound)) to \(Int(range.upperBound)), found "
                            + (object[key]?.typeDescription ?? "nothing")))
            }
            values.append(n)
        }
        var page: String?
        if let value = object["page"] {
            guard let text = value.stringValue, text.count <= 64,
                text.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) })
            else { return .failure(TapError("page: expected up to 64 lower-case letters and digits")) }
            page = text
        }
        return .success((values[0], values[1], page))
    }

    /// `{"component": "ns:name", "story": "long title"}` opens that story on the canvas; `{}` (or a null
    /// component) goes back to the gallery. Names come from plugins, so they are bounded, not checked further.
    static func parseStory(_ body: Data) -> Result<StoryKey?, TapError> {
        let object: JSONObject
        switch bodyObject(body, expected: "{\"component\": \"ns:name\", \"story\": \"name\"} or {}") {
        case .success(let parsed): object = parsed
        case .failure(let error): return .failure(error)
        }
        let absent = { (key: String) in object[key] == nil || object[key] == .null }
        if absent("component") && absent("story") { return .success(nil) }
        var texts: [String] = []
        // A story may be named "" (a plugin may declare one so); a component may not.
        for (key, least) in [("component", 1), ("story", 0)] {
            guard let text = object[key]?.stringValue, text.utf8.count >= least, text.utf8.count <= 1024 else {
                return .failure(
                    TapError(
                        "\(key): expected a name (text of \(least) to 1024 bytes), found "
                            + (object[key]?.typeDescription ?? "nothing")))
            }
            texts.append(text)
        }
        return .success(StoryKey(component: texts[0], story: texts[1]))
    }

    /// An edit's model: the "model" member, a JSON object (as text or as an object).
    static func parseModel(_ body: Data) -> Result<String, TapError> {
        let object: JSONObject
        switch bodyObject(body, expected: "{\"model\": {…}}") {
        case .success(let parsed): object = parsed
        case .failure(let error): return .failure(error)
        }
        guard let value = object["model"] else { return .failure(TapError("model: missing")) }
        if let text = value.stringValue { return .success(text) }
        if value.objectValue != nil { return .success(value.jsonText) }
        return .failure(TapError("model: expected a component model (a JSON object), found \(value.typeDescription)"))
    }

    struct TapError: Error, Equatable {
        var message: String
        init(_ message: String) { self.message = message }
    }
}
