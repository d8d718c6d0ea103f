import Foundation
import HubTestKit
import Testing

/// Runs the built `hubhost` executable as a real process.
@Suite("hubhost list-namespaces (process)")
struct ListNamespacesCLITests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let binDir = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ).deletingLastPathComponent()
    static let hubhost = binDir.appendingPathComponent("hubhost")

    typealias Result = ProcessResult

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        try ProcessRunner.hubhost(arguments, environment: environment)
    }

    /// A temp folder with plugins built from the HubHost test fixture.
    static func folder(good: Bool, bad: Bool) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-cli-\(UUID().uuidString)")
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        if good {
            try compile(to: plugins.appendingPathComponent("libgood.so"), defines: ["-DFIXTURE_VERSION=\"3.1.4\""])
        }
        if bad { try Data("not a library".utf8).write(to: plugins.appendingPathComponent("libbad.so")) }
        return root
    }

    @Test("--json lists the good plugin and the rejected file with its reason; exit 1")
    func jsonWithRejection() throws {
        let root = try Self.folder(good: true, bad: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try Self.run([
            "list-namespaces", "--json", "--plugins", root.appendingPathComponent("plugins").path,
            "--plugin-cache", root.appendingPathComponent("cache").path,
        ])
        #expect(result.status == 1, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let plugins = try #require(json["plugins"] as? [[String: Any]])
        #expect(plugins.count == 2)
        let bad = try #require(plugins.first { ($0["file"] as? String)?.hasSuffix("libbad.so") == true })
        #expect(bad["state"] as? String == "rejected")
        #expect(bad["reason"] as? String == "libbad.so: not an ELF file (text)")
        #expect(bad["id"] is NSNull)
        let good = try #require(plugins.first { ($0["file"] as? String)?.hasSuffix("libgood.so") == true })
        #expect(good["state"] as? String == "active")
        #expect(good["id"] as? String == "com.example.fixture")
        #expect(good["version"] as? String == "3.1.4")
        #expect(good["abi"] as? String == "1.1")
        #expect(good["reason"] is NSNull)
        let namespaces = try #require(good["namespaces"] as? [[String: Any]])
        #expect(namespaces.count == 1)
        #expect(namespaces.first?["namespace"] as? String == "fixture")
        #expect(namespaces.first?["components"] as? [String] == ["box", "label"])
        // Sorted keys, pretty-printed.
        #expect(result.stdout.contains("\"abi\" : \"1.1\""))
        // The diagnostic goes to stderr.
        #expect(result.stderr.contains("rejected libbad.so: not an ELF file (text)"))
    }

    @Test("the table lists namespaces and rejected files; exit 0 when everything loads")
    func table() throws {
        let root = try Self.folder(good: true, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try Self.run(
            ["list-namespaces", "--plugin-cache", root.appendingPathComponent("cache").path],
            environment: [
                "HUBHOST_PLUGIN_PATH": root.appendingPathComponent("plugins").path,
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("NAMESPACE") == true)
        let row = try #require(lines.dropFirst().first).split(separator: " ", omittingEmptySubsequences: true)
        #expect(row == ["fixture", "box,label", "com.example.fixture", "3.1.4", "libgood.so", "1.1", "active"])
    }

    /// The probe passed the plugin and listing loads it in its own process; then its init crashes, hangs or exits on a
    /// real load (it read a file the probe never saw). That listing starts itself again and lists in a worker, which
    /// names the plugin and quarantines it; the next one lists it as quarantined, in its own process again.
    @Test(arguments: ["crash", "hang", "exit"])
    func aListingThatFaultsInPluginCodeListsAgainInAWorker(fault: String) throws {
        let root = try Self.folder(good: true, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let trigger = root.appendingPathComponent("config")
        let define = "FIXTURE_\(fault.uppercased())_INIT_IF"
        try Self.compile(
            to: root.appendingPathComponent("plugins/libconfigured.so"),
            defines: [
                "-D\(define)=\"\(trigger.path)\"", "-DFIXTURE_ID=\"com.example.configured\"",
                "-DFIXTURE_NAMESPACE=\"configured\"",
            ])
        let arguments = [
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path, "--call-timeout", "0.5",
        ]
        let first = try Self.run(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        try Data("x".utf8).write(to: trigger)
        let faulted = try Self.run(arguments)
        #expect(faulted.status == 5, "\(faulted.stderr)")
        let cause = [
            "crash": "crashed with SIGSEGV", "hang": "did not return within 0.5 s (--call-timeout)",
            "exit": "called exit()",
        ][fault]!
        #expect(faulted.stderr.contains("plugin code \(cause) while this listing loaded plugins"), "\(faulted.stderr)")
        let named = ["crash": "crashed with SIGSEGV in init", "hang": "hung in init", "exit": "exited the process"][
            fault]!
        #expect(faulted.stderr.contains("libconfigured.so") && faulted.stderr.contains(named), "\(faulted.stderr)")
        // The other plugin is listed, and the faulty one is listed as quarantined.
        #expect(faulted.stdout.contains("com.example.fixture"), "\(faulted.stdout)")
        #expect(faulted.stdout.contains("quarantined"), "\(faulted.stdout)")
        if fault == "hang" { return }  // a hang keeps the next listing in a worker (it is kept out for its run only)
        let listed = try Self.run(arguments)
        #expect(listed.status == 1, "\(listed.stderr)")
        #expect(listed.stdout.contains("quarantined"), "\(listed.stdout)")
        #expect(!listed.stderr.contains("in a worker"), "\(listed.stderr)")
    }

    /// hubhost killed while a probe of a plugin that hangs in init runs: the probe ends with it (it ran on past every
    /// timeout, owned by init), and the next run removes the scratch folder the killed one left in the cache.
    @Test func aProbeEndsWithTheHubhostThatStartedItAndItsScratchIsCleared() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let trigger = root.appendingPathComponent("config")
        try Data("x".utf8).write(to: trigger)
        let plugin = root.appendingPathComponent("plugins/libstuck.so")
        try Self.compile(to: plugin, defines: ["-DFIXTURE_HANG_INIT_IF=\"\(trigger.path)\""])
        let cache = root.appendingPathComponent("cache")
        let quoted = [
            TestPaths.hubhost.path, "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path,
            "--plugin-cache", cache.path,
        ].map { "'\($0)'" }.joined(separator: " ")
        // Killed a second into the probe's 5 s; a second later, no process is left probing the plugin (an ended one
        // may stay a zombie where nothing reaps orphans).
        let script = """
            \(quoted) >/dev/null 2>&1 & H=$!
            below() { for c in $(cat /proc/$1/task/*/children 2>/dev/null); do echo $c; below $c; done; }
            for i in $(seq 100); do P=$(below $H); [ -n "$P" ] && break; sleep 0.1; done
            sleep 0.5; P=$(below $H); echo "probes:" $P; kill -KILL $H; wait $H; sleep 1
            for p in $P; do
              grep -q '^State:.*[RSDT]' /proc/$p/status 2>/dev/null && echo "left: $p $(tr '\\0' ' ' < /proc/$p/cmdline)"
            done; echo checked
            """
        let killed = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        #expect(killed.stdout.contains("checked") && !killed.stdout.contains("left:"), "\(killed.stdout)")
        #expect(killed.stdout.contains(#/probes: [0-9]/#), "\(killed.stdout)")
        let work = try #require(
            FileManager.default.enumerator(atPath: cache.path)?.compactMap { $0 as? String }.first {
                $0.hasSuffix("probe-work")
            })
        let left = try FileManager.default.contentsOfDirectory(atPath: cache.appendingPathComponent(work).path)
        #expect(left.contains { $0.hasPrefix("probe-") || $0.hasPrefix("scan-") }, "the killed run left: \(left)")
        try FileManager.default.removeItem(at: trigger)
        _ = try Self.run([
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache", cache.path,
        ])
        let after = try FileManager.default.contentsOfDirectory(atPath: cache.appendingPathComponent(work).path)
        #expect(after.isEmpty, "\(after)")
    }

    /// A crash is named by the step of loading it happened in: the image's constructors, the entry point or init.
    @Test func aCrashWhileLoadingIsNamedByItsStep() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        try Self.compile(
            to: root.appendingPathComponent("plugins/libentry.so"),
            defines: ["-DFIXTURE_CRASH_ENTRY", "-DFIXTURE_ID=\"com.example.entry\"", "-DFIXTURE_NAMESPACE=\"entry\""])
        try Self.compile(
            to: root.appendingPathComponent("plugins/libloaded.so"),
            defines: [
                "-DFIXTURE_CRASH_CONSTRUCTOR", "-DFIXTURE_ID=\"com.example.loaded\"", "-DFIXTURE_NAMESPACE=\"loaded\"",
            ])
        let result = try Self.run([
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stdout.contains("libentry.so: crashed with SIGSEGV in hub_plugin_entry"), "\(result.stdout)")
        #expect(
            result.stdout.contains("libloaded.so: crashed with SIGSEGV in dlopen (its constructors)"),
            "\(result.stdout)")
    }

    /// A probe that does not answer is said as it happens, with where it is (plugins that hang each took their
    /// whole budget in silence: ten, 50 s with nothing printed).
    @Test func aProbeThatDoesNotAnswerIsSaidWhileItIsWaitedFor() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let trigger = root.appendingPathComponent("config")
        try Data("x".utf8).write(to: trigger)
        // After the first hang, the files left are split between two scanners (every other one): the third, which
        // answers, is probed beside the second, which hangs, and each verdict stays its own file's.
        for name in ["libslow1.so", "libslow2.so", "libslow3ok.so"] {
            try Self.compile(
                to: root.appendingPathComponent("plugins/\(name)"),
                defines: [
                    "-DFIXTURE_NAMESPACE=\"\(name.dropLast(3))\"", "-DFIXTURE_ID=\"com.example.\(name.dropLast(3))\"",
                ] + (name.hasSuffix("ok.so") ? [] : ["-DFIXTURE_HANG_INIT_IF=\"\(trigger.path)\""]))
        }
        let result = try Self.run([
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ])
        for name in ["libslow1.so", "libslow2.so"] {
            #expect(
                result.stderr.contains(
                    "hubhost: \(name): no answer from its probe for 2 s (in init); given up after 5 s"),
                "\(result.stderr)")
            #expect(result.stdout.contains("quarantined  \(name): hung in init"), "\(result.stdout)")
        }
        #expect(result.stdout.contains("com.example.libslow3ok") && !result.stderr.contains("libslow3ok.so: no answer"))
    }

    /// A probe ended by another process's SIGTERM (a user's kill of the busy process) keeps its plugin out of that
    /// run only: it was quarantined for good as "crashed with SIGTERM in init".
    @Test func aProbeKilledFromOutsideIsProbedAgainNextTime() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let trigger = root.appendingPathComponent("config")
        try Data("x".utf8).write(to: trigger)
        try Self.compile(
            to: root.appendingPathComponent("plugins/libslow.so"),
            defines: ["-DFIXTURE_HANG_INIT_IF=\"\(trigger.path)\""])
        let quoted = [
            TestPaths.hubhost.path, "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path,
            "--plugin-cache", root.appendingPathComponent("cache").path,
        ].map { "'\($0)'" }.joined(separator: " ")
        // The deepest process under hubhost is the probe running init.
        let script = """
            \(quoted) 2>&1 & H=$!
            last() { local c; c=$(cat /proc/$1/task/*/children 2>/dev/null | awk '{print $1}'); if [ -n "$c" ]; then last $c; else echo $1; fi; }
            for i in $(seq 100); do P=$(last $H); [ "$P" != "$H" ] && break; sleep 0.1; done
            sleep 0.5; P=$(last $H); kill -TERM $P; wait $H; echo "status $?"
            """
        let killed = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        #expect(killed.stdout.contains("ended by SIGTERM, most likely from outside"), "\(killed.stdout)")
        try FileManager.default.removeItem(at: trigger)
        let again = try Self.run([
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ])
        #expect(again.status == 0 && !again.stdout.contains("quarantined"), "\(again.stdout)")
    }

    /// A plugin whose init sends its own process group SIGTERM ends only its probe, and is its own fault: named,
    /// and kept out until it changes (it read as a kill "most likely from outside", and was probed again on every
    /// run); the other plugins list.
    @Test func aProbeThatSignalsItsOwnGroupIsThePluginsFault() throws {
        let root = try Self.folder(good: true, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        try Self.compile(to: root.appendingPathComponent("plugins/libterm.so"), defines: ["-DFIXTURE_TERM_GROUP_INIT"])
        let arguments = [
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ]
        let first = try Self.run(arguments)
        #expect(first.status == 5, "\(first.stdout)\(first.stderr)")
        #expect(
            first.stdout.contains("crashed with SIGTERM in init: plugin code sent it to its own process"),
            "\(first.stdout)")
        #expect(!first.stdout.contains("most likely from outside"), "\(first.stdout)")
        // Remembered: the next run does not probe it again (no new fault, status 1 for the quarantine listed).
        let again = try Self.run(arguments)
        #expect(again.status == 1, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("plugin code sent it to its own process"), "\(again.stdout)")
    }

    /// A plugin whose atexit handler crashes does not end the listing with a crash (it did, after printing it, on
    /// every run): the listing is out, and the plugins' exit handlers are not run in its process.
    @Test func aPluginThatCrashesAtExitDoesNotEndTheListingWithACrash() throws {
        let root = try Self.folder(good: true, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let trigger = root.appendingPathComponent("config")
        try Self.compile(
            to: root.appendingPathComponent("plugins/libexits.so"),
            defines: [
                "-DFIXTURE_CRASH_AT_EXIT_IF=\"\(trigger.path)\"", "-DFIXTURE_ID=\"com.example.exits\"",
                "-DFIXTURE_NAMESPACE=\"exits\"",
            ])
        let arguments = [
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ]
        #expect(try Self.run(arguments).status == 0)
        try Data("x".utf8).write(to: trigger)
        let listed = try Self.run(arguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("com.example.exits") && listed.stdout.contains("com.example.fixture"))
    }

    /// exit(0) in init ends the probe without its report: named as the init it happened in, not "start".
    @Test func aPluginThatExitsWithStatusZeroInInitIsNamedInInit() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        try Self.compile(to: root.appendingPathComponent("plugins/libquits.so"), defines: ["-DFIXTURE_EXIT_INIT"])
        let result = try Self.run([
            "list-namespaces", "--plugins", root.appendingPathComponent("plugins").path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stdout.contains("failed in init: the probe exited with status 0"), "\(result.stdout)")
    }

    @Test("no plugin files: exit 2; usage error: exit 64")
    func exitCodes() throws {
        let root = try Self.folder(good: false, bad: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let empty = try Self.run(["list-namespaces", "--plugins", root.appendingPathComponent("plugins").path])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("no plugin files"))
        let usage = try Self.run(["list-namespaces", "--no-such-option"])
        #expect(usage.status == 64)
        let unknown = try Self.run(["no-such-command"])
        #expect(unknown.status == 64)
        // `help` of a command that does not exist is a usage error too, not the top-level help with exit 0.
        let helpUnknown = try Self.run(["help", "no-such-command"])
        #expect(helpUnknown.status == 64)
        #expect(helpUnknown.stderr.contains("no command 'no-such-command'"))
        let helpKnown = try Self.run(["help", "render"])
        #expect(helpKnown.status == 0)
        #expect(helpKnown.stdout.contains("Render a Hub JSON view model"))
    }
}
