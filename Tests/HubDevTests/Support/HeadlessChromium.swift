import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's Chromium, headless, driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the
/// browser reads NUL-terminated JSON commands on fd 3 and writes responses and events on fd 4).
final class HeadlessChromium: @unchecked Sendable {
    /// Browser tests run where chromium is installed, and always on CI (where a missing one is a failure).
    static var enabled: ConditionTrait {
        .enabled(
            if: executable != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "chromium is not installed: `apt-get install chromium` (.ci/run installs it) to run this test")
    }

    static var executable: String? {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
                let path = "\(dir)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        return nil
    }

    private var pid: pid_t = 0
    private let commands: Int32
    private let responses: Int32
    private let profile = TestSupport.temporaryDirectory("chromium-profile")
    private let lock = NSLock()
    private var replies: [Int: [String: Any]] = [:]
    private var nextID = 0
    private var session: String?

    init(executable: String) throws {
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw TestFailure("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--remote-debugging-pipe", "--user-data-dir=\(profile.path)", "about:blank",
        ]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(toBrowser[0])
        close(fromBrowser[1])
        guard spawned == 0 else { throw TestFailure("cannot start \(executable): \(spawned)") }
        commands = toBrowser[1]
        responses = fromBrowser[0]
        Thread { [self] in readLoop() }.start()
    }

    deinit { quit() }

    func quit() {
        guard pid != 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
        close(commands)
        try? FileManager.default.removeItem(at: profile)
    }

    /// Opens `url` in a new tab and attaches to it.
    func open(_ url: String) throws {
        let target = try send("Target.createTarget", ["url": url])
        guard let targetID = target["targetId"] as? String else { throw TestFailure("no target: \(target)") }
        let attached = try send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        session = attached["sessionId"] as? String
    }

    /// Evaluates a JavaScript expression in the page; returns its value as a string.
    /// Opens `url` with requests to URLs matching `blocked` (patterns such as "*/events") failing, as a page
    /// whose event stream never connects.
    func open(_ url: String, blocking blocked: [String]) throws {
        try open("about:blank")
        _ = try send("Network.enable", [:], inPage: true)
        _ = try send("Network.setBlockedURLs", ["urls": blocked], inPage: true)
        _ = try send("Page.navigate", ["url": url], inPage: true)
    }

    func evaluate(_ expression: String) throws -> String {
        // String(…) in the page: JSON booleans would come back as NSNumber 1/0.
        let result = try send(
            "Runtime.evaluate", ["expression": "String(\(expression))", "returnByValue": true], inPage: true)
        let value = (result["result"] as? [String: Any])?["value"]
        return value.map { "\($0)" } ?? ""
    }

    /// Sets the page's control `id` (a menu or a field) to `value` as a user would: the page hears a change.
    func choose(_ id: String, _ value: String) throws {
        _ = try evaluate(
            "(() => { const e = document.getElementById('\(id)'); e.value = '\(value)'; e.dispatchEvent(new Event('change')); })()"
        )
    }

    func send(_ method: String, _ params: [String: Any], inPage: Bool = false, timeout: Double = 20) throws -> [String:
        Any]
    {
        lock.lock()
        nextID += 1
        let id = nextID
        lock.unlock()
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if inPage, let session { message["sessionId"] = session }
        var data = try JSONSerialization.data(withJSONObject: message)
        data.append(0)
        data.withUnsafeBytes { _ = write(commands, $0.baseAddress, $0.count) }
        var reply: [String: Any]?
        _ = TestSupport.waitUntil(timeout: timeout) {
            lock.lock()
            defer { lock.unlock() }
            reply = replies.removeValue(forKey: id)
            return reply != nil
        }
        guard let reply else { throw TestFailure("\(method): no answer from chromium") }
        if let error = reply["error"] { throw TestFailure("\(method): \(error)") }
        return reply["result"] as? [String: Any] ?? [:]
    }

    private func readLoop() {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(responses, &buffer, buffer.count)
            if n <= 0 { break }
            pending.append(contentsOf: buffer[0..<n])
            while let end = pending.firstIndex(of: 0) {
                let message = pending[pending.startIndex..<end]
                pending = Data(pending[(end + 1)...])
                if let json = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
                    let id = json["id"] as? Int
                {
                    lock.lock()
                    replies[id] = json
                    lock.unlock()
                }
            }
        }
        close(responses)
    }
}
