import Foundation
import HubTestKit
import Testing

/// Real C plugins, compiled at test time, that crash, abort, exit() or hang in one call, on one model's data only
/// and never while probed (Fixtures/fragile.c), run by real `hubhost` processes: the fault is contained in the
/// worker, named, quarantined, and the rest of the output is intact.
@Suite(.serialized) struct PluginFaultTests {
    static let fragile = TestPaths.packageRoot.appendingPathComponent("Tests/HubIsolationTests/Fixtures/fragile.c")
    static let demoC = TestPaths.binDirectory.appendingPathComponent("libHubDemoC.so")

    /// A plugin folder with fragile (built with `flags`) and the shipped C demo, a cache, and a view whose body[2]
    /// is the "Trending" model and body[3] a cdemo banner.
    final class Setup {
        let folder: TemporaryFolder
        var plugins: URL { folder.appending("plugins") }
        var cache: URL { folder.appending("cache") }
        var view: URL { folder.appending("view.json") }

        /// `hot`: body[2] is "fragile:hot", the component whose create faults.
        init(flags: [String], hot: Bool = false) throws {
            folder = try TemporaryFolder("hubhost-isolation")
            try FileManager.default.createDirectory(
                at: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try install(flags: flags)
            try FileManager.default.copyItem(
                at: PluginFaultTests.demoC, to: plugins.appendingPathComponent("libdemoc.so"))
            let json = """
                {"body": [
                  {"id": "a", "component": {"id": "fragile:card"}, "text": {"title": "Hello"}},
                  {"id": "b", "component": {"id": "fragile:card"}, "text": {"title": "World"}},
                  {"id": "c", "component": {"id": "fragile:\(hot ? "hot" : "card")"}, "text": {"title": "Trending"}},
                  {"id": "d", "component": {"id": "cdemo:banner"}, "text": {"title": "Good"}}
                ]}
                """
            try Data(json.utf8).write(to: view)
        }

        func install(flags: [String]) throws {
            try FixtureCompiler.compile(
                PluginFaultTests.fragile, to: plugins.appendingPathComponent("libfragile.so"), flags: flags)
        }

        func hubhost(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.hubhost(
                arguments + ["--plugins", plugins.path, "--plugin-cache", cache.path, "--call-timeout", "1"])
        }

        /// `render` of the view (SVG, so that draw runs, then JSON to read the sources), returns the result of
        /// the first and the body nodes of the second.
        func render() throws -> (ProcessResult, [[String: Any]]) {
            let result = try hubhost(["render", view.path, "--format", "svg", "-o", folder.appending("out.svg").path])
            let out = folder.appending("out.json")
            try? FileManager.default.removeItem(at: out)
            _ = try hubhost(["render", view.path, "--format", "json", "-o", out.path])
            let data = (try? Data(contentsOf: out)) ?? Data()
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            return (result, root?["body"] as? [[String: Any]] ?? [])
        }
    }

    static func source(_ node: [String: Any]) -> String {
        if let source = node["source"] as? [String: Any] { return source["plugin"] as? String ?? "?" }
        return node["source"] as? String ?? "?"
    }

    static let calls: [(define: String, name: String)] = [
        ("1", "create"), ("2", "size"), ("3", "configure"), ("4", "draw"),
    ]
    static let kinds: [(define: String, words: String)] = [
        ("1", "crashed with SIGSEGV"), ("2", "crashed with SIGABRT"), ("3", "exited the process with status 3"),
        ("4", "hung"),
    ]

    @Test(arguments: calls)
    func renderContainsEveryKindOfFaultInEachCall(call: (define: String, name: String)) throws {
        for kind in Self.kinds {
            let setup = try Setup(
                flags: ["-DFAULT_IN=\(call.define)", "-DFAULT_HOW=\(kind.define)"], hot: call.name == "create")
            let (result, body) = try setup.render()
            // create is given no model: the report names the one the host was making the instance for (it named
            // only the plugin and the call).
            let expected =
                "libfragile.so (com.example.fragile 1.0.0) \(kind.words) in \(call.name)"
                + (call.name == "create" ? " [fragile:hot]" : " [fragile:card]")
            #expect(result.status == 5, "\(call.name)/\(kind.words): \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(result.stderr)")
            #expect(result.stderr.contains(#"for body[2] (id "c")"#), "\(result.stderr)")
            #expect(result.stderr.contains("fragile: about to fail"), "the tail of the plugin's stderr is shown")
            // The output is written, the good plugin's drawing in it.
            let svg = (try? String(contentsOf: setup.folder.appending("out.svg"), encoding: .utf8)) ?? ""
            #expect(svg.contains("Good") && svg.contains("Trending") && !svg.contains("taps:"))
            // The culprit's components fell back in the next run (a crash's quarantine holds for it; a hang's is for
            // its own run only, and JSON output calls every call but draw, which hangs again), the good plugin's not.
            #expect(body.count == 4)
            let backInTheNextRun = kind.words == "hung" && call.name == "draw"
            #expect(
                body.prefix(3).allSatisfy {
                    Self.source($0) == (backInTheNextRun ? "com.example.fragile" : "fallback")
                },
                "\(body)")
            #expect(body.count == 4 && Self.source(body[3]) == "com.hubhost.cdemo")
        }
    }

    /// Plugin code that stops its own process is a hang (the wait for a stopped job is not counted, but this is no
    /// job stopped from outside), and a process the plugin started that ends the worker is the plugin's doing. A
    /// plugin that signals its whole process group ends its worker alone (hubhost ended with it, saying nothing).
    @Test(arguments: [
        ("5", "hung in configure"), ("6", "crashed with SIGTERM in configure"),
        ("7", "crashed with SIGTERM in configure"),
    ])
    func aPluginThatStopsOrSignalsItsOwnProcessIsNamed(how: String, words: String) throws {
        let setup = try Setup(flags: ["-DFAULT_IN=3", "-DFAULT_HOW=\(how)"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("libfragile.so (com.example.fragile 1.0.0) \(words)"), "\(result.stderr)")
        #expect(!result.stderr.contains("no plugin is blamed"), "\(result.stderr)")
    }

    /// Ctrl-Z stops the worker with hubhost, and `fg` continues both: the worker, in a process group of its own, is
    /// not in the terminal's job, and went on with its job while hubhost was stopped.
    @Test func ctrlZStopsTheWorkerWithHubhostAndFgContinuesIt() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=3", "-DFAULT_HOW=4"])  // configure of "Trending" never returns
        let command = [
            TestPaths.hubhost.path, "render", setup.view.path, "--format", "svg", "-o", "-", "--plugins",
            setup.plugins.path, "--plugin-cache", setup.cache.path, "--call-timeout", "60",
        ].map { "'\($0)'" }.joined(separator: " ")
        // The worker is hubhost's child; states from /proc: T stopped, S or R otherwise. `set -m` puts hubhost in a
        // process group of its own whose parent (the shell) is in the session, as a terminal's job is: the kernel
        // discards SIGTSTP in an orphaned group.
        let script = """
            set -m
            \(command) >/dev/null 2>&1 & H=$!
            state() { awk '{print $3}' /proc/$1/stat 2>/dev/null; }
            for i in $(seq 200); do W=$(cat /proc/$H/task/*/children 2>/dev/null | awk '{print $1}'); [ -n "$W" ] && break; sleep 0.05; done
            sleep 1.5
            kill -TSTP $H; sleep 0.5; echo "stopped: hubhost $(state $H) worker $(state $W)"
            kill -CONT $H; sleep 0.5; echo "continued: hubhost $(state $H) worker $(state $W)"
            kill -KILL $W $H 2>/dev/null; wait $H 2>/dev/null; true
            """
        let run = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        #expect(run.stdout.contains("stopped: hubhost T worker T"), "\(run.stdout)\(run.stderr)")
        #expect(
            run.stdout.contains("continued: hubhost S worker S") || run.stdout.contains("continued: hubhost S worker R")
                || run.stdout.contains("continued: hubhost R worker S"), "\(run.stdout)")
    }

    /// A worker killed with SIGKILL while it runs no plugin code (the out-of-memory killer, a job's time limit)
    /// blames no plugin and is not called a hubhost bug: nobody can say who sent SIGKILL, but no code of the worker
    /// does.
    @Test func aWorkerKilledOutsidePluginCodeIsNotCalledAHubhostBug() throws {
        let folder = try TemporaryFolder("hubhost-kill")
        let view = folder.appending("big.json")
        let models = (0..<150_000).map {
            #"{"id": "m\#($0)", "component": {"id": "gone:row"}, "text": {"title": "Row \#($0)"}}"#
        }
        try Data(#"{"body": [\#(models.joined(separator: ","))]}"#.utf8).write(to: view)
        let empty = folder.appending("plugins")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let command = [
            TestPaths.hubhost.path, "render", view.path, "--format", "json", "-o", folder.appending("out.json").path,
            "--plugins", empty.path, "--plugin-cache", folder.appending("cache").path,
        ].map { "'\($0)'" }.joined(separator: " ")
        // No plugin is loaded, so whatever the worker is doing when it is killed is hubhost's own work.
        let script = """
            \(command) 2>&1 & H=$!
            for i in $(seq 200); do W=$(cat /proc/$H/task/*/children 2>/dev/null | awk '{print $1}'); [ -n "$W" ] && break; sleep 0.02; done
            sleep 0.3; kill -KILL $W; wait $H; echo "status $?"
            """
        let run = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        #expect(run.stdout.contains("SIGKILL comes from outside the worker"), "\(run.stdout)")
        #expect(!run.stdout.contains("hubhost bug"), "\(run.stdout)")
    }

    /// The advice a fault report gives works: after the crash quarantined the plugin, `--in-process` loads it as it
    /// is (not probed, not kept out), so a debugger would see the crash in this process.
    @Test func inProcessRunsAQuarantinedPluginForADebugger() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=4", "-g"])
        let first = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(first.status == 5 && first.stderr.contains("to debug it, run the same command with --in-process"))
        // The report says where in the plugin's file: addr2line turns it into the function and line.
        let offset = try #require(
            first.stderr.firstMatch(of: #/at libfragile\.so\+(0x[0-9a-f]+)/#).map { String($0.1) }, "\(first.stderr)")
        // It names the copy that ran (a rebuild of the file would make addr2line name another function).
        let image = try #require(
            first.stderr.firstMatch(of: #/addr2line -f -C -e (\S+) 0x/#).map { String($0.1) }, "\(first.stderr)")
        #expect(image.hasPrefix(setup.cache.path) && image.hasSuffix(".so"), "\(image)")
        let located = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["addr2line", "-f", "-e", image, offset])
        #expect(located.stdout.hasPrefix("fault_if") && located.stdout.contains("fragile.c:"), "\(located.stdout)")
        let debugged = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-", "--in-process"])
        #expect(debugged.status == SIGSEGV || debugged.status == 128 + SIGSEGV, "\(debugged.status) \(debugged.stderr)")
        #expect(!debugged.stderr.contains("quarantined"), "\(debugged.stderr)")
    }

    @Test func theQuarantineIsPersistedUntilTheFileChanges() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=4"])
        let (first, _) = try setup.render()
        #expect(first.status == 5)
        // A restart does not crash again: the version is quarantined with the probe cache, which is said on
        // stderr (exit 1: done, with a problem reported), so a CI job does not go green without the plugin.
        let (second, body) = try setup.render()
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("quarantined libfragile.so: crashed with SIGSEGV in draw [fragile:card]"))
        #expect(!second.stderr.contains("about to fail"))
        #expect(body.prefix(3).allSatisfy { Self.source($0) == "fallback" })
        // A fixed build clears it.
        try setup.install(flags: ["-DPLUGIN_VERSION=\"1.0.1\""])
        let (third, fixed) = try setup.render()
        #expect(third.status == 0, "\(third.stderr)")
        #expect(fixed.prefix(3).allSatisfy { Self.source($0) == "com.example.fragile" }, "\(fixed)")
        let listed = try ProcessRunner.hubhost(
            ["list-namespaces", "--plugins", setup.plugins.path, "--plugin-cache", setup.cache.path])
        #expect(listed.stdout.contains("fragile"))
    }

    /// Tables and text an author in another language gets wrong (a struct_size too small, a required method left
    /// NULL, a layout_traits pointer into a string already freed) are said, named, and fail validate; they used to
    /// draw nothing without a word.
    @Test(arguments: [
        (
            "-DCLASS_SIZE=8",
            "create_component(\"fragile:card\"): its hub_component_class has struct_size 8, smaller than the"
        ),
        ("-DBAD_TRAITS", "layout_traits returned text that is not a list of trait names (bytes 03 ff fe 66"),
        (
            "-DNULL_TRAITS",
            "create_component(\"fragile:card\"): its hub_component_class leaves layout_traits NULL (layout_traits,"
        ),
    ])
    func malformedTablesAndTraitTextAreSaidAndFailValidate(flag: String, words: String) throws {
        let setup = try Setup(flags: [flag])
        let (result, body) = try setup.render()
        let line = result.stderr.split(separator: "\n").first { $0.contains(words) }
        #expect(line?.contains("libfragile.so") == true, "\(result.stderr)")
        if flag.hasPrefix("-DCLASS_SIZE") || flag == "-DNULL_TRAITS" {
            // Every component of that class would draw nothing: the probe's check refuses the plugin, saying why.
            #expect(result.status == 5, "\(result.stderr)")
            #expect(body.prefix(3).allSatisfy { Self.source($0) == "fallback" }, "\(body)")
        } else {
            #expect(result.status == 1, "\(result.stderr)")
        }
        let validated = try ProcessRunner.hubhost([
            "validate", setup.plugins.appendingPathComponent("libfragile.so").path, "--view", setup.view.path,
        ])
        #expect(validated.status == 1 && validated.stdout.contains(words), "\(validated.stdout)\(validated.stderr)")
    }

    /// The logger service's context is the host's, shared by every plugin: the call in progress names the plugin,
    /// so its warning reaches stderr under its name (it went to the host's logger, shown only with --verbose).
    @Test func aWarningThroughTheLoggerServiceIsThePlugins() throws {
        let setup = try Setup(flags: ["-DLOG_THROUGH_SERVICE"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.stderr.split(separator: "\n").first { $0.contains("fragile: through hub.logger") }
        #expect(line?.contains("com.example.fragile") == true, "\(result.stderr)")
    }

    /// A Rust plugin's panic aborts with the panic's place and message before dozens of backtrace frames and a
    /// second panic: the report keeps the first (it showed the frames' tail only), at render and at validate.
    @Test func aRustPanicIsReportedByItsPlaceAndMessage() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=4", "-DFAULT_HOW=2", "-DRUST_PANIC"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        let panic = "thread '<unnamed>' (5448) panicked at src/lib.rs:27:26: fragile: deliberate panic in the call"
        // The plugin's stderr passes through as it is written; the report after it is cut to what helps.
        let report = try #require(
            result.stderr.range(of: "hubhost: libfragile.so").map { result.stderr[$0.lowerBound...] })
        #expect(report.contains("crashed with SIGABRT in draw [fragile:card] for body[2] (id \"c\"): \(panic)"))
        #expect(!report.contains("std::rt::frame_") && !report.contains("stack backtrace:"), "\(report)")

        let probed = try Setup(flags: ["-DFAULT_IN=4", "-DFAULT_HOW=2", "-DRUST_PANIC", "-DFAULT_WHEN_PROBED"])
        let validated = try ProcessRunner.hubhost([
            "validate", probed.plugins.appendingPathComponent("libfragile.so").path, "--view", probed.view.path,
        ])
        #expect(validated.stdout.contains(panic), "\(validated.stdout)\(validated.stderr)")
        #expect(!validated.stdout.contains("rt.rs:"), "\(validated.stdout)")
    }

    /// A model read from a plugin's own thread is refused, named, and ends the command "with problems" (it was a
    /// log line and exit 0), and validate fails it.
    @Test func aModelReadFromAPluginsThreadIsAProblem() throws {
        let setup = try Setup(flags: ["-DREAD_OFF_THREAD"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "text", "-o", "-"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "libfragile.so called model_string, a [main-thread] host function, from another thread"),
            "\(result.stderr)")
        let validated = try ProcessRunner.hubhost([
            "validate", setup.plugins.appendingPathComponent("libfragile.so").path, "--view", setup.view.path,
        ])
        #expect(validated.status == 1 && validated.stdout.contains("called model_string"), "\(validated.stdout)")
    }

    @Test func aFactoryWithAStructSizeTooSmallIsRefusedByName() throws {
        let setup = try Setup(flags: ["-DFACTORY_SIZE=8"])
        let result = try setup.hubhost(["list-namespaces"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "register_component_factory fragile: its hub_component_factory has struct_size 8, smaller than the"),
            "\(result.stderr)")
    }

    @Test func valuesAPluginHandsTheHostAreCheckedNotTrappedOn() throws {
        let setup = try Setup(flags: ["-DBAD_VALUES"])
        for format in ["json", "svg", "html", "text"] {
            let result = try setup.hubhost(["render", setup.view.path, "--format", format, "-o", "-"])
            // Done, with the plugin's bad values reported: 1, as README's exit codes say (not a crash, not 0).
            #expect(result.status == 1, "\(format): \(result.stderr)")
        }
        // Every command that draws says so the same way (a golden or a gallery of a broken drawing is not clean).
        let script = setup.folder.appending("script.jsonl")
        try Data(#"{"event": "scroll", "y": 10}"#.utf8).write(to: script)
        for command in [
            ["events", setup.view.path, script.path],
            [
                "snapshot", "record", setup.view.path, "--out",
                setup.folder.appending("goldens").path,
            ],
        ] {
            let result = try setup.hubhost(command)
            #expect(result.status == 1 && result.stderr.contains("libfragile.so"), "\(command[0]): \(result.stderr)")
        }
        // validate fails what render says (the plugin still loads).
        let validated = try ProcessRunner.hubhost([
            "validate", setup.plugins.appendingPathComponent("libfragile.so").path, "--view", setup.view.path,
        ])
        #expect(validated.status == 1, "\(validated.stdout)\(validated.stderr)")
        #expect(validated.stdout.contains("fail values handed to the host: libfragile.so"), "\(validated.stdout)")
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-"])
        let stderr = result.stderr.replacingOccurrences(of: "-nan", with: "nan")
        let who = "libfragile.so (com.example.fragile 1.0.0) in draw:"
        for problem in [
            "font size nan", "font size 1e-300", "measure_text max width inf", "frame x nan",
            "stroke width nan", "line limit 4000000000",
        ] {
            #expect(
                stderr.contains("\(who) \(problem)"), "\(problem): \(stderr)")
        }
        #expect(stderr.contains("libfragile.so (com.example.fragile 1.0.0) in size: width nan"))
        #expect(!result.stdout.contains("NaN") && !result.stdout.contains("nan\""))
    }

    @Test func eventsStopsAtTheFaultingStepOrGoesOnWithKeepGoing() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=5"])
        let script = setup.folder.appending("script.jsonl")
        let lines = [
            #"{"event":"tap","indexPath":[0]}"#, #"{"event":"tap","indexPath":[2]}"#,
            #"{"event":"tap","indexPath":[1]}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: script)
        let stopped = try setup.hubhost(["events", setup.view.path, script.path, "--no-calls"])
        #expect(stopped.status == 5, "\(stopped.stderr)")
        #expect(
            stopped.stderr.contains(
                #"script line 2: libfragile.so (com.example.fragile 1.0.0) crashed with SIGSEGV in action handler [fragile:card] for body[2] (id "c")"#
            ), "\(stopped.stderr)")
        #expect(!stopped.stdout.contains("#3 tap"))

        try setup.install(flags: ["-DFAULT_IN=5", "-DPLUGIN_VERSION=\"1.0.2\""])
        let going = try setup.hubhost(["events", setup.view.path, script.path, "--no-calls", "--keep-going"])
        #expect(going.status == 5, "\(going.stderr)")
        // Each step is printed once: steps before the fault by the first worker, the rest by the next.
        #expect(going.stdout.components(separatedBy: "#1 tap").count == 2, "\(going.stdout)")
        #expect(going.stdout.contains("#3 tap indexPath [1]"))
        #expect(going.stdout.contains("done:"))
        // The faulting step ran again without the plugin, and says so.
        #expect(going.stdout.components(separatedBy: "#2 tap").count == 2, "\(going.stdout)")
        #expect(
            going.stdout.contains(
                "libfragile.so faulted in this step; it ran again without that plugin: crashed with SIGSEGV in action handler"
            ),
            "\(going.stdout)")
        // And as fields a script reads (a new build: the last one is quarantined now).
        try setup.install(flags: ["-DFAULT_IN=5", "-DPLUGIN_VERSION=\"1.0.3\""])
        let json = try setup.hubhost(["events", setup.view.path, script.path, "--no-calls", "--keep-going", "--json"])
        let fault = json.stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["fault"] != nil }
        #expect((fault?["plugin"] as? String)?.hasSuffix("libfragile.so") == true, "\(json.stdout)")
        #expect((fault?["fault"] as? String)?.hasPrefix("crashed with SIGSEGV in action handler") == true)
    }

    /// A fault outside any script line (here the final drawing, after the last line) stops the replay too: running
    /// it all again printed its trace twice. `--keep-going` runs it again without the plugin.
    @Test func eventsStopsAtAFaultInTheFinalDrawing() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=4"])
        let script = setup.folder.appending("script.jsonl")
        try Data(#"{"event":"advance","seconds":1}"#.utf8 + [10]).write(to: script)
        let output = setup.folder.appending("final.svg")
        let stopped = try setup.hubhost([
            "events", setup.view.path, script.path, "--no-calls", "--format", "svg", "-o", output.path,
        ])
        #expect(stopped.status == 5, "\(stopped.stderr)")
        #expect(stopped.stdout.components(separatedBy: "#1 advance").count <= 2, "\(stopped.stdout)")
        #expect(stopped.stderr.contains("replay stopped (--keep-going runs it again without"), "\(stopped.stderr)")
    }

    /// An extension call the event pipeline makes: the selection state on a tap.
    @Test func eventsContainsFaultsInExtensions() throws {
        let call = "selection state"
        let setup = try Setup(flags: ["-DFAULT_IN=6"])
        let script = setup.folder.appending("script.jsonl")
        try Data(#"{"event":"tap","indexPath":[2]}"#.utf8 + [10]).write(to: script)
        let result = try setup.hubhost(["events", setup.view.path, script.path, "--no-calls", "--keep-going"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains(#"libfragile.so (com.example.fragile 1.0.0) crashed with SIGSEGV in \#(call)"#),
            "\(result.stderr)")
        #expect(result.stdout.contains("done:"), "a fresh worker finished the replay")
    }

    @Test func inProcessRunsWithoutAWorker() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=4"])
        let result = try setup.hubhost(["render", setup.view.path, "--format", "svg", "-o", "-", "--in-process"])
        // No supervisor: the fault ends the process, as it would under a debugger.
        #expect(result.status != 0 && result.status != 5, "\(result.status)")
        #expect(!result.stderr.contains("quarantined"))
    }

    /// `hubhost … | head`: the worker is killed by SIGPIPE when the reader goes away. That is how a command-line
    /// tool ends, not a fault: no report, and the run ends by SIGPIPE as the worker did. The plugin's configure
    /// is slow, so most of the run is inside plugin code: a broken pipe met during a plugin call (an output
    /// written off the main thread did this) would be blamed on that call.
    @Test(arguments: ["render", "events"])
    func aReaderThatStopsReadingEndsTheRunQuietly(command: String) throws {
        let setup = try Setup(flags: ["-DSLOW_CONFIGURE=20"])
        let items = (0..<5000).map {
            #"{"id": "c\#($0)", "component": {"id": "fragile:card"}, "text": {"title": "T"}}"#
        }
        try Data(#"{"body": [\#(items.joined(separator: ","))]}"#.utf8).write(to: setup.view)
        let script = setup.folder.appending("scroll.jsonl")
        try Data(#"{"event": "scroll", "y": 500}"#.utf8).write(to: script)
        let stderr = setup.folder.appending("stderr.txt")
        let arguments =
            (command == "render"
                ? ["render", setup.view.path, "--format", "text"] : ["events", setup.view.path, script.path])
            + ["--plugins", setup.plugins.path, "--plugin-cache", setup.cache.path]
        let quoted = ([TestPaths.hubhost.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        // Far more than a pipe holds, so hubhost is still writing when head has gone.
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "\(quoted) 2>'\(stderr.path)' | head -c 10 >/dev/null; echo \"${PIPESTATUS[0]}\""])
        let report = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
        #expect(!report.contains("crashed"), "\(report)")
        #expect(!report.contains("bug"), "\(report)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(128 + SIGPIPE)", "\(result.stdout)")
    }

    /// What happens to a job from outside is not a plugin's fault. A job stopped in the middle of a call (Ctrl-Z
    /// then `fg` stops and continues the whole job) is not "hung" when it continues: the time it could not run is not
    /// counted. A worker ended by another process's SIGTERM (a user killing the busy process) stops the run, says
    /// who, writes nothing and quarantines nobody.
    @Test(arguments: ["job", "term"])
    func whatHappensToTheJobFromOutsideIsNotAPluginFault(what: String) throws {
        let setup = try Setup(flags: ["-DSLOW_CONFIGURE=300000"])  // 0.3 s per configure: 1.2 s for the four cards
        let cards = (0..<8).map { #"{"id": "c\#($0)", "component": {"id": "fragile:card"}, "text": {"title": "T"}}"# }
        try Data(#"{"body": [\#(cards.joined(separator: ","))]}"#.utf8).write(to: setup.view)
        let out = setup.folder.appending("out.svg")
        let arguments = [
            TestPaths.hubhost.path, "render", setup.view.path, "--format", "svg", "-o", out.path, "--plugins",
            setup.plugins.path, "--plugin-cache", setup.cache.path, "--call-timeout", "1",
        ]
        _ = try setup.hubhost(["list-namespaces"])  // probed and cached: the worker is then hubhost's only child
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        let (stop, resume) =
            switch what {
            case "job": ("kill -STOP $H $W", "kill -CONT $H $W")
            default: ("kill -TERM $W", ":")
            }
        // Once the worker has run for half a second (inside the cards' configures), stopped or ended.
        let script = """
            \(quoted) 2>'\(setup.folder.appending("stderr.txt").path)' & H=$!
            for i in $(seq 100); do W=$(cat /proc/$H/task/*/children 2>/dev/null); [ -n "$W" ] && break; sleep 0.1; done
            sleep 0.5; \(stop) && echo signalled; sleep 2.5; \(resume)
            wait $H; echo "status $?"
            """
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        let stderr = (try? String(contentsOf: setup.folder.appending("stderr.txt"), encoding: .utf8)) ?? ""
        #expect(result.stdout.contains("signalled"), "\(result.stdout) \(result.stderr)")
        if what == "term" {
            #expect(result.stdout.contains("status \(128 + SIGTERM)"), "\(result.stdout) \(stderr)")
            #expect(stderr.contains("the worker process was ended by SIGTERM from process"), "\(stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
        } else {
            #expect(result.stdout.contains("status 0"), "\(result.stdout) \(stderr)")
            #expect(FileManager.default.fileExists(atPath: out.path))
        }
        #expect(!stderr.contains("hung") && !stderr.contains("crashed") && !stderr.contains("quarantined"), "\(stderr)")
        let listing = try setup.hubhost(["list-namespaces"])
        #expect(listing.status == 0 && !listing.stdout.contains("quarantined"), "\(listing.stdout)")
    }

    /// Two plugins fault in one run: the second report's stderr tail is its own plugin's, not the first fault's
    /// lines, and the worker started after each fault does not say the quarantines again.
    @Test func eachFaultsTailIsItsOwnPluginsAndQuarantinesAreSaidOnce() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=3"])
        try FixtureCompiler.compile(
            PluginFaultTests.fragile, to: setup.plugins.appendingPathComponent("libbrittle.so"),
            flags: [#"-DPLUGIN_NAME="brittle""#, "-DFAULT_IN=3"])
        let json = #"""
            {"body": [
              {"id": "f", "component": {"id": "fragile:card"}, "text": {"title": "Trending"}},
              {"id": "b", "component": {"id": "brittle:card"}, "text": {"title": "Trending"}}
            ]}
            """#
        try Data(json.utf8).write(to: setup.view)
        let result = try setup.hubhost(["render", setup.view.path, "--format", "json", "-o", "-"])
        #expect(result.status == 5, "\(result.stderr)")
        let reports = result.stderr.components(separatedBy: "crashed with SIGSEGV in configure")
        #expect(reports.count == 3, "two faults: \(result.stderr)")
        #expect(!result.stderr.contains("  | hubhost: "), "no host line in a tail: \(result.stderr)")
        #expect(
            result.stderr.components(separatedBy: "hubhost: quarantined libfragile.so").count == 1,
            "said once, by the supervisor: \(result.stderr)")
    }

    /// A thread the plugin started crashes, aborts, calls exit() or overflows its stack while the main thread is
    /// inside another plugin's call (a slow configure): the fault is the plugin whose code was on that thread, named
    /// by address, not the call in progress; that plugin is quarantined, the other renders. (A stack overflow on a
    /// thread without a signal stack of its own ended the worker before any handler: it was the call in progress.)
    @Test(arguments: kinds.prefix(3) + [("8", "crashed with SIGSEGV")])
    func aFaultOnAPluginsOwnThreadIsThatPluginsNotTheCallInProgress(kind: (define: String, words: String)) throws {
        let setup = try Setup(flags: ["-DFAULT_IN=11", "-DFAULT_HOW=\(kind.define)"])
        try FixtureCompiler.compile(
            PluginFaultTests.fragile, to: setup.plugins.appendingPathComponent("libsluggish.so"),
            flags: [#"-DPLUGIN_NAME="sluggish""#, "-DSLOW_CONFIGURE=2000"])
        // The "Trending" card's configure starts the thread; 50 ms later the main thread is 2 ms configures deep
        // into the sluggish cards.
        let fragileCards = ["Hello", "World", "Trending"].enumerated().map { index, title in
            #"{"id": "f\#(index)", "component": {"id": "fragile:card"}, "text": {"title": "\#(title)"}}"#
        }
        let sluggishCards = (0..<200).map {
            #"{"id": "s\#($0)", "component": {"id": "sluggish:card"}, "text": {"title": "S"}}"#
        }
        try Data(#"{"body": [\#((fragileCards + sluggishCards).joined(separator: ","))]}"#.utf8).write(to: setup.view)
        let out = setup.folder.appending("out.json")
        let result = try setup.hubhost(["render", setup.view.path, "--format", "json", "-o", out.path])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "libfragile.so (com.example.fragile 1.0.0) \(kind.words) in a thread of its own"),
            "\(result.stderr)")
        #expect(
            !result.stderr.contains("libsluggish.so (com.example.sluggish 1.0.0) \(kind.words)"), "\(result.stderr)")
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
        let body = root?["body"] as? [[String: Any]] ?? []
        #expect(body.count == 203)
        #expect(body.first.map(Self.source) == "fallback", "the quarantined plugin's cards fall back")
        #expect(body.last.map(Self.source) == "com.example.sluggish")
    }

    @Test func validateCallsActionHandlersAndRunsOverAView() throws {
        let setup = try Setup(flags: ["-DFAULT_IN=5", "-DFAULT_WHEN_PROBED"])
        let plugin = setup.plugins.appendingPathComponent("libfragile.so")
        let plain = try ProcessRunner.hubhost(["validate", plugin.path])
        #expect(plain.status == 0, "only the view's data makes it fault: \(plain.stdout)")
        #expect(plain.stdout.contains("PASS libfragile.so"))
        let withView = try ProcessRunner.hubhost(["validate", plugin.path, "--view", setup.view.path])
        #expect(withView.status == 1)
        #expect(
            withView.stdout.contains(#"crashed with SIGSEGV in view action handlers for body[2] (id "c")"#),
            "\(withView.stdout)")
        // A view that names none of a plugin's components is not run through it (each run decoded the whole view:
        // 300 plugins over a 100k view took minutes), and that is said.
        let other = setup.folder.appending("other.json")
        try Data(#"{"body": [{"id": "x", "component": {"id": "cdemo:banner"}}]}"#.utf8).write(to: other)
        let elsewhere = try ProcessRunner.hubhost(["validate", plugin.path, "--view", other.path])
        #expect(elsewhere.status == 0, "\(elsewhere.stdout)")
        #expect(
            elsewhere.stdout.contains(
                "note: --view other.json names none of its components: none of its models were run"),
            "\(elsewhere.stdout)")
    }
}
