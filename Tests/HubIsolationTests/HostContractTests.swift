import Foundation
import HubTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a user running real `hubhost` processes can count on when plugins, views and command lines are not what
/// they should be (Fixtures/unruly.c misbehaves without crashing): output stays whole, mistakes are named, exit
/// statuses say what happened, and the user's files are kept.
@Suite(.serialized) struct HostContractTests {
    static let unruly = TestPaths.packageRoot.appendingPathComponent("Tests/HubIsolationTests/Fixtures/unruly.c")

    /// A plugin folder with unruly (built with `flags`) and the shipped C demo, and a view of both.
    final class Setup {
        let folder: TemporaryFolder
        var plugins: URL { folder.appending("plugins") }
        var cache: URL { folder.appending("cache") }
        var view: URL { folder.appending("view.json") }

        init(flags: [String] = [], view json: String? = nil) throws {
            folder = try TemporaryFolder("hubhost-contract")
            try FileManager.default.createDirectory(
                at: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try FixtureCompiler.compile(
                HostContractTests.unruly, to: plugins.appendingPathComponent("libunruly.so"), flags: flags)
            try FileManager.default.copyItem(
                at: TestPaths.binDirectory.appendingPathComponent("libHubDemoC.so"),
                to: plugins.appendingPathComponent("libdemoc.so"))
            let body = """
                {"body": [
                  {"id": "a", "component": {"id": "unruly:row"}, "text": {"title": "A"}},
                  {"id": "b", "component": {"id": "cdemo:banner"}, "text": {"title": "B"}}
                ]}
                """
            try Data((json ?? body).utf8).write(to: view)
        }

        /// `list-namespaces` over a folder `name` of its own, holding this setup's plugin as liba.so and the C demo
        /// plugin as libz.so, which loads after it.
        func listWithTheDemoAfterIt(in name: String) throws -> ProcessResult {
            let folder = self.folder.appending(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: plugins.appendingPathComponent("libunruly.so"), to: folder.appendingPathComponent("liba.so"))
            try FileManager.default.copyItem(
                at: plugins.appendingPathComponent("libdemoc.so"), to: folder.appendingPathComponent("libz.so"))
            return try ProcessRunner.hubhost([
                "list-namespaces", "--plugins", folder.path, "--plugin-cache",
                self.folder.appending("cache-" + name).path,
            ])
        }

        /// Run in the setup's folder: what a command writes by default stays out of the checkout.
        func hubhost(_ arguments: [String], plugins folder: URL? = nil) throws -> ProcessResult {
            try ProcessRunner.hubhost(
                arguments + ["--plugins", (folder ?? plugins).path, "--plugin-cache", cache.path],
                currentDirectory: self.folder.url)
        }
    }

    /// Started with standard output closed (`>&-` in a script), a render to `-o FILE` keeps the plugin's printf out
    /// of FILE: the file opened next took descriptor 1, and the SVG began with what the plugin printed. With no
    /// `-o`, there is still nowhere to write: exit 2.
    @Test func aClosedStandardOutputIsNotTakenByTheOutputFile() throws {
        let setup = try Setup()
        let out = setup.folder.appending("out.json")
        let command = [
            TestPaths.hubhost.path, "render", setup.view.path, "-o", out.path, "--plugins",
            setup.plugins.path, "--plugin-cache", setup.cache.path,
        ].map { "'\($0)'" }.joined(separator: " ")
        let closed = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", command + " >&-; echo $?"])
        #expect(closed.stdout.isEmpty || closed.stdout == "0\n", "\(closed.stdout)\(closed.stderr)")
        let written = try String(contentsOf: out, encoding: .utf8)
        #expect(!written.contains("UNRULY-STDOUT") && written.hasPrefix("{"), "\(written.prefix(80))")
        let nowhere = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", command.replacing("'-o' '\(out.path)' ", with: "") + " >&-"])
        #expect(nowhere.status == 2 && nowhere.stderr.contains("cannot write -"), "\(nowhere.stderr)")
    }

    /// A `TMPDIR` naming a folder that does not exist (a CI job's) is not where hubhost works: every command that
    /// starts a worker failed ("cannot start a worker process: No such file or directory"), and `validate` made it.
    @Test func aMissingTemporaryFolderIsNotUsedNorMade() throws {
        let setup = try Setup()
        var environment = ProcessInfo.processInfo.environment
        let missing = setup.folder.appending("no/such/tmp")
        environment["TMPDIR"] = missing.path
        let render = try ProcessRunner.hubhost(
            [
                "render", setup.view.path, "--format", "text", "-o", "-", "--plugins", setup.plugins.path,
                "--plugin-cache", setup.cache.path,
            ], environment: environment, currentDirectory: setup.folder.url)
        #expect(render.status == 0, "\(render.stderr)")
        let validate = try ProcessRunner.hubhost(
            ["validate", setup.plugins.appendingPathComponent("libdemoc.so").path], environment: environment,
            currentDirectory: setup.folder.url)
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.folder.appending("no").path))
    }

    @Test func whatAPluginPrintsGoesToStderrAndTheOutputStaysWhole() throws {
        let setup = try Setup()
        let json = try setup.hubhost(["render", setup.view.path, "--format", "json", "-o", "-"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(!json.stdout.contains("UNRULY-STDOUT"), "the plugin's printf is not in the document")
        #expect(json.stderr.contains("UNRULY-STDOUT"), "but it is seen, on stderr")
        // Escaped: a plugin's output cannot colour the terminal, set its title or clear it.
        #expect(json.stderr.contains(#"UNRULY-COLOUR \u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}"#), "\(json.stderr)")
        #expect(!json.stderr.contains("\u{1b}"), "no raw escape reaches the terminal")
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) != nil, "stdout is one JSON document")
        // Warnings a plugin logs are shown without --verbose; its info lines are not.
        #expect(json.stderr.contains("unruly warning") && json.stderr.contains("com.example.unruly"), "\(json.stderr)")
        #expect(!json.stderr.contains("unruly info"))
        // The same holds for the events trace in JSON lines.
        let script = setup.folder.appending("tap.jsonl")
        try Data(#"{"event":"tap","indexPath":[0]}"#.utf8 + [10]).write(to: script)
        let events = try setup.hubhost(["events", setup.view.path, script.path, "--json"])
        #expect(events.status == 0, "\(events.stderr)")
        for line in events.stdout.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
    }

    /// A plugin that changes the working directory, the umask, a signal handler and sets an alarm while loading,
    /// and changes directory and umask again in every draw: what loading changed is put back and named; the
    /// user's relative `-o` lands where the user was, with the user's umask. (Outputs went to the plugin's folder,
    /// world-writable; its SIGSEGV handler made another plugin's crash look like a hang.)
    @Test func whatAPluginChangesForTheWholeProcessDoesNotMoveTheUsersFiles() throws {
        let elsewhere = try TemporaryFolder("hubhost-elsewhere")
        let setup = try Setup(flags: ["-DCHANGE_PROCESS=\"\(elsewhere.url.path)\""])
        let mask = umask(0o022)
        umask(mask)
        let render = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        #expect(render.status == 0, "put right and said, not a problem of the output: \(render.stderr)")
        for said in [
            "libunruly.so: changed the working directory to", "libunruly.so: changed the umask to 0",
            "libunruly.so: set its own SIGSEGV handler", "libunruly.so: set an alarm",
        ] {
            #expect(render.stderr.contains(said), "\(said): \(render.stderr)")
        }
        var status = stat()
        #expect(stat(setup.folder.appending("out.svg").path, &status) == 0, "written where the user was")
        #expect(status.st_mode & 0o777 == 0o666 & ~mask, "with the user's umask: \(String(status.st_mode, radix: 8))")
        let galleryFile = try setup.hubhost(["gallery", "-o", "gallery.html"])
        #expect(galleryFile.status == 0, "\(galleryFile.stderr)")
        #expect(FileManager.default.fileExists(atPath: setup.folder.appending("gallery.html").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path).isEmpty, "nothing went there")
        // A plugin loaded after it is not blamed for what was put back (the C library marks every handler it
        // installs, and the one put back differed from the one taken by that mark alone).
        let listed = try setup.listWithTheDemoAfterIt(in: "after")
        #expect(listed.stderr.contains("liba.so: set its own SIGHUP handler"), "\(listed.stderr)")
        #expect(!listed.stderr.contains("libz.so: set its own"), "\(listed.stderr)")
    }

    /// A plugin that lowers the file size limit for good (hard limit too) while loading: the probe, which probes a
    /// folder's plugins in one process, quarantined the next plugin, whose writes then died of SIGXFSZ, and left the
    /// culprit active. The culprit is refused (when the limit cannot be raised again) and the next plugin is not.
    @Test func aPluginThatLowersTheFileSizeLimitIsBlamedNotTheNextOne() throws {
        let setup = try Setup(flags: ["-DLOWER_FILE_SIZE"])
        let listed = try setup.listWithTheDemoAfterIt(in: "limit")
        let said = listed.stdout + listed.stderr
        #expect(!said.contains("libz.so: crashed") && !said.contains("quarantined  libz.so"), "\(said)")
        #expect(listed.stdout.contains("cdemo"), "\(said)")
        // Where this process may not raise a hard limit again (no CAP_SYS_RESOURCE), the culprit is refused.
        if said.contains("cannot raise again") {
            #expect(said.contains("liba.so: failed in process left usable"), "\(said)")
        }
    }

    /// A child plugin code forked that returns into hubhost (no exec, no _exit) is ended there: it went on rendering
    /// and wrote the output again (two JSON documents in the file, exit 0).
    @Test func aForkedChildThatReturnsIntoHubhostIsEnded() throws {
        let setup = try Setup(flags: ["-DFORK_RETURNS"])
        // (Draw forks: the drawing formats call it.)
        let render = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        #expect(render.stderr.contains("a process plugin code forked returned"), "\(render.stderr)")
        let written = try String(contentsOf: setup.folder.appending("out.svg"), encoding: .utf8)
        #expect(written.components(separatedBy: "<svg xmlns").count == 2, "one document: \(written.prefix(300))")
    }

    /// A plugin that makes standard output non-blocking (it is the user's pipe or terminal, shared with the shell):
    /// a reader slower than the render got "cannot write -: Resource temporarily unavailable" (exit 2), and the
    /// shell was left with a non-blocking descriptor. The output is written whole, and the flag put back.
    @Test func aNonBlockingStandardOutputIsWrittenWholeAndPutBack() throws {
        let rows = (0..<800).map { #"{"id": "r\#($0)", "component": {"id": "unruly:row"}, "text": {"title": "R"}}"# }
        let setup = try Setup(flags: ["-DNONBLOCKING_STDOUT"], view: "{\"body\": [\(rows.joined(separator: ","))]}")
        let process = Process()
        process.executableURL = TestPaths.hubhost
        process.arguments = [
            "render", setup.view.path, "--format", "svg", "-o", "-", "--plugins", setup.plugins.path,
            "--plugin-cache", setup.cache.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // The same open pipe as the child's standard output, as a shell's is: its flags are the child's.
        let shared = dup(output.fileHandleForWriting.fileDescriptor)
        try process.run()
        Thread.sleep(forTimeInterval: 1)  // a slow reader: the pipe fills long before
        final class Box: @unchecked Sendable { var data = Data() }
        let read = Box()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            read.data = output.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }
        process.waitUntilExit()
        let flags = fcntl(shared, F_GETFL)
        close(shared)
        done.wait()
        #expect(process.terminationStatus == 0)
        let data = read.data
        #expect(String(decoding: data, as: UTF8.self).hasSuffix("</svg>\n"), "\(data.count) bytes")
        #expect(flags >= 0 && flags & O_NONBLOCK == 0, "left non-blocking")
    }

    /// Plugin code that signals its worker's parent (`kill(getppid(), SIGTERM)`) ended the user's command with
    /// "Terminated", naming nobody, on every run. The supervisor ends the worker instead and blames the call.
    /// SIGSTOP froze the command until a CI timeout: it is sent as SIGTERM, and said as what was meant.
    @Test(arguments: ["SIGTERM", "SIGSTOP"])
    func aPluginThatSignalsTheSupervisorEndsOnlyItsWorker(signal: String) throws {
        let setup = try Setup(flags: ["-DSIGNAL_PARENT=\(signal)"])
        let render = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        #expect(render.status == 5, "\(render.stderr)")
        #expect(
            render.stderr.contains(
                "libunruly.so (com.example.unruly 1.0.0) sent \(signal) to hubhost's supervising process in draw"),
            "\(render.stderr)")
        #expect(FileManager.default.fileExists(atPath: setup.folder.appending("out.svg").path))
    }

    /// `list-namespaces` runs init in the user's own process: `kill(0, SIGKILL)` there killed the user's script with
    /// it. The signal reaches only hubhost's process (the next listing runs in a worker, which names the plugin).
    @Test func aPluginThatKillsItsGroupInTheUsersProcessSparesTheUsersScript() throws {
        let setup = try Setup(flags: ["-DKILL_GROUP_IN_LOAD"])
        let listing = [
            TestPaths.hubhost.path, "list-namespaces", "--plugins", setup.plugins.path, "--plugin-cache",
            setup.cache.path,
        ].map { "'\($0)'" }.joined(separator: " ")
        // A session of its own: without the fix the whole group dies, and it must not be the test runner's.
        let script = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/setsid"),
            ["--wait", "/bin/sh", "-c", "\(listing) >/dev/null 2>&1; echo continues"])
        #expect(script.stdout.contains("continues"), "\(script.stdout)\(script.stderr)")
    }

    /// An alarm plugin code sets in a call ends the worker later, outside plugin code: it read "hubhost's worker
    /// crashed with SIGALRM outside plugin code", naming nobody (dev restarted its worker for ever). The call that
    /// set it is blamed and its plugin quarantined, and the render is done without it.
    @Test func aTimerAPluginSetIsBlamedOnTheCallThatSetIt() throws {
        let rows = (0..<3000).map { #"{"id": "r\#($0)", "component": {"id": "unruly:row"}, "text": {"title": "R"}}"# }
        let setup = try Setup(flags: ["-DTIMER_IN_DRAW"], view: "{\"body\": [\(rows.joined(separator: ","))]}")
        let render = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        // Where the timer fires inside a later call of the same plugin, that call is blamed: either way, this plugin.
        #expect(render.status == 5, "\(render.stderr)")
        #expect(render.stderr.contains("libunruly.so (com.example.unruly 1.0.0)"), "\(render.stderr)")
        #expect(!render.stderr.contains("outside plugin code"), "\(render.stderr)")
        #expect(FileManager.default.fileExists(atPath: setup.folder.appending("out.svg").path))
    }

    /// A plugin's atexit handler that aborts as the worker ends is the plugin's fault, named and quarantined like
    /// any other (it was reported as a hubhost bug, exit 2 with the output already replaced, on every run).
    @Test func aCrashInAPluginsExitHandlerIsThePlugins() throws {
        let setup = try Setup(flags: ["-DABORT_AT_EXIT"])
        let first = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        #expect(first.status == 5, "\(first.stderr)")
        #expect(
            first.stderr.contains(
                "libunruly.so (com.example.unruly 1.0.0) crashed with SIGABRT in its own code outside"),
            "\(first.stderr)")
        #expect(!first.stderr.contains("hubhost bug"))
        let again = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "out.svg"])
        #expect(again.status == 1 && again.stderr.contains("quarantined"), "\(again.stderr)")
    }

    /// The same crash after `snapshot record` drew its goldens: none is put in place (they were, and the run said
    /// "nothing recorded"), and no staged file is left in the goldens folder.
    @Test func aRecordWhosePluginCrashesAtExitRecordsNothing() throws {
        let setup = try Setup(flags: ["-DABORT_AT_EXIT"])
        let goldens = setup.folder.appending("goldens")
        let result = try setup.hubhost(["snapshot", "record", setup.view.path, "--out", goldens.path])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains("libunruly.so") && result.stderr.contains("nothing recorded"), "\(result.stderr)")
        #expect(!result.stdout.contains("recorded"), "\(result.stdout)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: goldens.path)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test func aMissingPluginFolderOnTheCommandLineStopsTheCommandAndKeepsTheOutput() throws {
        let setup = try Setup()
        let output = setup.folder.appending("keep.svg")
        try Data("precious".utf8).write(to: output)
        let result = try setup.hubhost(
            ["render", setup.view.path, "--format", "svg", "-o", output.path], plugins: setup.folder.appending("typo"))
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("--plugins \(setup.folder.appending("typo").path): no such folder"))
        #expect(try String(contentsOf: output, encoding: .utf8) == "precious")
        let listed = try setup.hubhost(["list-namespaces"], plugins: setup.folder.appending("typo"))
        #expect(listed.status == 3)
        // Before the view is read (its problems would come first), and in dev too (its workers failed to watch the
        // folder and were restarted for ever).
        try Data("{\"body\": 3}".utf8).write(to: setup.view)
        let first = try setup.hubhost(["render", setup.view.path], plugins: setup.folder.appending("typo"))
        #expect(first.status == 3 && !first.stderr.contains("$.body"), "\(first.stderr)")
        let dev = try setup.hubhost(["dev", setup.view.path, "--port", "0"], plugins: setup.folder.appending("typo"))
        #expect(dev.status == 3, "\(dev.stderr)")
    }

    @Test func aRefusedPluginMakesTheStatusOneNotZero() throws {
        let setup = try Setup()
        // Others may write the folder: every plugin in it is refused, and the view renders with fallbacks.
        chmod(setup.plugins.path, 0o757)
        let result = try setup.hubhost(["render", setup.view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("writable by others"))
    }

    /// A margin is checked once the plugin's call returned: the report names the plugin and the call (it said "a
    /// plugin").
    @Test func aLayoutManagersBadMarginNamesThePluginAndTheCall() throws {
        let setup = try Setup(flags: ["-DNAN_MARGIN"])
        let result = try setup.hubhost(
            ["render", setup.view.path, "--format", "text", "-o", "-", "--layout-manager", "unruly"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "hubhost: com.example.unruly 1.0.0 (libunruly.so) in its layout manager's margin_to_edge: margin nan is "
                    + "neither finite"), "\(result.stderr)")
    }

    @Test func componentIdsNoPluginProvidesAreWarnedOfWithTheNearestId() throws {
        let view = """
            {"body": [
              {"id": "a", "component": {"id": "unruly:rwo"}},
              {"id": "b", "component": {"id": "unrluy:row"}},
              {"id": "c", "component": {"id": "unruly:rwo"}},
              {"id": "d", "text": {"title": "no component: Hub's default, not a problem"}},
              {"id": "e", "component": {"id": "unruly:row"}, "children": [{"id": "e1", "component": {"id": "cdemo:badj"}}]}
            ]}
            """
        let setup = try Setup(view: view)
        let result = try setup.hubhost(["render", setup.view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 0, "a warning, not a problem: Hub falls back by design. \(result.stderr)")
        #expect(
            result.stderr.contains(
                #"$.body[0].component.id: warning: "unruly:rwo": namespace "unruly" of com.example.unruly 1.0.0"#),
            "\(result.stderr)")
        #expect(result.stderr.contains(#"has no component "rwo" (did you mean "row"?)"#))
        #expect(result.stderr.contains("(and 1 more model(s) naming it)"))
        #expect(
            result.stderr.contains(
                #"$.body[1].component.id: warning: "unrluy:row": no loaded plugin serves namespace "unrluy" (did you mean "unruly"?)"#
            ))
        #expect(result.stderr.contains(#"$.body[4].children[0].component.id: warning: "cdemo:badj""#))
        #expect(!result.stderr.contains("$.body[3]"))
        #expect(result.stdout.contains("fallback"), "the view still renders, with fallbacks")
        let strict = try setup.hubhost(["render", setup.view.path, "--strict", "--format", "text", "-o", "-"])
        #expect(strict.status == 2 && strict.stdout.isEmpty, "\(strict.stderr)")
    }

    @Test func aShowcaseThatCountsMinusOneStoriesIsAProblemNotACrash() throws {
        let setup = try Setup(flags: ["-DHUGE_STORIES"])
        let output = setup.folder.appending("gallery.json")
        let result = try setup.hubhost(["gallery", "--format", "json", "-o", output.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("story_count returned 18446744073709551615"), "\(result.stderr)")
        #expect(
            result.stderr.contains(#"a second story named \"same\""#) || result.stderr.contains("a second story named"))
        let gallery = try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [[String: Any]]
        #expect(gallery?.contains { $0["component"] as? String == "cdemo:banner" } == true, "the others are drawn")
    }

    /// A story that draws, but not as its author meant, is said as `render` says it of a view: goldens drawn with
    /// fallbacks or at the wrong width would be wrong.
    @Test func storiesThatDrawWrongAreWarnedOf() throws {
        let setup = try Setup(flags: ["-DODD_STORIES"])
        let gallery = try setup.hubhost(["gallery", "-o", setup.folder.appending("g.html").path])
        #expect(gallery.status == 1, "\(gallery.stderr)")
        for expected in [
            #"unruly:row story "huge width": width 50000.0 left out (a width is 1 to 4096)"#,
            #"unruly:row story "other component": its model names "cdemo:banner", not unruly:row"#,
            #"unruly:row story "broken parts": $.images.main.uri:"#,
            #"unruly:row story "broken parts": $.children[0].component.id: "gone:card": no loaded plugin serves"#,
        ] {
            #expect(gallery.stderr.contains(expected), "\(expected)\n\(gallery.stderr)")
        }
        let record = try setup.hubhost(["snapshot", "record", "--gallery", "--out", setup.folder.appending("g").path])
        #expect(record.status == 1, "recorded, with the problems said: \(record.stderr)")
        // The JSON's "warnings" are the same as stderr's, for a CI step that reads it.
        let json = try setup.hubhost(["gallery", "--format", "json"])
        let entries = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        let stories = entries.flatMap { $0["stories"] as? [[String: Any]] ?? [] }
        let broken = stories.first { $0["name"] as? String == "broken parts" }?["warnings"] as? [String] ?? []
        #expect(
            broken.count == 2 && broken.contains { $0.contains(#""gone:card": no loaded plugin serves"#) }, "\(broken)")
        // `validate` fails what the gallery fails, so a plugin it passes passes the gallery too; a child of
        // another plugin's namespace is not its business (it checks the plugin alone).
        let plugin = setup.plugins.appendingPathComponent("libunruly.so").path
        let validated = try ProcessRunner.hubhost(["validate", plugin])
        #expect(validated.status == 1, "\(validated.stdout)")
        #expect(
            validated.stdout.contains("huge width: width 50000.0 left out")
                && validated.stdout.contains(#"other component: its model names "cdemo:banner""#)
                && !validated.stdout.contains("gone:card"), "\(validated.stdout)")
        // Each story is drawn at its own widths: a component that crashes only at 320 pt is caught.
        try FixtureCompiler.compile(
            HostContractTests.unruly, to: setup.plugins.appendingPathComponent("libunruly.so"),
            flags: ["-DODD_STORIES", "-DCRASH_BELOW=330"])
        let narrow = try ProcessRunner.hubhost(["validate", plugin])
        #expect(narrow.status == 1, "\(narrow.stdout)")
        #expect(
            narrow.stdout.contains(#"crashed with SIGSEGV in drawing a story [unruly:row] for story "huge width""#),
            "\(narrow.stdout)")
    }

    /// A story naming a component of a plugin that was quarantined says so, as a view's model does (the gallery
    /// said "no loaded plugin serves namespace", which reads as a typo).
    @Test func aStoryNamingAQuarantinedPluginSaysItIsQuarantined() throws {
        let setup = try Setup(flags: ["-DODD_STORIES", #"-DODD_CHILD="fragile:card""#])
        try FixtureCompiler.compile(
            PluginFaultTests.fragile, to: setup.plugins.appendingPathComponent("libfragile.so"), flags: ["-DFAULT_IN=4"]
        )
        let trending = setup.folder.appending("trending.json")
        try Data(
            #"{"body": [{"id": "t", "component": {"id": "fragile:card"}, "text": {"title": "Trending"}}]}"#.utf8
        ).write(to: trending)
        let crashed = try setup.hubhost(["render", trending.path, "--format", "svg", "-o", "-"])
        #expect(crashed.status == 5, "\(crashed.stderr)")
        let gallery = try setup.hubhost(["gallery", "-o", setup.folder.appending("g.html").path])
        let expected =
            #"unruly:row story "broken parts": $.children[0].component.id: "fragile:card": namespace "fragile" is "#
            + "served by libfragile.so, which is quarantined"
        #expect(gallery.stderr.contains(expected), "\(gallery.stderr)")
    }

    /// A process plugin code forks in a probe, and leaves running, is ended with the probe, in its group or out of
    /// it (`setsid`): it held the scanner's pipe, so the listing waited out the plugin's budget and quarantined it
    /// as "hung in unload", and the process outlived hubhost. `validate` fails the plugin for it.
    @Test(arguments: [1, 2]) func processesAPluginLeavesRunningInAProbeAreEnded(how: Int) throws {
        let setup = try Setup(flags: ["-DFORK_IN_PROBE=\(how)"])
        let started = Date()
        let listing = try setup.hubhost(["list-namespaces"])
        #expect(Date().timeIntervalSince(started) < 4, "it waited for the forked process")
        #expect(listing.status == 0 && listing.stdout.contains("unruly "), "\(listing.stdout)\n\(listing.stderr)")
        #expect(!listing.stdout.contains("quarantined"), "\(listing.stdout)")
        #expect(try processesNaming(setup.cache.path).isEmpty, "a probe's fork outlived the listing")

        let validated = try ProcessRunner.hubhost([
            "validate", setup.plugins.appendingPathComponent("libunruly.so").path,
        ])
        #expect(validated.status == 1, "\(validated.stdout)")
        let said = try #require(
            validated.stdout.split(separator: "\n").first { $0.contains("fail processes left running") },
            "\(validated.stdout)")
        #expect(said.contains("plugin code left 1 process(es) running when its probe ended: pid "), "\(said)")
        let pid = try #require(
            said.firstRange(of: "pid ").flatMap { Int32(said[$0.upperBound...].prefix { $0.isNumber }) })
        #expect(kill(pid, 0) != 0, "the process is gone")
    }

    /// A plugin that closes standard output in a probe no longer hides the reports after it (the scanner blamed it
    /// "failed in unload: exited with status 0 without a report"): what it prints goes with its standard error, as
    /// in a worker, where closing it is harmless. Closing standard error is said, as a worker's supervisor says it.
    @Test func aPluginThatClosesAStandardDescriptorInItsProbeIsToldApart() throws {
        let stdout = try Setup(flags: ["-DCLOSE_IN_PROBE=1"])
        let listed = try stdout.hubhost(["list-namespaces"])
        #expect(listed.status == 0 && !listed.stdout.contains("quarantined"), "\(listed.stdout)")
        let validated = try ProcessRunner.hubhost([
            "validate", stdout.plugins.appendingPathComponent("libunruly.so").path,
        ])
        #expect(!validated.stdout.contains("standard descriptors"), "\(validated.stdout)")

        let stderr = try Setup(flags: ["-DCLOSE_IN_PROBE=2"])
        let refused = try stderr.hubhost(["list-namespaces"])
        #expect(refused.stdout.contains("cdemo "), "the other plugin: \(refused.stdout)")
        #expect(
            refused.stdout.contains(
                "libunruly.so: failed in standard descriptors: closed descriptors it did not open (hubhost's standard "
                    + "error) in init"), "\(refused.stdout)")
    }

    /// A listing loads plugins in its own process: a process a plugin's init forks there and leaves running held the
    /// listing's standard output (`list-namespaces | cat` waited for it) and outlived it. It is ended, and said.
    @Test func aProcessAPluginLeavesRunningInAListingIsEnded() throws {
        let setup = try Setup(flags: ["-DFORK_IN_LOAD"])
        let started = Date()
        let listing = try setup.hubhost(["list-namespaces"])
        #expect(Date().timeIntervalSince(started) < 20, "it waited for the forked process")
        #expect(listing.status == 1 && listing.stdout.contains("unruly "), "\(listing.stdout)\n\(listing.stderr)")
        let said = try #require(
            listing.stderr.split(separator: "\n").first { $0.contains("plugin code left 1 process(es) running: pid ") },
            "\(listing.stderr)")
        let pid = try #require(
            said.firstRange(of: "pid ").flatMap { Int32(said[$0.upperBound...].prefix { $0.isNumber }) })
        #expect(kill(pid, 0) != 0, "the process is gone")
    }

    /// The pids of processes whose command line holds `text`.
    private func processesNaming(_ text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { name in
            guard Int32(name) != nil, let bytes = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else {
                return false
            }
            return String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }

    @Test func anInitErrorWithoutItsNULIsReadWithinTheBufferAndEscaped() throws {
        let setup = try Setup(flags: ["-DBAD_INIT_ERROR"])
        let result = try setup.hubhost(["list-namespaces"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("libunruly.so: init failed: \\u{1b}EEE"), "\(result.stdout)")
        #expect(result.stdout.count < 1200, "the message is cut: \(result.stdout.count) characters")
        #expect(!result.stdout.contains("\u{1B}"), "no escape sequence reaches the terminal")
        #expect(result.stdout.contains("cdemo"), "the other plugin is listed")
    }

    @Test func aDecompressionBombIsRefusedBeforeAnythingDecodesIt() throws {
        // A 20000 × 20000 grey PNG header (400 megapixels): only the header matters, nothing is decoded.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20, 8, 0, 0, 0, 0, 0, 0, 0, 0]
        let uri = "data:image/png;base64," + Data(png).base64EncodedString()
        let view = """
            {"body": [{"id": "a", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "\(uri)"}}}]}
            """
        let setup = try Setup(view: view)
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("$.body[0].images.main.uri"), "\(result.stderr)")
        #expect(result.stderr.contains("is 20000×20000 pixels, over the limit of 50000000"), "\(result.stderr)")
        #expect(!result.stdout.contains(uri), "the image is not embedded in the drawing")
    }

    /// An image refused for what drawing it would cost (nested `<use>` references) is a problem whether it comes
    /// as a file or as a `data:` URI (a file's was only a warning, and the render ended with status 0).
    @Test func aCostlyImageIsAProblemAsAFileAndAsADataURI() throws {
        let uses = String(repeating: ##"<use href="#r"/>"##, count: 70)
        let svg =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><rect id="r" width="1" height="1"/>"#
            + uses + "</svg>"
        let dataURI = "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString()
        for uri in ["bomb.svg", dataURI] {
            let view = """
                {"body": [{"id": "a", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "\(uri)"}}}]}
                """
            let setup = try Setup(view: view)
            try Data(svg.utf8).write(to: setup.view.deletingLastPathComponent().appendingPathComponent("bomb.svg"))
            let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
            #expect(result.status == 1, "\(uri.prefix(20)): \(result.stderr)")
            #expect(
                result.stderr.contains("$.body[0].images.main.uri: image")
                    && result.stderr.contains("70 <use> references (more than 16)"), "\(result.stderr)")
            #expect(!result.stderr.contains("warning"), "\(result.stderr)")
            #expect(!result.stdout.contains("<use"), "not drawn")
        }
    }

    @Test func aMissingLocalImageIsWarnedOfWithItsPath() throws {
        let view =
            #"{"body": [{"id": "a", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "missing.png"}}}]}"#
        let setup = try Setup(view: view)
        let result = try setup.hubhost(["render", setup.view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 0, "a warning: a missing image draws its placeholder. \(result.stderr)")
        #expect(
            result.stderr.contains(
                #"$.body[0].images.main.uri: warning: image "missing.png" does not exist (its placeholder is drawn)"#),
            "\(result.stderr)")
    }

    /// Images that will be drawn as placeholders for what they hold are said too: a file that is no image, a
    /// data: URI that is malformed or holds no image. A real image is not. Files refused for what drawing them
    /// would cost are problems, as such data: URIs are.
    @Test func imagesThatCannotBeDrawnAreWarnedOf() throws {
        let view = #"""
            {"body": [
              {"id": "a", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "noise.png"}}},
              {"id": "b", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "data:image/png;base64,aGVsbG8="}}},
              {"id": "c", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "data:image/png;base64"}}},
              {"id": "d", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "real.png"}}},
              {"id": "e", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": ".ssh/id_rsa"}}},
              {"id": "f", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "data:text/html;base64,PHNjcmlwdD4="}}},
              {"id": "g", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "bomb.png"}}},
              {"id": "h", "component": {"id": "cdemo:tile"}, "images": {"main": {"uri": "blur.svg"}}}
            ]}
            """#
        let setup = try Setup(view: view)
        // A file beside the view that is no image (a key): warned of, and none of its bytes reach the output.
        try FileManager.default.createDirectory(at: setup.folder.appending(".ssh"), withIntermediateDirectories: true)
        try Data("-----BEGIN OPENSSH PRIVATE KEY----- TOPSECRET".utf8).write(to: setup.folder.appending(".ssh/id_rsa"))
        // A PNG whose header asks for 100000 x 100000 pixels: refused as a data: URI is, and said as a problem.
        var bomb: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        bomb += [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0, 0, 0, 0, 0]
        try Data(bomb).write(to: setup.folder.appending("bomb.png"))
        // A few hundred bytes of SVG whose filter takes seconds to minutes to draw: not drawn, and said.
        try Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000"><filter id="f"><feGaussianBlur stdDeviation="900"/></filter><rect width="4000" height="4000" filter="url(#f)"/></svg>"#
                .utf8
        ).write(to: setup.folder.appending("blur.svg"))
        try Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: setup.folder.appending("noise.png"))
        try FileManager.default.copyItem(
            at: TestPaths.examples.appendingPathComponent("assets/cover.png"), to: setup.folder.appending("real.png"))
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 1, "problems (the costly images): \(result.stderr)")
        #expect(result.stderr.contains(#"$.body[0].images.main.uri: warning: image "noise.png" holds no image"#))
        #expect(
            result.stderr.contains("$.body[1].images.main.uri: warning:") && result.stderr.contains("holds no image"))
        #expect(
            result.stderr.contains("$.body[2].images.main.uri: warning:")
                && result.stderr.contains("is not a valid data: URI"))
        #expect(!result.stderr.contains("$.body[3]"), "\(result.stderr)")
        #expect(result.stderr.contains(#"$.body[4].images.main.uri: warning: image ".ssh/id_rsa" holds no image"#))
        #expect(result.stderr.contains("$.body[5].images.main.uri: warning:"), "\(result.stderr)")
        #expect(
            result.stderr.contains(#"$.body[6].images.main.uri: image "bomb.png" is 100000×100000"#), "\(result.stderr)"
        )
        #expect(
            result.stderr.contains(#"$.body[7].images.main.uri: image "blur.svg" is an SVG image with filter"#)
        )
        // Only the real image is in the drawing, as a PNG by its signature.
        let secret = Data("-----BEGIN OPENSSH PRIVATE KEY----- TOPSECRET".utf8).base64EncodedString()
        #expect(!result.stdout.contains(String(secret.prefix(24))), "the key is embedded")
        #expect(!result.stdout.contains("PHNjcmlwdD4") && !result.stdout.contains("aGVsbG8"))
        #expect(!result.stdout.contains("application/octet-stream") && !result.stdout.contains("data:text/html"))
        #expect(result.stdout.components(separatedBy: "data:image/png;base64,").count == 2, "one image drawn")
    }

    @Test func aMissingSnapshotInputIsNotDoneExitTwo() throws {
        let setup = try Setup()
        let golden = setup.folder.appending("golden")
        let record = try setup.hubhost(["snapshot", "record", setup.view.path, "--out", golden.path])
        #expect(record.status == 0, "\(record.stderr)")
        let verify = try setup.hubhost(
            ["snapshot", "verify", setup.view.path, setup.folder.appending("nope.json").path, "--out", golden.path])
        #expect(verify.status == 2, "\(verify.stderr)")
        #expect(verify.stderr.contains("nope.json: no such file or folder"))
    }

    /// And where in the file, as a worker's report does (a probe's said no more than the call).
    @Test func aProbeNamesTheCallThatCrashedAndItsSampleModel() throws {
        let setup = try Setup(flags: ["-DCRASH_IN_DRAW_WHEN_PROBED", "-g"])
        let result = try setup.hubhost(["list-namespaces"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stdout.contains(#"crashed with SIGSEGV in draw [unruly:row] for sample model ""#),
            "named as draw, not configure: \(result.stdout)")
        let offset = try #require(
            result.stdout.firstMatch(of: try Regex(#"at libunruly\.so\+(0x[0-9a-f]+)"#))?.output[1].substring,
            "\(result.stdout)")
        let line = try ProcessRunner.tool(
            "addr2line", ["-f", "-e", setup.plugins.appendingPathComponent("libunruly.so").path, String(offset)])
        #expect(line.stdout.hasPrefix("draw\n") && line.stdout.contains("unruly.c:"), "\(line.stdout)")
    }

    /// A plugin that finds a library of its own through `$ORIGIN` cannot find it beside its private copy: the
    /// refusal says why and what to do (it said only "cannot open shared object file", the library being there).
    @Test func aLibraryFoundThroughOriginIsExplained() throws {
        let folder = try TemporaryFolder("hubhost-origin")
        let plugins = folder.appending("plugins")
        try FileManager.default.createDirectory(
            at: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let dependency = folder.appending("dep.c")
        try "int origin_dependency(void) { return 7; }\n".write(to: dependency, atomically: true, encoding: .utf8)
        _ = try ProcessRunner.tool(
            "cc", ["-shared", "-fPIC", dependency.path, "-o", plugins.appendingPathComponent("liborigindep.so").path])
        try FixtureCompiler.compile(
            Self.unruly, to: plugins.appendingPathComponent("libunruly.so"),
            flags: ["-Wl,--no-as-needed", "-L", plugins.path, "-lorigindep", "-Wl,-rpath,$ORIGIN"])
        // The spelling CMake and Meson often write.
        try FixtureCompiler.compile(
            Self.unruly, to: plugins.appendingPathComponent("libunruly2.so"),
            flags: ["-Wl,--no-as-needed", "-L", plugins.path, "-lorigindep", "-Wl,-rpath,${ORIGIN}/."])
        let result = try ProcessRunner.hubhost(
            ["list-namespaces", "--plugins", plugins.path, "--plugin-cache", folder.appending("cache").path],
            currentDirectory: folder.url)
        #expect(
            result.stdout.contains("libunruly.so: dlopen failed: liborigindep.so: cannot open shared object file")
                && result.stdout.contains("its run path names $ORIGIN: hubhost loads a private copy"),
            "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.components(separatedBy: "its run path names $ORIGIN").count == 3, "\(result.stdout)")
    }

    @Test func validateTakesFoldersAndChecksWhatTheLoaderAndTheGalleryWouldMeet() throws {
        let setup = try Setup(flags: ["-DHUGE_STORIES"])
        // A folder: every plugin in it.
        let result = try ProcessRunner.hubhost(["validate", setup.plugins.path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("PASS libdemoc.so"), "\(result.stdout)")
        #expect(result.stdout.contains("FAIL libunruly.so"), "\(result.stdout)")
        #expect(result.stdout.contains("stories read and drawn"), "the showcase is exercised: \(result.stdout)")
        #expect(result.stdout.contains("story_count returned"), "\(result.stdout)")
        // A file the loader would refuse fails validation too.
        try FixtureCompiler.compile(HostContractTests.unruly, to: setup.plugins.appendingPathComponent("libunruly.so"))
        chmod(setup.plugins.appendingPathComponent("libunruly.so").path, 0o775)
        let writable = try ProcessRunner.hubhost([
            "validate", setup.plugins.appendingPathComponent("libunruly.so").path,
        ])
        #expect(writable.status == 1 && writable.stdout.contains("writable by its group"), "\(writable.stdout)")
        let allowed = try ProcessRunner.hubhost(
            ["validate", "--allow-unsafe-permissions", setup.plugins.appendingPathComponent("libunruly.so").path])
        #expect(allowed.status == 0, "\(allowed.stdout)")
    }

    @Test func twoBuildsOfOnePluginAreToldApartFromTwoPlugins() throws {
        let setup = try Setup()
        // An old build left beside the new one: same id, other bytes.
        try FixtureCompiler.compile(
            HostContractTests.unruly, to: setup.plugins.appendingPathComponent("libunruly-old.so"),
            flags: ["-DHUGE_STORIES"])
        let result = try setup.hubhost(["list-namespaces"])
        #expect(result.status == 1)
        #expect(
            result.stdout.contains("they are copies of one plugin, com.example.unruly; remove all but one"),
            "\(result.stdout)")
        #expect(!result.stdout.contains("--prefer com.example.unruly or"))
    }

    @Test func goldensAreNotRecordedWithoutAPluginThatFaulted() throws {
        let setup = try Setup()
        let golden = setup.folder.appending("golden")
        let first = try setup.hubhost(["snapshot", "record", setup.view.path, "--out", golden.path])
        #expect(first.status == 0, "\(first.stderr)")
        let image = golden.appendingPathComponent("view@375.png")
        let good = try Data(contentsOf: image)
        // A new build that crashes while drawing: the run that meets the crash records nothing…
        try FixtureCompiler.compile(
            HostContractTests.unruly, to: setup.plugins.appendingPathComponent("libunruly.so"),
            flags: ["-DCRASH_IN_DRAW"])
        let faulted = try setup.hubhost(["snapshot", "record", setup.view.path, "--out", golden.path])
        #expect(faulted.status == 5, "\(faulted.stderr)")
        #expect(faulted.stderr.contains("nothing recorded"), "\(faulted.stderr)")
        // Of several views, the one it crashed in is named, with the model's id.
        #expect(
            faulted.stderr.contains(#"crashed with SIGSEGV in draw [unruly:row] for body[0] (id "a") of view.json"#),
            "\(faulted.stderr)")
        #expect(try Data(contentsOf: image) == good, "the golden is not replaced by a drawing with fallbacks")
        // …nor does the next one, which finds the build quarantined.
        let next = try setup.hubhost(["snapshot", "record", setup.view.path, "--out", golden.path])
        #expect(next.status == 1, "\(next.stderr)")
        #expect(try Data(contentsOf: image) == good)
    }

    /// A plugin repository has one plugin: when it crashes, verify draws nothing, and still writes this run's JUnit
    /// and report (naming the plugin) over an earlier run's, with the crash's status rather than "missing" (2).
    @Test func aVerifyThatDrawsNothingForACrashStillWritesItsJUnitAndReport() throws {
        let setup = try Setup()
        let alone = setup.folder.appending("alone")
        try FileManager.default.createDirectory(
            at: alone, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let plugin = alone.appendingPathComponent("libunruly.so")
        try FileManager.default.copyItem(at: setup.plugins.appendingPathComponent("libunruly.so"), to: plugin)
        let golden = setup.folder.appending("golden").path
        let junit = setup.folder.appending("junit.xml")
        let report = setup.folder.appending("report")
        let record = try setup.hubhost(["snapshot", "record", "--gallery", "--out", golden], plugins: alone)
        #expect(record.status == 0, "\(record.stderr)")
        let verify = [
            "snapshot", "verify", "--gallery", "--out", golden, "--junit", junit.path, "--report", report.path,
        ]
        #expect(try setup.hubhost(verify, plugins: alone).status == 0)
        let passed = try String(contentsOf: junit, encoding: .utf8)

        try FixtureCompiler.compile(HostContractTests.unruly, to: plugin, flags: ["-DCRASH_IN_DRAW"])
        let crashed = try setup.hubhost(verify, plugins: alone)
        #expect(crashed.status == 5, "\(crashed.stderr)")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml != passed && xml.contains("plugin libunruly.so"), "\(xml)")
        #expect(xml.contains("drew no image"), "\(xml)")
        let html = try String(contentsOf: report.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("Goldens no story draws") && html.contains("libunruly.so"), "\(html.prefix(3000))")
    }

    /// A plugin that closes the worker's descriptors (a "daemonizing" idiom) leaves it unable to write its output
    /// or say why. The call is named whether the worker was seen losing its stderr inside it (a long loop of
    /// closes) or only at exit (a few closes, the call long returned: the worker runs again checking each call).
    @Test(arguments: [1024, 6]) func aPluginThatClosesTheWorkersDescriptorsIsNamed(count: Int) throws {
        let setup = try Setup(flags: ["-DCLOSE_IN_DRAW=\(count)"])
        let output = setup.folder.appending("out.svg")
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", output.path])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "libunruly.so (com.example.unruly 1.0.0) closed descriptors it did not open (hubhost's standard error or output) "
                    + "in draw [unruly:row] for body[0] (id \"a\")"), "\(result.stderr)")
        let svg = try String(contentsOf: output, encoding: .utf8)
        #expect(svg.hasSuffix("</svg>\n") && svg.contains("data-component=\"cdemo:banner\""), "the rest is drawn")
        let next = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", output.path])
        #expect(next.status == 1 && next.stderr.contains("quarantined libunruly.so"), "\(next.stderr)")
    }

    /// Descriptors pointed at /dev/null (the output to stdout "succeeded" into /dev/null, exit 0) or closed from 3
    /// up (the output's own descriptor: "Bad file descriptor", no plugin named): both are named, and the output is
    /// drawn again without the plugin.
    @Test(arguments: ["-DNULL_IN_DRAW=1024", "-DCLOSE_FROM_3_IN_DRAW=1024"])
    func aPluginThatReplacesOrClosesTheOutputIsNamed(flag: String) throws {
        let setup = try Setup(flags: [flag])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains("libunruly.so (com.example.unruly 1.0.0) closed descriptors it did not open"),
            "\(result.stderr)")
        #expect(result.stdout.hasSuffix("</svg>\n") && result.stdout.contains("data-component=\"cdemo:banner\""))
    }

    /// A process plugin code forked and left running held the user's stdout (`render | wc` waited for it) and
    /// outlived the command: it is ended as the worker ends, and said.
    @Test func processesAPluginLeavesRunningAreEnded() throws {
        let setup = try Setup(flags: ["-DFORK_IN_DRAW"])
        let started = Date()
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(Date().timeIntervalSince(started) < 20, "the output ended without waiting for the child")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("</svg>\n"))
        let said = try #require(
            result.stderr.split(separator: "\n").first { $0.contains("left 1 process(es) running") }, "\(result.stderr)"
        )
        let pid = try #require(
            said.firstRange(of: "pid ").flatMap { Int32(said[$0.upperBound...].prefix { $0.isNumber }) })
        #expect(kill(pid, 0) != 0, "the child is gone")
    }

    /// A fault while a gallery draws names the story and width (a gallery has no view file: it said "for body[0]"),
    /// and the sheet says which plugin is missing from it and why.
    @Test func aGalleryFaultNamesTheStoryAndTheSheetSaysWhatIsMissing() throws {
        let setup = try Setup(flags: ["-DCRASH_IN_DRAW"])
        let first = try setup.hubhost(["gallery", "-o", "g.html", "--widths", "320"])
        #expect(first.status == 5, "\(first.stderr)")
        #expect(
            first.stderr.contains("libunruly.so (com.example.unruly 1.0.0) crashed with SIGSEGV in draw for story ")
                && first.stderr.contains(" of unruly:row at 320 pt"), "\(first.stderr)")
        let sheet = try String(contentsOf: setup.folder.appending("g.html"), encoding: .utf8)
        #expect(sheet.contains("Not in this gallery") && sheet.contains("libunruly.so"), "\(sheet.prefix(2000))")
    }

    /// A crash is remembered until the plugin changes, or `--reprobe`; a hang (which a loaded machine can cause) is
    /// kept out of its run only.
    @Test func reprobeClearsAQuarantineAndAHangIsNotRemembered() throws {
        let setup = try Setup(flags: ["-DCRASH_IN_DRAW"])
        let render = ["render", setup.view.path, "--format", "svg", "-o", "-"]
        #expect(try setup.hubhost(render).status == 5)
        let kept = try setup.hubhost(render)
        #expect(kept.status == 1 && kept.stderr.contains("quarantined libunruly.so"), "\(kept.stderr)")
        // Its models are told why they fall back, not offered a similar namespace.
        #expect(
            kept.stderr.contains(#""unruly:row": namespace "unruly" is served by libunruly.so, which is quarantined"#),
            "\(kept.stderr)")
        let reprobed = try setup.hubhost(render + ["--reprobe"])
        #expect(reprobed.status == 5, "loaded again, and it crashed again: \(reprobed.stderr)")
        #expect(reprobed.stderr.contains("crashed with SIGSEGV in draw [unruly:row]"), "\(reprobed.stderr)")

        let hanging = try Setup(flags: ["-DHANG_IN_DRAW"])
        let slow = ["render", hanging.view.path, "--format", "svg", "-o", "-", "--call-timeout", "0.5"]
        let first = try hanging.hubhost(slow)
        #expect(first.status == 5 && first.stderr.contains("hung in draw [unruly:row]"), "\(first.stderr)")
        let second = try hanging.hubhost(slow)
        #expect(
            second.status == 5 && second.stderr.contains("hung in draw [unruly:row]"), "loaded again: \(second.stderr)")
    }

    /// A fault handler plugin code sets in a call is refused and said: with it, the plugin's own trap ran for ever
    /// and was reported as a hang (or another plugin's crash as an exit with status 0).
    @Test func aFaultHandlerSetInACallIsRefusedSoTheCrashIsSeen() throws {
        let setup = try Setup(flags: ["-DHANDLER_IN_DRAW", "-DTRAP_IN_DRAW"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        // (The refusal is said when the call returns: this one traps first.)
        #expect(result.stderr.contains("crashed with SIGILL in draw [unruly:row]"), "\(result.stderr)")
        #expect(!result.stderr.contains("hung in draw"), "\(result.stderr)")
    }

    /// A Swift trap's reason (file, line, why) is the report's, not the thirty backtrace frames after it.
    @Test func aSwiftTrapIsReportedWithItsReasonNotItsBacktrace() throws {
        let setup = try Setup(flags: ["-DTRAP_IN_DRAW"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        let reason = "Unruly/Row.swift:12: Fatal error: Unexpectedly found nil while unwrapping an Optional value"
        #expect(result.stderr.contains("crashed with SIGILL in draw [unruly:row] for body[0] (id \"a\"): \(reason)"))
        let report = result.stderr.components(separatedBy: "quarantined; running again")[0]
        #expect(!report.contains("  | 29    hubhost"), "no frames in the tail: \(report)")
        let listing = try setup.hubhost(["list-namespaces"])
        #expect(
            listing.stdout.contains(reason) || listing.stderr.contains(reason), "\(listing.stdout)\(listing.stderr)")
    }

    /// A stopped command leaves nothing running: its worker ends with it, and never writes the output afterwards.
    @Test func aWorkerEndsWithItsSupervisor() throws {
        let setup = try Setup(flags: ["-DHANG_IN_DRAW"])
        let output = setup.folder.appending("out.svg")
        let process = Process()
        process.executableURL = TestPaths.hubhost
        process.arguments = [
            "render", setup.view.path, "--format", "svg", "-o", output.path, "--call-timeout", "60", "--plugins",
            setup.plugins.path, "--plugin-cache", setup.cache.path,
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        func children(of parent: Int32) -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 2 && Int32(fields[1]) == parent
            }
        }
        // The worker is hanging in draw (the probe passed): find it, then kill the command the user started.
        var worker: Int32?
        let deadline = Date().addingTimeInterval(30)
        while worker == nil, Date() < deadline {
            worker = children(of: process.processIdentifier).first
            usleep(100_000)
        }
        let found = try #require(worker, "no worker started")
        usleep(300_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let gone = Date().addingTimeInterval(5)
        while kill(found, 0) == 0, Date() < gone { usleep(20_000) }
        #expect(kill(found, 0) != 0, "the worker outlived its supervisor")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// Two plugins that share a plugin id (a copied source whose id was not changed) both load, and are told.
    @Test func twoPluginsWithOneIdAreToldApart() throws {
        let setup = try Setup()
        let source = setup.folder.appending("same.c")
        try Data(
            #"""
            #include "hub_plugin.h"
            static const char *const names[] = {NULL};
            static const char *const *component_names(const hub_component_factory *f) { (void)f; return names; }
            static bool create(const hub_component_factory *f, const char *n, hub_component *o) {
                (void)f; (void)n; (void)o; return false;
            }
            static const hub_component_factory factory = {sizeof factory, NULL, create, component_names, NULL};
            static bool init(const hub_host *h, char *e, size_t n) {
                return h->register_component_factory(h, NAMESPACE, &factory, e, n);
            }
            static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR},
                "com.example.same", "Same", "1.0.0", "", "", init, NULL};
            HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
            """#.utf8
        ).write(to: source)
        for name in ["one", "two"] {
            try FixtureCompiler.compile(
                source, to: setup.plugins.appendingPathComponent("libsame\(name).so"),
                flags: ["-DNAMESPACE=\"\(name)\""])
        }
        let listed = try setup.hubhost(["list-namespaces"])
        #expect(
            listed.stderr.contains(#"libsametwo.so: plugin id "com.example.same" is also libsameone.so's"#),
            "\(listed.stdout)\(listed.stderr)")
        // A --prefer that names no plugin is a name that names nothing (exit 3), not silently ignored.
        let typo = try setup.hubhost(["list-namespaces", "--prefer", "com.example.smae"])
        #expect(typo.status == 3 && typo.stderr.contains("--prefer com.example.smae: no plugin"), "\(typo.stderr)")
        // And a command that writes stops before it does: the file is kept (it was replaced, exit 3).
        let kept = setup.folder.appending("kept.json")
        try Data("precious".utf8).write(to: kept)
        let render = try setup.hubhost(["render", setup.view.path, "--prefer", "com.example.smae", "-o", kept.path])
        #expect(render.status == 3, "\(render.stderr)")
        #expect(try String(contentsOf: kept, encoding: .utf8) == "precious")
    }

    @Test func aReplayThatStopsKeepsTheOutputFile() throws {
        let setup = try Setup()
        let output = setup.folder.appending("final.svg")
        try Data("precious".utf8).write(to: output)
        let script = setup.folder.appending("bad.jsonl")
        try Data((#"{"event":"tap","indexPath":[1]}"# + "\n" + #"{"event":"bogus"}"# + "\n").utf8).write(to: script)
        let result = try setup.hubhost(["events", setup.view.path, script.path, "--format", "svg", "-o", output.path])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(try String(contentsOf: output, encoding: .utf8) == "precious")
        // A replay whose trace could not be written (standard output full) is not done either: it was replaced.
        try Data((#"{"event":"tap","indexPath":[1]}"# + "\n").utf8).write(to: script)
        let command = [
            TestPaths.hubhost.path, "events", setup.view.path, script.path, "--format", "svg", "-o",
            output.path, "--plugins", setup.plugins.path, "--plugin-cache", setup.cache.path,
        ]
        let full = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", command.map { "'\($0)'" }.joined(separator: " ") + " >/dev/full"])
        #expect(full.status == 2 && full.stderr.contains("cannot write -"), "\(full.stderr)")
        #expect(try String(contentsOf: output, encoding: .utf8) == "precious")
    }

    /// In `hubhost dev` too, what a plugin prints goes to stderr (the worker's stdout was the terminal's).
    @Test func devSendsWhatAPluginPrintsToStderr() throws {
        let setup = try Setup()
        let out = setup.folder.appending("dev.out")
        let err = setup.folder.appending("dev.err")
        for file in [out, err] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = TestPaths.hubhost
        process.arguments = [
            "dev", setup.view.path, "--port", "0", "--plugins", setup.plugins.path, "--plugin-cache", setup.cache.path,
        ]
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(60)
        func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        while Date() < deadline, process.isRunning, !text(err).contains("UNRULY-STDOUT") { usleep(50_000) }
        #expect(text(err).contains("UNRULY-STDOUT"), "stdout: \(text(out))\nstderr: \(text(err))")
        #expect(!text(out).contains("UNRULY-STDOUT"), "\(text(out))")
    }

    @Test func devOnAPortInUseSaysSoAtOnce() throws {
        // Hold a port, as a first `hubhost dev` would.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let setup = try Setup()
        let started = Date()
        let result = try setup.hubhost(["dev", setup.view.path, "--port", String(port)])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("port \(port) is in use"), "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("initial"), "said before any plugin was loaded")
        #expect(Date().timeIntervalSince(started) < 8, "it did not wait out a timeout")
    }
}
