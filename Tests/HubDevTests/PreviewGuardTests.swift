import Foundation
import Testing

/// The preview server against requests a hostile web page or a broken client could make, on a real `hubhost dev`
/// process: foreign Host names (DNS rebinding), cross-origin posts, wrong content types, oversized bodies,
/// malformed taps, too many event streams. None may crash it; each gets its own status and a message.
@Suite("Preview request guard", .serialized)
struct PreviewGuardTests {
    final class Preview {
        let root = TestSupport.temporaryDirectory("guard")
        let dev: DevProcess

        init() throws {
            let plugins = root.appendingPathComponent("plugins")
            try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
            let view = root.appendingPathComponent("view.json")
            try """
            {"header": {"id": "h", "component": {"id": "swatch:label"}, "text": {"title": "Header"}},
             "body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "First"}}]}
            """.write(to: view, atomically: true, encoding: .utf8)
            try TestSupport.installPlugin(
                "swatch.c", at: plugins.appendingPathComponent("libswatch.so"),
                defines: ["SWATCH_COLOR=0xFF0000FFu", "PLUGIN_VERSION=\"1\""])
            dev = try DevProcess(view: view, plugins: plugins, cache: root.appendingPathComponent("cache"))
        }

        deinit {
            dev.stop()
            try? FileManager.default.removeItem(at: root)
        }

        func post(_ body: String, headers: [String: String?] = [:]) throws -> (Int, String) {
            let (status, reply) = try HTTP.request(
                port: dev.port, "POST", "/tap", body: Data(body.utf8), headers: headers)
            return (status, String(decoding: reply, as: UTF8.self))
        }

        /// The taps the swatch counted so far, from the drawing.
        func taps() throws -> Int {
            let html = try dev.frame().html
            guard let range = html.range(of: "First taps:") else { throw TestFailure("no tap counter in the frame") }
            return Int(html[range.upperBound...].prefix(while: \.isNumber)) ?? -1
        }
    }

    @Test func foreignHostNamesAreMisdirectedOnEveryRoute() throws {
        let preview = try Preview()
        let port = preview.dev.port
        for path in ["/", "/frame", "/events"] {
            let (status, body) = try HTTP.request(port: port, "GET", path, headers: ["Host": "evil.example:\(port)"])
            #expect(status == 421, "\(path)")
            #expect(String(decoding: body, as: UTF8.self).contains("answers only for"))
            #expect(try HTTP.request(port: port, "GET", path, headers: ["Host": "127.0.0.1:1"]).0 == 421)
        }
        #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Host": nil]).0 == 400)
        #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Host": "localhost:\(port)"]).0 == 200)
        #expect(try preview.post(#"{"indexPath": [0]}"#, headers: ["Host": "evil.example:\(port)"]).0 == 421)
        #expect(try preview.taps() == 0)
    }

    @Test func postsMustBeSameOriginJSONWithABoundedBody() throws {
        let preview = try Preview()
        let port = preview.dev.port
        let tap = #"{"indexPath": [0]}"#
        #expect(try preview.post(tap, headers: ["Origin": "http://evil.example"]).0 == 403)
        #expect(try preview.post(tap, headers: ["Origin": "null"]).0 == 403)
        #expect(try preview.post(tap, headers: ["Origin": nil, "Sec-Fetch-Site": "cross-site"]).0 == 403)
        #expect(try preview.post(tap, headers: ["Origin": nil]).0 == 403)
        #expect(try preview.post(tap, headers: ["Content-Type": "text/plain"]).0 == 415)
        let huge = #"{"indexPath": [0], "pad": ""# + String(repeating: "x", count: 70_000) + #""}"#
        #expect(try preview.post(huge).0 == 413)
        #expect(try preview.taps() == 0, "no refused request tapped")
        // What the page itself sends goes through, by Origin or by Sec-Fetch-Site.
        #expect(try preview.post(tap).0 == 200)
        #expect(try preview.post(tap, headers: ["Origin": nil, "Sec-Fetch-Site": "same-origin"]).0 == 200)
        #expect(
            try preview.post(tap, headers: ["Origin": "http://localhost:\(port)", "Host": "localhost:\(port)"]).0 == 200
        )
        #expect(TestSupport.waitUntil { (try? preview.taps()) == 3 })
    }

    @Test(arguments: [
        (#"{"indexPath": [-3]}"#, "indexPath[0]: expected a non-negative integer, found -3"),
        (#"{"indexPath": [0, -1]}"#, "indexPath[1]: expected a non-negative integer, found -1"),
        (#"{"indexPath": [1.5]}"#, "indexPath[0]: expected a non-negative integer, found 1.5"),
        (#"{"indexPath": [1e300]}"#, "indexPath[0]: expected a non-negative integer"),
        (#"{"indexPath": ["0"]}"#, #"indexPath[0]: expected a non-negative integer, found "0""#),
        (#"{"indexPath": []}"#, "indexPath: empty"),
        (#"{"indexPath": 0}"#, "indexPath: expected an array of non-negative integers"),
        (#"{"indexPath": [0], "section": "footer"}"#, #"section: expected "body", "header" or "overlay""#),
        (#"[0]"#, #"body: expected {"indexPath": [int, …]}, found an array"#),
        (#"{"indexPath": [0]"#, "body: not valid JSON (line 1, column 18"),
        (
            String(repeating: "[", count: 600),
            "body: not valid JSON (line 1, column 514: nested deeper than 512 levels)"
        ),
        (
            #"{"indexPath": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}"#,
            "indexPath: 65 levels, more than 64"
        ),
    ])
    func malformedTapsAreRefusedNamingTheFieldAndTheServerLives(body: String, message: String) throws {
        let preview = try Preview()
        let (status, reply) = try preview.post(body)
        #expect(status == 400)
        #expect(reply.contains(message), "\(reply)")
        #expect(preview.dev.process.isRunning)
        #expect(try HTTP.request(port: preview.dev.port, "GET", "/frame").0 == 200)
    }

    /// The page's widths take what `--widths` and `--width` take (1 to 4096), and the server names the one that is not a width
    /// (the page dropped widths under 100 and sent none); the favicon a browser asks for is answered, not a 404.
    @Test func widthsAreCheckedAsTheCommandLineChecksThemAndTheFaviconIsAnswered() throws {
        let preview = try Preview()
        let (status, reply) = try HTTP.request(
            port: preview.dev.port, "POST", "/widths", body: Data(#"{"widths": [80, 0]}"#.utf8))
        #expect(status == 400 && String(decoding: reply, as: UTF8.self).contains("widths[1]: expected a number from 1"))
        _ = try preview.dev.post("/widths", ["widths": [80]])
        #expect(preview.dev.waitForFrame { $0.extras?.map(\.width) == [80] } != nil, "\(preview.dev.log)")
        // The interactive view's width, as `--width` takes it.
        let (refused, why) = try HTTP.request(
            port: preview.dev.port, "POST", "/widths", body: Data(#"{"width": 5000}"#.utf8))
        #expect(
            refused == 400 && String(decoding: why, as: UTF8.self).contains("width: expected a number from 1 to 4096"))
        _ = try preview.dev.post("/widths", ["width": 414])
        #expect(
            preview.dev.waitForFrame { $0.width == 414 && $0.extras?.map(\.width) == [80] } != nil,
            "\(preview.dev.log)")
        #expect(try HTTP.request(port: preview.dev.port, "GET", "/favicon.ico").0 == 204)
    }

    /// Saving the view file replaces the page's edits (they live in memory only): said, not silent.
    @Test func editsReplacedBySavingTheFileAreSaid() throws {
        let preview = try Preview()
        let edited: [String: Any] = ["id": "a", "component": ["id": "swatch:swatch"], "text": ["title": "Edited"]]
        _ = try preview.dev.post("/edit", ["section": "body", "indexPath": [0], "model": edited])
        #expect(preview.dev.waitForFrame { $0.html.contains("Edited") } != nil, "\(preview.dev.log)")
        try """
        {"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "Saved"}}]}
        """.write(to: preview.root.appendingPathComponent("view.json"), atomically: true, encoding: .utf8)
        let saved = preview.dev.waitForFrame {
            $0.html.contains("Saved") && $0.problems.contains { $0.message.contains("edits made in the page") }
        }
        #expect(saved != nil, "\(preview.dev.log)")
    }

    @Test func tapsOnMissingComponentsAndTheHeaderAreAnswered() throws {
        let preview = try Preview()
        let (status, reply) = try preview.post(#"{"indexPath": [999999, 3]}"#)
        #expect(status == 404 && reply.contains("the body has 1 component"), "\(reply)")
        #expect(try preview.post(#"{"indexPath": [], "section": "header"}"#).0 == 200)
        #expect(preview.dev.process.isRunning)
    }

    /// Requests any web page can make the developer's browser send to a loopback port (an `<img>` with a 300 KB
    /// query string, a long header, a POST body the server refuses unread) are refused or skipped as they come. The
    /// preview's first server spent about 40 s of both cores on two such requests and answered nothing meanwhile.
    @Test func oversizedRequestsAndUnreadBodiesDoNotHoldTheServer() throws {
        let preview = try Preview()
        let port = preview.dev.port
        let started = Date()
        let long = String(repeating: "a", count: 300_000)
        for request in [
            "GET /?x=\(long) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
            "GET /?x=\(long) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
            "GET /frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Pad: \(long)\r\n\r\n",
        ] {
            let (status, _) = try HTTP.exchange(port: port, Data(request.utf8), path: "an oversized head")
            #expect(status == 400)
        }
        // A body the guard refuses without reading, then a second request on the same connection: the body is
        // skipped, not read as the next request's line.
        let body = String(repeating: "b", count: 1_000_000)
        let pipelined =
            "POST /tap HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            + "GET /frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let fd = try HTTP.connect(port: port)
        defer { close(fd) }
        HTTP.send(fd, Data(pipelined.utf8))
        let text = String(decoding: HTTP.readToEnd(fd), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 413"), "\(text.prefix(300))")
        #expect(text.contains("HTTP/1.1 200"), "\(text.prefix(300))")
        #expect(text.contains("\"sequence\""), "the frame answered the second request")
        // The server answers at once: no core is still busy with what came before.
        #expect(try HTTP.request(port: port, "GET", "/frame").0 == 200)
        #expect(Date().timeIntervalSince(started) < 10, "the server was held \(Date().timeIntervalSince(started)) s")
        #expect(try preview.taps() == 0)
    }

    /// Another site's page may link to the preview, but not load from it: an <img> of /export.png?scale=8 or
    /// event streams opened and dropped in a loop (both from any page the developer visits) cost a core or the
    /// page's own streams. Browsers name where each request comes from; tools that do not (curl) are served.
    @Test func anotherSitesPageCanLinkToThePreviewButNotLoadFromIt() throws {
        let preview = try Preview()
        let port = preview.dev.port
        for site in ["cross-site", "same-site"] {
            for path in ["/events", "/export.png?scale=8", "/frame", "/export.svg", "/inspect?path=0"] {
                let (status, body) = try HTTP.request(
                    port: port, "GET", path, headers: ["Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors"])
                #expect(status == 403, "\(site) \(path)")
                #expect(String(decoding: body, as: UTF8.self).contains("cross-site request (\(site))"))
            }
            // A link followed to the page is a navigation: it opens.
            let headers = ["Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"]
            #expect(try HTTP.request(port: port, "GET", "/", headers: headers).0 == 200)
            #expect(try HTTP.request(port: port, "GET", "/frame", headers: headers).0 == 403)
            // Not into a frame of that site's page, where its clicks would tap the view.
            let framed = ["Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"]
            #expect(try HTTP.request(port: port, "GET", "/", headers: framed).0 == 403)
        }
        // And the page tells the browser never to show it in another page's frame.
        let page = try HTTP.raw(port: port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            .lowercased()
        #expect(page.contains("content-security-policy: frame-ancestors 'none'"), "\(page.prefix(400))")
        for site in ["same-origin", "none"] {
            #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Sec-Fetch-Site": site]).0 == 200)
        }
        // Which host a request names must be plain: one Host header.
        let twoHosts =
            "GET /frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
        #expect(try HTTP.exchange(port: port, Data(twoHosts.utf8), path: "two hosts").0 == 400)
    }

    /// HEAD (`curl -I`, link checkers) gets what GET gets but the body: the status, the headers and the body's
    /// length; the guard applies to it as to GET. The event stream does not answer HEAD (it would hold a place).
    @Test func headGetsTheStatusAndHeadersOfAGet() throws {
        let preview = try Preview()
        let port = preview.dev.port
        func exchange(_ request: String) throws -> String { try HTTP.raw(port: port, request) }
        for path in ["/", "/frame", "/export.svg"] {
            let get = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            let getBody = get.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            let head = try exchange("HEAD \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(path): \(head.prefix(200))")
            #expect(head.hasSuffix("\r\n\r\n"), "\(path): a body came with the head: \(head.suffix(100))")
            #expect(
                head.lowercased().contains("content-length: \(getBody.utf8.count)\r\n"),
                "\(path): \(head.prefix(400)) against a GET body of \(getBody.utf8.count) bytes")
            #expect(!getBody.isEmpty)
        }
        let crossSite = try exchange(
            "HEAD /frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nSec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n"
        )
        #expect(crossSite.hasPrefix("HTTP/1.1 403"), "\(crossSite.prefix(200))")
        let events = try exchange("HEAD /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(events.hasPrefix("HTTP/1.1 405"), "\(events.prefix(200))")
        #expect(events.lowercased().contains("allow: get\r\n"), "\(events.prefix(300))")
    }

    /// Stories open in the gallery only: a view file's preview answers that it is not the gallery (409).
    @Test func storiesOpenInTheGalleryOnly() throws {
        let preview = try Preview()
        let (status, body) = try HTTP.request(
            port: preview.dev.port, "POST", "/story",
            body: Data(#"{"component": "swatch:swatch", "story": "full"}"#.utf8))
        #expect(status == 409 && String(decoding: body, as: UTF8.self).contains("--gallery"))
    }

    /// `/inspect` names a component by section and index path: a path that is not one is a bad request (it was read
    /// as the first component's, or as nothing with 200), and a path to nothing is not found.
    @Test func inspectTellsABadPathFromAPathToNothing() throws {
        let preview = try Preview()
        let port = preview.dev.port
        #expect(try HTTP.request(port: port, "GET", "/inspect?section=body&path=0").0 == 200)
        for bad in ["/inspect", "/inspect?path=abc", "/inspect?path=0.x", "/inspect?path=0..1", "/inspect?path=-1"] {
            #expect(try HTTP.request(port: port, "GET", bad).0 == 400, "\(bad)")
        }
        let (status, body) = try HTTP.request(port: port, "GET", "/inspect?section=body&path=99")
        #expect(status == 404)
        #expect(String(decoding: body, as: UTF8.self).contains("nothing at body 99"))
        // Sections as event scripts and /tap name them: the header with no path (as the page's path 0), and
        // "overlays" (this view has none: not found, not a bad request).
        let (headerStatus, header) = try HTTP.request(port: port, "GET", "/inspect?section=header")
        #expect(headerStatus == 200 && String(decoding: header, as: UTF8.self).contains("\"id\":\"h\""))
        #expect(try HTTP.request(port: port, "GET", "/inspect?section=overlays&path=0").0 == 404)
    }

    /// `Expect: 100-continue` (curl sends it with a large body, then waits a second for the answer) gets `100
    /// Continue` at once; the body sent after it is read as the request's.
    @Test func aClientThatWaitsToSendItsBodyIsToldToGoOn() throws {
        let preview = try Preview()
        let port = preview.dev.port
        let body = #"{"width": 414}"#
        let fd = try HTTP.connect(port: port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        HTTP.send(
            fd,
            Data(
                ("POST /widths HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Expect: 100-continue\r\nConnection: close\r\n\r\n").utf8))
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &buffer, buffer.count)
        let interim = count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : "nothing (\(errno))"
        #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
        HTTP.send(fd, Data(body.utf8))
        let reply = String(decoding: HTTP.readToEnd(fd), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(300))")
        #expect(reply.contains("drawing at 414"), "\(reply.prefix(300))")
    }

    /// Connections are capped below the descriptor limit: past the cap the server accepts no more until some close
    /// (they wait in the kernel's queue). At the limit itself the server's accept loop spun a core, and the dev loop
    /// had no descriptor left for anything else.
    /// `hubhost dev` on an empty view with 256 descriptors (a cap of 128 connections), serving on `port`.
    static func devWithFewDescriptors(root: URL, port: UInt16) throws -> Process {
        let view = root.appendingPathComponent("view.json")
        try #"{"body": []}"#.write(to: view, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "ulimit -n 256 && exec \"$0\" \"$@\"", TestSupport.hubhost.path, "dev", view.path, "--plugins",
            root.path, "--port", "\(port)", "--plugin-cache", root.appendingPathComponent("cache").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `body` with the port and process of `devWithFewDescriptors` once it serves, in a folder of its own
    /// removed after it.
    static func withFewDescriptors(_ name: String, _ body: (UInt16, Process) throws -> Void) throws {
        let root = TestSupport.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: root) }
        let port = try DevProcess.freePort()
        let process = try devWithFewDescriptors(root: root, port: port)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        #expect(TestSupport.waitUntil { (try? HTTP.request(port: port, "GET", "/frame").0) == 200 })
        try body(port, process)
    }

    @Test func connectionsStopShortOfTheDescriptorLimit() throws {
        try Self.withFewDescriptors("guard-descriptors") { port, process in
            // Each connection is two descriptors here; the test keeps its own well under the limit it may have.
            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            for _ in 0..<300 { if let fd = try? HTTP.connect(port: port) { held.append(fd) } }
            let pid = process.processIdentifier
            let cpuBefore = try Self.cpuSeconds(of: pid)
            Thread.sleep(forTimeInterval: 2)
            let spent = try Self.cpuSeconds(of: pid) - cpuBefore
            #expect(spent < 0.5, "the server spent \(spent) s of CPU in 2 s holding idle connections")
            let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
            #expect(open < 250, "\(open) descriptors open")
            for fd in held { close(fd) }
            held = []
            #expect(TestSupport.waitUntil(timeout: 10) { (try? HTTP.request(port: port, "GET", "/frame").0) == 200 })
            #expect(process.isRunning)
        }
    }

    /// Connections that send nothing, or a request head a few bytes at a time, are closed 10 s after they open,
    /// not after the minute's idle timeout: a local program holding every place the server has keeps the page
    /// waiting seconds, not a minute.
    @Test func connectionsThatSendNoRequestAreClosedWithinSeconds() throws {
        try Self.withFewDescriptors("guard-first-request") { port, process in
            let slow = try HTTP.connect(port: port)
            defer { close(slow) }
            HTTP.send(slow, Data("GET /frame HTTP/1.1\r\nHo".utf8))
            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            // More than the 128 places: the page's next request waits for one.
            for _ in 0..<200 { if let fd = try? HTTP.connect(port: port) { held.append(fd) } }
            let start = Date()
            let (status, _) = try HTTP.request(port: port, "GET", "/frame")
            #expect(status == 200)
            #expect(Date().timeIntervalSince(start) < 25, "the page waited \(Date().timeIntervalSince(start)) s")
            // The half-sent head is closed as well (read sees the end, not the 30 s receive timeout).
            let closedAt = Date()
            _ = HTTP.readToEnd(slow)
            #expect(Date().timeIntervalSince(closedAt) < 15)
            #expect(process.isRunning)
        }
    }

    /// `--host 0.0.0.0` listens on every interface: it says so with a warning, prints a loopback URL the browser
    /// can open, and answers for this machine's own addresses and name, but still not for a foreign name.
    @Test func everyInterfaceIsAnsweredByTheMachinesOwnNamesWithAWarning() throws {
        let root = TestSupport.temporaryDirectory("guard-wildcard")
        defer { try? FileManager.default.removeItem(at: root) }
        let view = root.appendingPathComponent("view.json")
        try #"{"body": []}"#.write(to: view, atomically: true, encoding: .utf8)
        let dev = try DevProcess(
            view: view, plugins: root, cache: root.appendingPathComponent("cache"), extra: ["--host", "0.0.0.0"])
        defer { dev.stop() }
        let port = dev.port
        #expect(dev.log.contains("serving http://127.0.0.1:\(port)/"), "\(dev.log)")
        #expect(dev.log.contains("warning: --host 0.0.0.0 listens on every interface"), "\(dev.log)")
        #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Host": "evil.example:\(port)"]).0 == 421)
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, 255)
        let hostName = String(cString: name).lowercased()
        #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Host": "\(hostName):\(port)"]).0 == 200)
        // Each address the warning names (the machine's network addresses, when it has any) is answered.
        for line in dev.log.split(separator: "\n") where line.contains("warning: --host") {
            for url in line.split(separator: " ").filter({ $0.hasPrefix("http://") }) {
                let authority = url.dropFirst("http://".count).split(separator: "/").first.map(String.init) ?? ""
                #expect(authority.hasSuffix(":\(port)"))
                #expect(try HTTP.request(port: port, "GET", "/frame", headers: ["Host": authority]).0 == 200, "\(url)")
            }
        }
    }

    /// HTTP/1.0 without keep-alive gets its connection closed after the answer (it stayed open a minute), and a
    /// target in absolute form is checked by the name it gives, not by the Host header beside it.
    @Test func http10ClosesAndAnAbsoluteTargetIsCheckedByItsOwnName() throws {
        let preview = try Preview()
        let port = preview.dev.port
        let fd = try HTTP.connect(port: port)
        defer { close(fd) }
        let start = Date()
        HTTP.send(fd, Data("GET /frame HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        let answer = String(decoding: HTTP.readToEnd(fd), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(Date().timeIntervalSince(start) < 10, "closed after \(Date().timeIntervalSince(start)) s")
        let foreign = try HTTP.raw(
            port: port,
            "GET http://evil.example/frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(foreign.hasPrefix("HTTP/1.1 421"), "\(foreign.prefix(200))")
        let own = try HTTP.raw(
            port: port,
            "GET http://127.0.0.1:\(port)/frame HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(own.hasPrefix("HTTP/1.1 200"), "\(own.prefix(200))")
    }

    /// User and system CPU of process `pid`, in seconds.
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name's closing parenthesis: fields 3 onward; utime and stime are the 14th and 15th.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        return (Double(fields[11]) ?? 0 + 0) / 100 + (Double(fields[12]) ?? 0) / 100
    }

    /// `--host ::1` serves on IPv6 loopback, says its URL as a browser takes it, and answers for that name.
    @Test(.enabled(if: Self.hasIPv6Loopback, "this machine has no IPv6 loopback address"))
    func anIPv6HostIsServedAndItsURLIsBracketed() throws {
        let root = TestSupport.temporaryDirectory("guard-ipv6")
        defer { try? FileManager.default.removeItem(at: root) }
        let view = root.appendingPathComponent("view.json")
        try #"{"body": []}"#.write(to: view, atomically: true, encoding: .utf8)
        let dev = try DevProcess(
            view: view, plugins: root, cache: root.appendingPathComponent("cache"), extra: ["--host", "::1"])
        defer { dev.stop() }
        #expect(dev.log.contains("serving http://[::1]:\(dev.port)/"), "\(dev.log)")
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = dev.port.bigEndian
        address.sin6_addr = in6addr_loopback
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
        try #require(connected, "connect to [::1]:\(dev.port): errno \(errno)")
        HTTP.send(fd, Data("GET /frame HTTP/1.1\r\nHost: [::1]:\(dev.port)\r\nConnection: close\r\n\r\n".utf8))
        #expect(String(decoding: HTTP.readToEnd(fd), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    /// Whether a socket can be bound to ::1 (containers often run without IPv6).
    static var hasIPv6Loopback: Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }

    @Test func eventStreamsAreCapped() throws {
        let preview = try Preview()
        var readers: [EventStreamReader] = []
        defer { for reader in readers { reader.close() } }
        for _ in 0..<32 { readers.append(try EventStreamReader(port: preview.dev.port)) }
        #expect(TestSupport.waitUntil { readers.allSatisfy { !$0.renderEvents.isEmpty } })
        let (status, body) = try HTTP.request(port: preview.dev.port, "GET", "/events")
        #expect(status == 503)
        #expect(String(decoding: body, as: UTF8.self).contains("too many open event streams"))
        readers.removeLast().close()
        // A closed page frees its place as its connection closes, not at the next heartbeat (10 s).
        #expect(
            TestSupport.waitUntil(timeout: 3) {
                let reader = try? EventStreamReader(port: preview.dev.port)
                defer { reader?.close() }
                return reader.map { r in TestSupport.waitUntil(timeout: 2) { !r.renderEvents.isEmpty } } ?? false
            })
    }

    /// A page from another origin (here a `data:` page, origin "null") posting to the preview, as a hostile site
    /// would: the browser sends the request, the server refuses it, and nothing is tapped.
    @Test(HeadlessChromium.enabled)
    func aPageFromAnotherOriginCannotTap() throws {
        let executable = try #require(HeadlessChromium.executable, "chromium is required on CI")
        let preview = try Preview()
        let browser = try HeadlessChromium(executable: executable)
        defer { browser.quit() }
        try browser.open("data:text/html,<title>elsewhere</title>")
        // The tab is created before it navigates: wait for the page, or what runs next is lost with about:blank.
        #expect(TestSupport.waitUntil { (try? browser.evaluate("document.title")) == "elsewhere" })
        let url = "http://127.0.0.1:\(preview.dev.port)/tap"
        // A "simple" request (no preflight), the kind a hostile page can send; its response is opaque to it.
        _ = try browser.evaluate(
            """
            fetch('\(url)', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
                             body: '{"indexPath": [0]}'}).then(() => window.sent = 'yes', () => window.sent = 'failed')
            """)
        #expect(TestSupport.waitUntil { ["yes", "failed"].contains((try? browser.evaluate("window.sent")) ?? "") })
        // A JSON post needs a preflight the server does not grant.
        _ = try browser.evaluate(
            """
            fetch('\(url)', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"indexPath": [0]}'})
              .then(() => window.json = 'answered', () => window.json = 'blocked')
            """)
        #expect(TestSupport.waitUntil { (try? browser.evaluate("window.json")) == "blocked" })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try preview.taps() == 0)

        // The preview's own page still taps.
        try browser.open("http://127.0.0.1:\(preview.dev.port)/")
        #expect(
            TestSupport.waitUntil { (try? browser.evaluate("document.querySelectorAll('#boxes .box').length")) == "2" })
        _ = try browser.evaluate(
            "document.querySelector('#boxes .box[data-section=\"body\"][data-index-path=\"0\"]').click()")
        #expect(
            TestSupport.waitUntil { (try? preview.taps()) == 1 },
            "\(preview.dev.log) \((try? browser.evaluate("document.getElementById('log')?.textContent")) ?? "")")
    }
}
