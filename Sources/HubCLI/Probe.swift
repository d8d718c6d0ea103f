import ArgumentParser
import CHubSystem
import FoundationEssentials
import HubCore
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost probe PLUGIN.so`: the child side of probing. Loads the plugin in this process and runs the
/// conformance suite, printing one JSON line before each phase (so a parent can tell where a crash happened)
/// and the report as the last line. Hosts run it in a child process with a time limit; a crash or hang here
/// quarantines the file instead of killing the host.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Load one plugin and exercise it (run in a child process by the host; prints JSON lines).",
        discussion: """
            A crash or hang shows as the child's signal or timeout to the parent. \
            \(ExitStatus.help([(.ok, "the plugin may be loaded"), (.problems, "a fatal check failed")]))
            """
    )

    @Argument(help: "The plugin file (with --scan, the plugin files).")
    var plugins: [String] = []

    @Flag(help: "Serve probe requests on stdin, forking a child for each (used by hosts; see ProbeServer).")
    var serve = false

    @Flag(
        help:
            "Probe every file given in turn, each announced by a {\"scan\": N} line (used by hosts for a cold folder; see ProbeScanner)."
    )
    var scan = false

    @Option(help: "Folder for the private copy of the plugin.")
    var cache: String?

    @Option(help: ArgumentHelp("Also run the plugin's components over this view's models.", valueName: "view.json"))
    var view: String?

    func run() throws {
        // A probe ends with the hubhost that started it (killed, stopped by the user), even when its plugin hangs.
        csystem_exit_when_orphaned()
        csystem_unblock_stop_signals()
        if serve { ProbeServer.serve() }
        ProbeOutput.protect()
        // Run by hand without --cache: a folder of its own, made new and removed after.
        let made = cache == nil ? try ScratchFolder.make("hubhost-probe") : nil
        defer { if let made { try? FileManager.default.removeItem(at: made) } }
        let cacheDirectory = cache.map { URL(fileURLWithPath: $0) } ?? made!
        if scan {
            ProbeRunner.scanChild(plugins.map { URL(fileURLWithPath: $0).standardizedFileURL }, cache: cacheDirectory)
        }
        guard plugins.count == 1, let plugin = plugins.first else {
            throw ValidationError("give one plugin file (or --scan FILE…, or --serve)")
        }
        let file = URL(fileURLWithPath: plugin).standardizedFileURL
        var viewModel: ViewModel?
        if let view {
            let loaded = try LoadedView.load(view, images: try ImageOptions.parse([]))
            viewModel = loaded.viewModel
        }
        if !ConformanceSuite.runPrinting(file: file, cacheDirectory: cacheDirectory, view: viewModel) {
            throw ExitCode(.problems)
        }
    }
}
