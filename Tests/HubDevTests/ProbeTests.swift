import Foundation
import HubTestKit
import Testing

@testable import HubHost

/// Probing in a child process (the real `hubhost probe`), quarantine, the probe cache, and `hubhost validate`.
@Suite("Probe, quarantine and validate", .serialized)
struct ProbeTests {
    let folder = TestSupport.temporaryDirectory("probe")

    func gate(timeout: Double = 2) -> ProbeGate {
        ProbeGate(
            cacheDirectory: folder.appendingPathComponent("cache"),
            runner: ProbeRunner(
                executable: TestSupport.hubhost, timeout: timeout,
                workDirectory: folder.appendingPathComponent("work")))
    }

    func plugin(_ name: String, _ defines: [String] = []) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestSupport.compilePlugin("swatch.c", to: url, defines: defines)
        return url
    }

    @Test func aPluginThatSegfaultsInInitIsQuarantinedWithPhaseSignalAndHash() throws {
        let file = try plugin("libcrash.so", ["CRASH_IN_INIT"])
        guard case .quarantined(let record) = gate().check(file) else {
            Issue.record("a segfault in init must quarantine the file")
            return
        }
        #expect(record.kind == .crash)
        #expect(record.phase == "init")
        #expect(record.signal == "SIGSEGV")
        #expect(record.hash == ContentDigest.of(file: file))
        #expect(record.reason.hasPrefix("crashed with SIGSEGV in init at libcrash.so+0x"), "\(record.reason)")
    }

    @Test func aPluginThatHangsIsKilledAndQuarantined() throws {
        let file = try plugin("libhang.so", ["HANG_IN_INIT"])
        guard case .quarantined(let record) = gate(timeout: 3).check(file) else {
            Issue.record("a hang in init must quarantine the file")
            return
        }
        #expect(record.kind == .hang)
        #expect(record.phase == "init")
        #expect(record.reason.contains("hung in init"))
    }

    @Test func aCrashWhileConfiguringNamesTheComponent() throws {
        let file = try plugin("libconfigure.so", ["CRASH_IN_CONFIGURE"])
        guard case .quarantined(let record) = gate().check(file) else {
            Issue.record("a crash in configure must quarantine the file")
            return
        }
        #expect(record.phase == "configure")
        #expect(record.component?.hasPrefix("swatch:") == true)
    }

    /// The scanner keeps its phases in a shared page, not on the pipe: a crash deep in the suite is still named
    /// with its phase and component, and a crash before the next file's first phase is not blamed on the
    /// previous file's last one.
    @Test func aScannerCrashNamesThePhaseAndComponentFromItsSharedPage() throws {
        let files = [
            try plugin("liba.so", ["PLUGIN_ID=\"test.a\"", "NAMESPACE=\"a\""]),
            try plugin("libconfigure.so", ["CRASH_IN_CONFIGURE"]),
            try plugin("libb.so", ["PLUGIN_ID=\"test.b\"", "NAMESPACE=\"b\""]),
            try plugin("libinit.so", ["CRASH_IN_INIT"]),
        ]
        let (ok, quarantined) = gate().filter(files)
        #expect(ok.map(\.lastPathComponent) == ["liba.so", "libb.so"])
        let configure = try #require(quarantined.first { $0.file.hasSuffix("libconfigure.so") })
        #expect(configure.phase == "configure")
        #expect(configure.component?.hasPrefix("swatch:") == true)
        #expect(configure.signal == "SIGSEGV")
        let initial = try #require(quarantined.first { $0.file.hasSuffix("libinit.so") })
        #expect(initial.phase == "init")
        #expect(initial.component == nil)
    }

    /// What a plugin wrote on stderr before it killed the scanner is kept in its quarantine record.
    @Test func aScannerCrashKeepsWhatThePluginSaidOnStderr() throws {
        let files = [
            try plugin("liba.so", ["PLUGIN_ID=\"test.a\"", "NAMESPACE=\"a\""]),
            try plugin("libsay.so", ["CRASH_IN_INIT", "STDERR_BEFORE_CRASH"]),
        ]
        let (ok, quarantined) = gate().filter(files)
        #expect(ok.map(\.lastPathComponent) == ["liba.so"])
        let record = try #require(quarantined.first)
        #expect(record.stderrTail.contains("swatch: about to crash in init"), "\(record.stderrTail)")
    }

    @Test func verdictsAreCachedByStampAndHashAndClearWhenTheFileChanges() throws {
        let file = try plugin("libcached.so", ["CRASH_IN_INIT"])
        let first = gate()
        guard case .quarantined = first.check(file) else {
            Issue.record("expected quarantine")
            return
        }
        #expect(first.runner.probeCount == 1)
        first.cache.save()

        // A new gate (a new hubhost process) reads the cache: no child process.
        let second = gate()
        guard case .quarantined = second.check(file) else {
            Issue.record("expected the cached quarantine")
            return
        }
        #expect(second.runner.probeCount == 0)

        // A fixed build clears the quarantine.
        try TestSupport.installPlugin("swatch.c", at: file)
        guard case .passed(let report) = second.check(file) else {
            Issue.record("the fixed build must pass")
            return
        }
        #expect(second.runner.probeCount == 1)
        #expect(report.namespaces.map(\.namespace) == ["swatch"])
    }

    /// A replacement with the same size and mtime (`cp -p`, `tar x`, `rsync -t`) has other bytes: it is probed and
    /// loaded, not refused for ever as "changed while it was being checked".
    @Test func aReplacementThatKeepsSizeAndMtimeIsProbedAgain() throws {
        let plugins = folder.appendingPathComponent("samestamp")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let file = plugins.appendingPathComponent("libswatch.so")
        try TestSupport.compilePlugin("swatch.c", to: file, defines: ["PLUGIN_VERSION=\"1\""])
        let other = folder.appendingPathComponent("other.so")
        try TestSupport.compilePlugin("swatch.c", to: other, defines: ["PLUGIN_VERSION=\"2\""])
        let old = try Data(contentsOf: file)
        let new = try Data(contentsOf: other)
        try #require(old.count == new.count && old != new, "two builds of the same size")
        let cache = folder.appendingPathComponent("samestamp-cache")
        let list = ["list-namespaces", "--plugins", plugins.path, "--plugin-cache", cache.path]
        #expect(try ProcessRunner.hubhost(list).stdout.contains(" 1 "))
        // The new bytes written in place (same inode), the old mtime put back.
        let reference = folder.appendingPathComponent("reference.so")
        try TestSupport.run("/bin/cp", ["-p", file.path, reference.path])
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: new)
        try handle.close()
        try TestSupport.run("/usr/bin/touch", ["-r", reference.path, file.path])
        let second = try ProcessRunner.hubhost(list)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(
            second.stdout.contains(" 2 ") && !second.stderr.contains("changed while"),
            "\(second.stdout)\(second.stderr)")
    }

    @Test func aColdFolderIsScannedByOneChildThatRestartsAfterTheFileThatKilledIt() throws {
        // Not an image: let through to the loader, which says why, whatever its probe said.
        let notAnImage = folder.appendingPathComponent("text/libtext.so")
        try FileManager.default.createDirectory(
            at: notAnImage.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "not an ELF file".write(to: notAnImage, atomically: true, encoding: .utf8)
        let files = [
            notAnImage,
            try plugin("liba.so", ["PLUGIN_ID=\"test.a\"", "NAMESPACE=\"a\""]),
            try plugin("libcrash.so", ["CRASH_IN_INIT"]),
            try plugin("libb.so", ["PLUGIN_ID=\"test.b\"", "NAMESPACE=\"b\""]),
            try plugin("libhang.so", ["HANG_IN_INIT"]),
            try plugin("libc.so", ["PLUGIN_ID=\"test.c\"", "NAMESPACE=\"c\""]),
        ]
        let scanning = gate(timeout: 3)
        let (ok, quarantined) = scanning.filter(files)
        #expect(ok.map(\.lastPathComponent) == ["libtext.so", "liba.so", "libb.so", "libc.so"])
        #expect(quarantined.map { URL(fileURLWithPath: $0.file).lastPathComponent } == ["libcrash.so", "libhang.so"])
        let crash = try #require(quarantined.first)
        #expect(
            crash.reason.hasPrefix("crashed with SIGSEGV in init at libcrash.so+0x"),
            "the scanner names the file it died on, and where: \(crash.reason)")
        #expect(crash.hash == ContentDigest.of(file: files[2]))
        #expect(quarantined.last?.kind == .hang)
        #expect(quarantined.last?.phase == "init")
        // One scanner, a probe of the crashing file alone (plugins ran before it in that scanner, and may have
        // left it broken), a second scanner after the crash, a third after the hang: not one child per file.
        #expect(scanning.runner.probeCount == 4)

        // Every verdict was cached: a new gate starts no child.
        let warm = gate(timeout: 3)
        let again = warm.filter(files)
        #expect(again.ok == ok)
        #expect(again.quarantined.count == 2)
        #expect(warm.runner.probeCount == 0)
    }

    /// A build that finishes between the gate's look at a file and the loader's read of it: the loader's bytes
    /// were never probed, so it probes them before running any of them.
    @Test(.pluginCode) func bytesTheGateDidNotSeeAreProbedBeforeTheyAreLoaded() throws {
        let file = folder.appendingPathComponent("late/liblate.so")
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "a build still writing".write(to: file, atomically: true, encoding: .utf8)
        let host = PluginHost(cacheDirectory: folder.appendingPathComponent("late-copies"))
        let probing = gate()
        probing.install(on: host)
        #expect(probing.filter([file]).ok == [file], "not an image yet: the loader judges it")

        try TestSupport.installPlugin("swatch.c", at: file, defines: ["CRASH_IN_INIT"])
        let crashing = host.load(file: file)
        #expect(!crashing.isLoaded)
        #expect(
            crashing.reason?.hasPrefix("liblate.so: quarantined: crashed with SIGSEGV in init at liblate.so+0x") == true
        )

        try TestSupport.installPlugin("swatch.c", at: file, defines: ["PLUGIN_ID=\"test.late\"", "NAMESPACE=\"late\""])
        #expect(host.load(file: file).state == .active)
        #expect(probing.runner.probeCount == 3, "the first look, then each build the loader read")
    }

    @Test func aWarmStartReadsTheIndexAloneAndWritesNothing() throws {
        let good = try plugin("libgood.so", ["PLUGIN_ID=\"test.good\"", "NAMESPACE=\"good\""])
        let crash = try plugin("libcrash.so", ["CRASH_IN_INIT"])
        let first = gate()
        _ = first.filter([good, crash])
        let json = first.cache.file
        let index = first.cache.indexFile
        let lines = try String(contentsOf: index, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3, "a header and a line per file: \(lines)")
        #expect(lines.contains { $0.hasSuffix("\tp\t" + good.path) })
        #expect(lines.contains { $0.hasSuffix("\tq\t" + crash.path) })

        // Nothing changed: a warm start writes neither file.
        let before = try [json, index].map {
            try FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date
        }
        Thread.sleep(forTimeInterval: 0.02)
        let warm = gate()
        #expect(warm.filter([good, crash]).quarantined.count == 1)
        #expect(warm.runner.probeCount == 0)
        let after = try [json, index].map {
            try FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date
        }
        #expect(before == after, "an unchanged cache is not rewritten")

        // The index alone answers for a file that passed; a quarantine's record lives in the JSON, so when that
        // is damaged the file is probed again rather than loaded.
        try "not json".write(to: json, atomically: true, encoding: .utf8)
        let damaged = gate()
        let result = damaged.filter([good, crash])
        #expect(result.ok == [good])
        #expect(result.quarantined.map(\.file) == [crash.path])
        #expect(damaged.runner.probeCount == 1, "only the quarantined file is probed again")
    }

    @Test func listNamespacesShowsQuarantinedFilesAndKeepsGoing() throws {
        _ = try plugin("libcrash.so", ["CRASH_IN_INIT"])
        _ = try plugin("libgood.so", ["PLUGIN_ID=\"test.good\"", "NAMESPACE=\"good\""])
        let result = try TestSupport.run(
            TestSupport.hubhost.path,
            [
                "list-namespaces", "--json", "--plugins", folder.path,
                "--plugin-cache", folder.appendingPathComponent("cache").path,
            ],
            expectSuccess: false)
        #expect(
            result.status == 5, "a file whose probe crashed now is a plugin fault (5), not a crash: \(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let plugins = try #require(json?["plugins"] as? [[String: Any]])
        let crash = try #require(plugins.first { ($0["file"] as? String)?.hasSuffix("libcrash.so") == true })
        let good = try #require(plugins.first { ($0["file"] as? String)?.hasSuffix("libgood.so") == true })
        #expect(crash["state"] as? String == "quarantined")
        #expect((crash["reason"] as? String)?.contains("crashed with SIGSEGV in init") == true)
        #expect(good["state"] as? String == "active")
        // Copies are made while the scanner runs; the loaded one's is there (a quarantined file's stays for the
        // weekly prune too: copies are shared by every run on the cache).
        let images = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent("cache").path
        ).filter { $0.hasSuffix(".so") }
        #expect(images.contains { $0.hasPrefix("libgood-") }, "\(images)")
        // The next run remembers the quarantine: still reported, as a problem (1), no longer as a new fault.
        let again = try TestSupport.run(
            TestSupport.hubhost.path,
            [
                "list-namespaces", "--json", "--plugins", folder.path,
                "--plugin-cache", folder.appendingPathComponent("cache").path,
            ],
            expectSuccess: false)
        #expect(again.status == 1, "\(again.stderr)")
    }

    @Test func renderDoesNotDieWhenAPluginCrashesWhileLoading() throws {
        _ = try plugin("libcrash.so", ["CRASH_IN_INIT"])
        let view = folder.appendingPathComponent("view.json")
        try
            #"{"body": [{"id": "a", "component": {"id": "swatch:swatch", "category": "card"}, "text": {"title": "A"}}]}"#
            .write(to: view, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = TestSupport.hubhost
        process.arguments = [
            "render", view.path, "--format", "text", "--plugins", folder.path,
            "--plugin-cache", folder.appendingPathComponent("cache").path,
        ]
        let err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "hubhost render must not die with the plugin's signal")
        let stderr = try String(contentsOf: err, encoding: .utf8)
        #expect(stderr.contains("quarantined libcrash.so: crashed with SIGSEGV in init"), "\(stderr)")
    }

    // MARK: - validate

    func validate(_ files: [URL]) throws -> (status: Int32, results: [[String: Any]]) {
        let result = try TestSupport.run(
            TestSupport.hubhost.path,
            ["validate", "--json", "--timeout", "5"] + files.map(\.path), expectSuccess: false)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result.status, json?["plugins"] as? [[String: Any]] ?? [])
    }

    func failedChecks(_ result: [String: Any]) -> [String] {
        let checks = (result["report"] as? [String: Any])?["checks"] as? [[String: Any]] ?? []
        return checks.filter { $0["passed"] as? Bool == false }.map { "\($0["name"] ?? "")" }
    }

    @Test func validatePassesTheShippedPlugins() throws {
        let shipped = ["libHubDemoC.so", "libHubDemoSwift.so"].map {
            TestSupport.binDirectory.appendingPathComponent($0)
        }
        for file in shipped where !FileManager.default.fileExists(atPath: file.path) {
            Issue.record("\(file.lastPathComponent) is not built in \(TestSupport.binDirectory.path)")
            return
        }
        let (status, results) = try validate(shipped)
        #expect(status == 0, "\(results)")
        #expect(results.count == 2)
        for result in results {
            #expect(result["passed"] as? Bool == true, "\(failedChecks(result)) \(result["failure"] ?? "")")
        }
    }

    /// An init that forgot to register passed validate ("registers no component factory", ok): its components
    /// fell back everywhere without a word about why. It fails validate now, and still loads.
    @Test func aPluginThatRegistersNothingFailsValidate() throws {
        let folder = TestSupport.temporaryDirectory("registers-nothing")
        let plugin = try TestSupport.compilePlugin(
            "swatch.c", to: folder.appendingPathComponent("libnothing.so"), defines: ["REGISTERS_NOTHING"])
        let result = try ProcessRunner.hubhost(["validate", plugin.path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("registers nothing: no component or action factory"), "\(result.stdout)")
    }

    /// A view or a timeout that cannot be used is the command's input problem, not a failed plugin.
    @Test func validateRefusesAnUnusableViewOrTimeoutItself() throws {
        let plugin = TestSupport.binDirectory.appendingPathComponent("libHubDemoC.so")
        let missing = try ProcessRunner.hubhost(["validate", plugin.path, "--view", "/nonexistent/view.json"])
        #expect(missing.status == 2 && missing.stderr.contains("--view /nonexistent/view.json: cannot read"))
        #expect(!missing.stdout.contains("FAIL"), "\(missing.stdout)")
        let timeout = try ProcessRunner.hubhost(["validate", plugin.path, "--timeout", "0"])
        #expect(timeout.status == 64 && timeout.stderr.contains("--timeout: 0 is out of range"), "\(timeout.stderr)")
    }

    @Test func validateFailsEachBrokenPluginWithTheRightReason() throws {
        let cases: [(String, [String], String)] = [
            ("libcrash.so", ["CRASH_IN_INIT"], "crashed with SIGSEGV in init"),
            ("libhang.so", ["HANG_IN_INIT"], "hung in init"),
            ("libfail.so", ["FAIL_IN_INIT"], "descriptor and init"),
            ("libinfinite.so", ["INFINITE_SIZE"], "preferred size finite and non-negative"),
            ("libnullext.so", ["INCOMPLETE_EXTENSION"], "extension tables"),
            ("liblosestate.so", ["LOSE_UI_STATE"], "UI state round trip"),
        ]
        let files = try cases.map { try plugin($0.0, $0.1) }
        let (status, results) = try validate(files)
        #expect(status == 1)
        for (name, _, reason) in cases {
            let result = try #require(results.first { ($0["file"] as? String)?.hasSuffix(name) == true })
            #expect(result["passed"] as? Bool == false)
            let said = ((result["failure"] as? String) ?? "") + failedChecks(result).joined(separator: ",")
            #expect(said.contains(reason), "\(name): expected '\(reason)', got '\(said)'")
            // One shape whatever happened: a crash left `report` out.
            #expect(Set(result.keys) == ["fails", "failure", "file", "notes", "passed", "report"], "\(result.keys)")
        }
        // The good build of the same source passes.
        let (goodStatus, _) = try validate([try plugin("libgood.so")])
        #expect(goodStatus == 0)
    }
}
