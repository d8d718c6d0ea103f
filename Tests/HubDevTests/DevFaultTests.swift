import Foundation
import Testing

/// `hubhost dev` with a plugin that crashes on one model's data (swatch.c -DCRASH_ON_TRENDING): the supervisor
/// keeps serving, shows the fault, restarts the worker without the culprit, keeps the UI state, and takes a
/// fixed build when it lands.
@Suite("hubhost dev survives plugin faults", .serialized)
struct DevFaultTests {
    let root = TestSupport.temporaryDirectory("devfault")
    var plugins: URL { root.appendingPathComponent("plugins") }
    var cache: URL { root.appendingPathComponent("cache") }
    var view: URL { root.appendingPathComponent("view.json") }
    var swatch: URL { plugins.appendingPathComponent("libswatch.so") }

    init() throws {
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
    }

    func writeView(_ titles: [String]) throws {
        let models = titles.enumerated().map { index, title in
            #"{"id": "m\#(index)", "component": {"id": "swatch:swatch"}, "text": {"title": "\#(title)"}}"#
        }
        try #"{"id": "dev", "body": [\#(models.joined(separator: ", "))]}"#
            .write(to: view, atomically: true, encoding: .utf8)
    }

    func build(version: String, crashing: Bool) throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch,
            defines: ["PLUGIN_VERSION=\"\(version)\""] + (crashing ? ["CRASH_ON_TRENDING"] : []))
    }

    /// A worker that keeps failing with no plugin to blame waits longer before each restart (0.5, 1, 2 s…), even
    /// when it drew a frame first: a frame reset the wait, so a fault just after the first frame restarted the worker
    /// at once, eleven times in fifteen seconds.
    @Test func faultsNoPluginIsBlamedForRightAfterAFrameWaitLongerEachTime() throws {
        let dev = try startServingOne()
        defer { dev.stop() }
        var waits: [Double] = []
        for _ in 0..<3 {
            let before = try #require(try dev.frame()).sequence
            let worker = try #require(
                GalleryStoryCanvasTests.children(of: dev.process.processIdentifier).first { pid in
                    let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
                    return !command.contains("probe")
                }, "no worker")
            let killed = Date()
            kill(worker, SIGSEGV)  // between calls: nobody's plugin
            let next = dev.waitForFrame { $0.sequence > before && $0.cause.contains("restarted") }
            #expect(next != nil, "\(dev.log)")
            waits.append(Date().timeIntervalSince(killed))
        }
        #expect(dev.log.contains("crashed with SIGSEGV outside plugin code"), "\(dev.log)")
        #expect(waits[2] >= 1.9 && waits[1] >= 0.9, "each restart waits longer: \(waits)")
    }

    /// A thread a plugin started and never stopped runs on after a reload unloaded its image, and faults where its
    /// code was: that build is named, with the reason (it said "hubhost's worker crashed … outside plugin code":
    /// the unwinder read the unmapped code and faulted in the signal handler, which noted nothing).
    @Test func aThreadThatOutlivesItsPluginsUnloadIsThePlugins() throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"1\"", "THREAD_OUTLIVES_UNLOAD"])
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"2\""])
        // Blamed on that build: after its unload, or (when the thread faults while the unload is still under way,
        // as a loaded machine can make it) in a thread of its own.
        #expect(
            TestSupport.waitUntil(timeout: 30) {
                dev.log.contains(
                    "libswatch.so (test.dev.swatch 1) crashed with SIGSEGV in its code after it was unloaded (a thread "
                        + "it started still ran: stop and join threads in deinit)")
                    || dev.log.contains("libswatch.so (test.dev.swatch 1) crashed with SIGSEGV in a thread of its own")
            }, "\(dev.log)")
        #expect(!dev.log.contains("outside plugin code"), "\(dev.log)")
    }

    /// A build whose static destructor hangs wedged the session when a rebuild unloaded it (taps timed out, edits
    /// were ignored, nothing said): dlclose is timed as any call into the plugin, named, and the new build serves.
    @Test func aDestructorThatHangsAtUnloadIsNamedAndTheNewBuildServes() throws {
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"1\"", "HANG_IN_DESTRUCTOR"])
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        try TestSupport.installPlugin(
            "swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"2\"", "SWATCH_COLOR=0x00FF00FFu"])
        #expect(
            TestSupport.waitUntil(timeout: 30) {
                dev.log.contains(
                    "libswatch.so (test.dev.swatch 1) hung in its static destructors, as it was unloaded (dlclose)")
            }, "\(dev.log)")
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") && $0.html.contains("00ff00") } != nil, "\(dev.log)")
    }

    /// `hubhost dev` on the swatch plugin (version 1, working) and a view of one model titled "One", once drawn.
    func startServingOne() throws -> DevProcess {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        return dev
    }

    @Test func aCrashIsShownTheUIStateKeptAndAFixedBuildTakesOver() throws {
        try build(version: "1", crashing: true)
        try writeView(["One", "Calm"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        _ = try dev.tap([0])
        _ = try dev.tap([0])
        #expect(dev.waitForFrame { $0.html.contains("One taps:2") } != nil, "\(dev.log)")

        // The view now has the model the plugin crashes on: the worker dies, the page says why.
        try writeView(["One", "Trending"])
        let fault = dev.waitForFrame {
            $0.problems.contains {
                $0.kind == "crash"
                    && $0.message.contains(
                        #"libswatch.so (test.dev.swatch 1) crashed with SIGSEGV in draw [swatch:swatch] for body[1] (id "m1")"#
                    )
            }
        }
        #expect(fault != nil, "\(dev.log)")
        // A new worker serves without the culprit: its components fall back, the quarantine is listed.
        let after = dev.waitForFrame {
            $0.problems.contains { $0.kind == "quarantine" && $0.message.contains("libswatch.so") }
                && $0.html.contains("Trending")
        }
        #expect(after != nil, "\(dev.log)")
        #expect(after?.html.contains("taps:") == false, "swatches fell back")

        // The fixed build lands: it serves, with the UI state the supervisor kept.
        try build(version: "2", crashing: false)
        let fixed = dev.waitForFrame { $0.html.contains("One taps:2") && $0.html.contains("Trending taps:0") }
        #expect(fixed != nil, "\(dev.log)")
        #expect(dev.process.isRunning)
    }

    /// A fix saved while the build before it hangs in its probe is probed beside it and served at once: it waited
    /// for the hung probe to be killed (the whole probe timeout, 30 s here).
    @Test func aFixSavedWhileABuildHangsInItsProbeDoesNotWaitForIt() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache, extra: ["--probe-timeout", "30"])
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"2\"", "HANG_IN_INIT"])
        Thread.sleep(forTimeInterval: 1)  // its probe is running (hung in init)
        let saved = Date()
        try build(version: "3", crashing: false)
        let served = dev.waitForFrame(timeout: 25) {
            $0.plugins?.contains { $0.file == "libswatch.so" && $0.version == "3" } == true
        }
        #expect(served != nil, "\(dev.log)")
        #expect(Date().timeIntervalSince(saved) < 20, "served after \(Date().timeIntervalSince(saved)) s")
    }

    /// A build that stops half-way (a truncated image) is not loaded, and after a moment the terminal says why
    /// nothing happens (it said nothing); the rest of the write then loads as usual.
    @Test func aTruncatedBuildIsSaidToBeWaitedFor() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        let whole = root.appendingPathComponent("whole.so")
        try TestSupport.compilePlugin("swatch.c", to: whole, defines: ["PLUGIN_VERSION=\"2\""])
        let bytes = try Data(contentsOf: whole)
        let half = root.appendingPathComponent("half.so")
        try bytes.prefix(bytes.count / 2).write(to: half)
        #expect(rename(half.path, swatch.path) == 0)
        #expect(
            TestSupport.waitUntil(timeout: 15) { dev.log.contains("libswatch.so: not loaded yet") },
            "\(dev.log)")
        #expect(dev.log.contains("not a whole ELF image yet"), "\(dev.log)")
        #expect(dev.log.components(separatedBy: "not a whole ELF image yet").count == 2, "said once: \(dev.log)")
        #expect(try dev.frame().html.contains("One taps:0"), "version 1 keeps serving")
        try bytes.write(to: swatch)
        #expect(
            dev.waitForFrame { $0.plugins?.contains { $0.file == "libswatch.so" && $0.version == "2" } == true } != nil,
            "\(dev.log)")
    }

    /// A model inserted by a view edit that crashes the plugin is named by its own id: the supervisor learnt the
    /// file's new text only with the frame the crash never sent, and named the model that had been at that index.
    @Test func aCrashOnAModelAnEditInsertedNamesThatModel() throws {
        try build(version: "1", crashing: true)
        try writeView(["One", "Calm"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("Calm taps:0") } != nil, "\(dev.log)")
        try
            #"{"id": "dev", "body": [{"id": "m0", "component": {"id": "swatch:swatch"}, "text": {"title": "One"}}, {"id": "inserted", "component": {"id": "swatch:swatch"}, "text": {"title": "Trending"}}, {"id": "m1", "component": {"id": "swatch:swatch"}, "text": {"title": "Calm"}}]}"#
            .write(to: view, atomically: true, encoding: .utf8)
        let fault = dev.waitForFrame {
            $0.problems.contains { $0.kind == "crash" && $0.message.contains("for body[1] (id ") }
        }
        #expect(fault?.problems.contains { $0.message.contains(#"for body[1] (id "inserted")"#) } == true, "\(dev.log)")
    }

    /// A crash while the view file holds invalid JSON (the worker drew the last good view) names the component and
    /// the model's id from that view, as any other crash report does (it named only `body[1]`).
    @Test func aCrashWhileTheViewFileIsBrokenNamesTheModel() throws {
        try build(version: "1", crashing: false)
        try writeView(["One", "Trending"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("Trending taps:0") } != nil, "\(dev.log)")
        try Data(#"{"id": "dev", "body": [{"id": "m0", "#.utf8).write(to: view)
        #expect(
            dev.waitForFrame { $0.problems.contains { $0.message.contains("not valid JSON") } } != nil, "\(dev.log)")
        try build(version: "2", crashing: true)
        let fault = dev.waitForFrame {
            $0.problems.contains {
                $0.kind == "crash"
                    && $0.message.contains(#"crashed with SIGSEGV in draw [swatch:swatch] for body[1] (id "m1")"#)
            }
        }
        #expect(fault != nil, "\(dev.log)")
    }

    /// What the page set up (its widths, the view's width, a model edited in memory) outlives the worker a crash ended, even when the
    /// edit is what crashed it: the new worker draws it without the culprit. On a fixed port, as people run it: a
    /// restarted worker once refused the port its own supervisor serves on, and no worker came back.
    @Test func thePagesWidthsAndEditsOutliveACrash() throws {
        try build(version: "1", crashing: true)
        try writeView(["One", "Calm"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache, fixedPort: true)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("Calm taps:0") } != nil, "\(dev.log)")
        try dev.post("/widths", ["widths": [320], "width": 414])
        #expect(dev.waitForFrame { $0.extras?.map(\.width) == [320] && $0.width == 414 } != nil, "\(dev.log)")
        let edited: [String: Any] = [
            "id": "m1", "component": ["id": "swatch:swatch"], "text": ["title": "Trending"],
        ]
        try dev.post("/edit", ["section": "body", "indexPath": [1], "model": edited])
        let after = dev.waitForFrame {
            $0.problems.contains { $0.kind == "quarantine" && $0.message.contains("libswatch.so") }
                && $0.html.contains("Trending") && $0.extras?.map(\.width) == [320] && $0.width == 414
        }
        #expect(after != nil, "\(dev.log)")
    }

    /// A new plugin file whose probe crashes (in init) is listed in the plugins panel as quarantined, with why; it
    /// was only in the overlay and the log.
    @Test func aNewFileTheProbeQuarantinesIsInThePluginsPanel() throws {
        let dev = try startServingOne()
        defer { dev.stop() }
        try TestSupport.installPlugin(
            "swatch.c", at: plugins.appendingPathComponent("libbroken.so"),
            defines: ["PLUGIN_VERSION=\"9\"", "CRASH_IN_INIT", "PLUGIN_ID=\"com.test.broken\"", "NAMESPACE=\"broken\""])
        let listed = dev.waitForFrame {
            $0.plugins?.contains { $0.file == "libbroken.so" && $0.state == "quarantined" && $0.reason != nil } == true
        }
        #expect(listed != nil, "\(dev.log)")
    }

    /// A served plugin renamed (`mv`) keeps serving under its new name (its new name was refused as the same image
    /// as the old one, then the old name unloaded: nothing served).
    @Test func aRenamedPluginKeepsServing() throws {
        let dev = try startServingOne()
        defer { dev.stop() }
        try FileManager.default.moveItem(at: swatch, to: plugins.appendingPathComponent("libswatch-renamed.so"))
        let renamed = dev.waitForFrame {
            $0.plugins?.contains { $0.file == "libswatch-renamed.so" && $0.state == "active" } == true
                && $0.plugins?.contains { $0.file == "libswatch.so" } == false
        }
        #expect(renamed != nil, "\(dev.log)")
        usleep(600_000)  // past the quiet period, when the old name's deletion is handled
        let later = try dev.frame()
        #expect(later.html.contains("One taps:"), "still drawn by the plugin: \(dev.log)")
        #expect(later.plugins?.contains { $0.file == "libswatch-renamed.so" && $0.state == "active" } == true)
    }

    /// A plugin refused because another held its namespace loads once that one is gone (it stayed refused, naming
    /// an owner that no longer held it).
    @Test func aPluginRefusedForATakenNamespaceLoadsWhenItIsFree() throws {
        let dev = try startServingOne()
        defer { dev.stop() }
        try TestSupport.installPlugin(
            "swatch.c", at: plugins.appendingPathComponent("libtwin.so"),
            defines: ["PLUGIN_VERSION=\"7\"", "PLUGIN_ID=\"com.test.twin\"", "SWATCH_COLOR=0x00FF00FFu"])
        let refused = dev.waitForFrame {
            $0.plugins?.contains { $0.file == "libtwin.so" && $0.state == "rejected" } == true
        }
        #expect(refused != nil, "\(dev.log)")
        try FileManager.default.removeItem(at: swatch)
        let taken = dev.waitForFrame {
            $0.plugins?.contains { $0.file == "libtwin.so" && $0.state == "active" } == true
                && $0.html.contains("One taps:")
        }
        #expect(taken != nil, "\(dev.log)")
    }

    /// A module file edited during a session is bound again (it was read once, at start): a fresh worker takes
    /// over, keeping the page's state.
    @Test func anEditedModuleFileIsBoundAgain() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let moduleFile = plugins.appendingPathComponent("swatch.modules.json")
        func bind(_ key: String) throws {
            try
                #"{"bindings": [{"key": "\#(key)", "plugin": "libswatch.so", "symbol": "hub_plugin_entry", "signature": "()->ptr"}]}"#
                .write(to: moduleFile, atomically: true, encoding: .utf8)
        }
        try bind("first.key")
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        _ = try dev.tap([0])
        try bind("second.key")
        let rebound = dev.waitForFrame { $0.cause.contains("restarted: module files changed") }
        #expect(rebound != nil, "\(dev.log)")
        #expect(rebound?.html.contains("One taps:1") == true, "the UI state went with the page")
    }

    /// A binding said to be unbound while its plugin was quarantined is bound when a fixed build lands, and the
    /// warning goes with it (it stayed on the page through every later build).
    @Test func aBindingWarningGoesWhenItsPluginsFixedBuildLands() throws {
        try build(version: "1", crashing: true)
        try writeView(["One", "Trending"])
        try
            #"{"bindings": [{"key": "first.key", "plugin": "libswatch.so", "symbol": "hub_plugin_entry", "signature": "()->ptr"}]}"#
            .write(to: plugins.appendingPathComponent("swatch.modules.json"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        let unbound = dev.waitForFrame {
            $0.problems.contains { $0.message.contains("plugin libswatch.so did not load (quarantined)") }
        }
        #expect(unbound != nil, "\(dev.log)")
        try build(version: "2", crashing: false)
        let fixed = dev.waitForFrame { $0.html.contains("Trending taps:0") }
        #expect(fixed != nil, "\(dev.log)")
        #expect(fixed?.problems.contains { $0.message.contains("did not load") } == false, "\(fixed?.problems ?? [])")
    }

    /// A worker started while the page is open gets none of the preview server's sockets (it kept the listening
    /// socket and every connection open then, so a connection the server closed stayed open for the browser).
    @Test func aRestartedWorkerHoldsNoneOfTheServersSockets() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        let stream = try HTTP.connect(port: dev.port)
        defer { close(stream) }
        HTTP.send(stream, Data("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(dev.port)\r\n\r\n".utf8))
        try #"{"bindings": []}"#.write(
            to: plugins.appendingPathComponent("swatch.modules.json"), atomically: true, encoding: .utf8)
        #expect(dev.waitForFrame { $0.cause.contains("restarted: module files changed") } != nil, "\(dev.log)")
        // Every process under `dev` (the worker, the probe server): no socket among their descriptors.
        func descendants(of pid: Int32) -> [Int32] {
            let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [])
                .flatMap { task in
                    ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                        .split(separator: " ").compactMap { Int32($0) }
                }
            return children + children.flatMap(descendants)
        }
        let under = descendants(of: dev.process.processIdentifier)
        #expect(!under.isEmpty)
        for pid in under {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let sockets = descriptors.filter {
                ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "")
                    .hasPrefix("socket:")
            }
            #expect(sockets.isEmpty, "process \(pid) holds sockets \(sockets)")
        }
    }

    /// A module file that is not JSON, or binds a symbol the plugin lacks, is said in the terminal and on the
    /// page, as every other command says it (the bindings used to vanish without a word); fixed, it is not.
    @Test func aBrokenModuleFileIsSaidAndItsFixClearsIt() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        let moduleFile = plugins.appendingPathComponent("swatch.modules.json")
        try #"{"bindings": [{"key": "k", "#.write(to: moduleFile, atomically: true, encoding: .utf8)
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        let broken = dev.waitForFrame { $0.problems.contains { $0.message.contains("swatch.modules.json") } }
        #expect(broken != nil, "\(dev.log)")
        #expect(dev.log.contains("warning: ") && dev.log.contains("swatch.modules.json: "), "\(dev.log)")
        try
            #"{"bindings": [{"key": "k", "plugin": "libswatch.so", "symbol": "no_such_symbol", "signature": "()->ptr"}]}"#
            .write(to: moduleFile, atomically: true, encoding: .utf8)
        let missing = dev.waitForFrame {
            $0.cause.contains("restarted: module files changed")
                && $0.problems.contains { $0.message.contains("binding 'k'") && $0.message.contains("no_such_symbol") }
        }
        #expect(missing != nil, "\(dev.log)")
        try
            #"{"bindings": [{"key": "k", "plugin": "libswatch.so", "symbol": "hub_plugin_entry", "signature": "()->ptr"}]}"#
            .write(to: moduleFile, atomically: true, encoding: .utf8)
        let fixed = dev.waitForFrame {
            $0.cause.contains("restarted: module files changed")
                && !$0.problems.contains { $0.message.contains("swatch.modules.json") }
        }
        #expect(fixed?.html.contains("One taps:0") == true, "\(dev.log)")
    }

    /// A crash in a function a module file binds may be the binding's fault (the wrong function named): fixing the
    /// module file lets the provider in again, as a new build of it would (it stayed quarantined until a rebuild).
    @Test func fixingTheModuleFileLiftsAQuarantineFromABoundFunction() throws {
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"1\"", "INJECTS_THING"])
        try TestSupport.installPlugin(
            "swatch.c", at: plugins.appendingPathComponent("libprovider.so"),
            defines: [
                "PLUGIN_VERSION=\"1\"", "PLUGIN_ID=\"test.dev.provider\"", "NAMESPACE=\"provider\"", "MAKE_CRASHES",
            ])
        let moduleFile = plugins.appendingPathComponent("swatch.modules.json")
        func bind(_ symbol: String) throws {
            try
                #"{"bindings": [{"key": "swatch.thing", "plugin": "libprovider.so", "symbol": "\#(symbol)", "signature": "()->ptr"}]}"#
                .write(to: moduleFile, atomically: true, encoding: .utf8)
        }
        try bind("swatch_make")
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        let out = dev.waitForFrame {
            $0.html.contains("One taps:0 word:not made")
                && $0.plugins?.contains { $0.file == "libprovider.so" && $0.state == "quarantined" } == true
        }
        #expect(out != nil, "\(dev.log)")
        try bind("swatch_make_safe")
        let back = dev.waitForFrame {
            $0.html.contains("One taps:0 word:made")
                && $0.plugins?.contains { $0.file == "libprovider.so" && $0.state == "active" } == true
        }
        #expect(back != nil, "\(dev.log)")
    }

    /// A worker that starts while the view file is half-written (or gone) draws the last good view, which the
    /// supervisor kept (it drew nothing, and took no build until the file was fixed); the page's widths are part of
    /// its first render, not a "widths changed" of their own; its first line names the builds serving.
    @Test func aRestartWhileTheViewFileIsBrokenDrawsTheLastGoodView() throws {
        try build(version: "1", crashing: false)
        try writeView(["One", "Calm"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("Calm taps:0") } != nil, "\(dev.log)")
        try dev.post("/widths", ["widths": [320]])
        #expect(dev.waitForFrame { $0.extras?.map(\.width) == [320] } != nil, "\(dev.log)")
        try Data(#"{"id": "dev", "body": [{"id": "m0", "#.utf8).write(to: view)
        #expect(
            dev.waitForFrame { $0.problems.contains { $0.message.contains("not valid JSON") } } != nil, "\(dev.log)")
        // A changed module file replaces the worker (as a fault does): the new one reads the broken file.
        try #"{"bindings": []}"#.write(
            to: plugins.appendingPathComponent("swatch.modules.json"), atomically: true, encoding: .utf8)
        let restarted = dev.waitForFrame { $0.cause.contains("restarted: module files changed") }
        #expect(restarted?.html.contains("Calm taps:0") == true, "\(dev.log)")
        #expect(restarted?.extras?.map(\.width) == [320], "\(dev.log)")
        #expect(restarted?.problems.contains { $0.message.contains("not valid JSON") } == true, "\(dev.log)")
        #expect(dev.log.contains("1 plugin(s) loaded (libswatch.so 1), 0 quarantined"), "\(dev.log)")
        #expect(dev.log.components(separatedBy: "widths changed").count == 2, "said once: \(dev.log)")
        // The file fixed: drawn as it is.
        try writeView(["One", "Fixed"])
        #expect(dev.waitForFrame { $0.html.contains("Fixed taps:0") } != nil, "\(dev.log)")
    }

    /// Requests that come while a worker restarts wait for its first line (a page scrolling a large view sends
    /// them all the time): written in the middle of it, one cut the line short and each side then blocked writing
    /// to the other, for good.
    @Test func pageRequestsDuringARestartDoNotStopTheSession() throws {
        try build(version: "1", crashing: false)
        try writeView((0..<8_000).map { "Row \($0) with a title long enough to make the view file large" })
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame(timeout: 60) { $0.window != nil } != nil, "\(dev.log)")
        try #"{"bindings": []}"#.write(
            to: plugins.appendingPathComponent("swatch.modules.json"), atomically: true, encoding: .utf8)
        let scrolls = DispatchGroup()
        for step in 0..<20 {
            DispatchQueue.global().async(group: scrolls) {
                _ = try? dev.post("/scroll", ["y": 1000 * step, "height": 800])
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // The page's own frames follow at once (the scrolls): the terminal says the new worker drew.
        #expect(
            TestSupport.waitUntil(timeout: 60) { dev.log.contains("initial — restarted: module files changed") },
            "\(dev.log)")
        #expect(scrolls.wait(timeout: .now() + 60) == .success, "every request was answered")
        _ = try dev.post("/scroll", ["y": 50_000, "height": 800])
        #expect(dev.waitForFrame(timeout: 30) { ($0.window?.top ?? 0) > 40_000 } != nil, "\(dev.log)")
    }

    /// A rebuild whose eager singleton (bound by a module file) crashes is quarantined by its probe, and the build
    /// that works keeps serving (the probe did not make eager singletons: the swap crashed the worker, and the
    /// plugin was gone until fixed).
    @Test func aRebuildWhoseEagerSingletonCrashesLeavesTheOldOneServing() throws {
        try build(version: "1", crashing: false)
        try writeView(["One"])
        try
            #"{"bindings": [{"key": "swatch.thing", "plugin": "libswatch.so", "symbol": "swatch_make", "signature": "()->ptr", "scope": "singleton", "eager": true}]}"#
            .write(to: plugins.appendingPathComponent("swatch.modules.json"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"2\"", "MAKE_CRASHES"])
        let kept = dev.waitForFrame {
            $0.cause.contains("quarantined") && $0.cause.contains("eager singletons")
                && $0.plugins?.contains { $0.file == "libswatch.so" && $0.state == "active" } == true
        }
        #expect(kept != nil, "\(dev.log)")
        #expect(try dev.frame().html.contains("One taps:0"), "still drawn by the build that works")
    }

    /// A consumer acquires a service when it is configured: when the provider is rebuilt, removed or put back, the
    /// consumers are configured again and show what is there now (they kept the old provider's word).
    @Test func consumersFollowTheirProvidersRebuilds() throws {
        try build(version: "1", crashing: false)  // the consumer: swatch, using the word
        try TestSupport.installPlugin("swatch.c", at: swatch, defines: ["PLUGIN_VERSION=\"1\"", "USES_WORD"])
        let provider = plugins.appendingPathComponent("libprovider.so")
        func provide(_ word: String) throws {
            try TestSupport.installPlugin(
                "swatch.c", at: provider,
                defines: [
                    "PLUGIN_VERSION=\"\(word)\"", "PLUGIN_ID=\"test.dev.provider\"", "NAMESPACE=\"provider\"",
                    "PROVIDES_WORD=\"\(word)\"",
                ])
        }
        try provide("v1")
        try writeView(["One"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:v1") } != nil, "\(dev.log)")
        try provide("v2")
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:v2") } != nil, "\(dev.log)")
        try FileManager.default.removeItem(at: provider)
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:none") } != nil, "\(dev.log)")
        try provide("v3")
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:v3") } != nil, "\(dev.log)")
        // A build that provides nothing, then one that provides again: its key is registered in its init, before
        // the swap, which once left the consumer with the "none" it had.
        try TestSupport.installPlugin(
            "swatch.c", at: provider,
            defines: ["PLUGIN_VERSION=\"v4\"", "PLUGIN_ID=\"test.dev.provider\"", "NAMESPACE=\"provider\""])
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:none") } != nil, "\(dev.log)")
        try provide("v5")
        #expect(dev.waitForFrame { $0.html.contains("One taps:0 word:v5") } != nil, "\(dev.log)")
    }

    /// A standing view warning is said once on the terminal, not again with every reload.
    @Test func aStandingViewWarningIsSaidOnce() throws {
        try build(version: "1", crashing: false)
        try
            #"{"body": [{"id": "a", "component": {"id": "swatch:swatch"}, "text": {"title": "One"}}, {"id": "b", "component": {"id": "nobody:thing"}}]}"#
            .write(to: view, atomically: true, encoding: .utf8)
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        #expect(dev.waitForFrame { $0.html.contains("One taps:0") } != nil, "\(dev.log)")
        for version in ["2", "3"] {
            try build(version: version, crashing: false)
            #expect(
                TestSupport.waitUntil {
                    dev.log.contains("swatch (test) \(version)") || dev.log.contains(" \(version):")
                })
        }
        usleep(300_000)
        let said = dev.lines.filter { $0.contains("\"nobody:thing\"") }
        #expect(said.count == 1, "\(dev.log)")
    }

    @Test func aPluginThatCrashesAtStartUpDoesNotStopTheServer() throws {
        try build(version: "1", crashing: true)
        try writeView(["Trending", "Calm"])
        let dev = try DevProcess(view: view, plugins: plugins, cache: cache)
        defer { dev.stop() }
        let frame = dev.waitForFrame {
            $0.problems.contains { $0.message.contains("crashed with SIGSEGV in draw [swatch:swatch] for body[0]") }
                && $0.html.contains("Calm")
        }
        #expect(frame != nil, "\(dev.log)")
        #expect(dev.process.isRunning)
        #expect(dev.log.contains(#"libswatch.so (test.dev.swatch 1) crashed with SIGSEGV in draw"#))
    }
}
