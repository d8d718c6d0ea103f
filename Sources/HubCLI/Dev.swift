import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost dev VIEW.json`: hot reload with a live browser preview.
struct Dev: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Watch plugins and a view file, hot-reload changed plugins, and serve a live preview.",
        discussion: """
            Serves the rendered view at http://HOST:PORT/ (loopback only unless --host says otherwise). The page \
            updates itself over server-sent events after every plugin reload or edit of the view file; a click on a \
            component taps it; quarantined plugins and JSON errors show as an overlay. Every new or changed plugin \
            build is first exercised in a child process (`hubhost probe`): a crash, hang or failure quarantines that \
            version and the previous one keeps serving. One line per reload: plugin, version, result, latency.
            Plugins run in a worker process this one supervises: when plugin code crashes, hangs (one call longer \
            than --call-timeout) or exits, the page shows which plugin, call and model, that version is \
            quarantined, and a new worker takes over with the UI states kept; the page keeps being served. \
            --in-process runs everything here (for a debugger).
            GET /frame returns the current frame as JSON; GET /events is the event stream.
            Runs until interrupted. \(ExitStatus.help([
                (.failed, "the view file or the port cannot be used"),
                (.notFound, "a --plugins folder does not exist"),
            ]))
            """
    )

    @Argument(help: "The view model (Hub JSON); not with --gallery.")
    var view: String?

    @Flag(help: "Show every story of every loaded plugin (as `hubhost gallery`), hot-reloaded, instead of a view.")
    var gallery = false

    @OptionGroup var plugins: PluginOptions

    @Option(parsing: .unconditional, help: "Port of the preview server (0 picks a free one).")
    var port: UInt16 = 8700

    @Option(
        help: """
            Address to listen on. The default serves this machine only; 0.0.0.0 (or ::) serves every interface, \
            so anyone who can reach the port can see and tap the view.
            """)
    var host = "127.0.0.1"

    @Option(
        name: .customLong("quiet-ms"), parsing: .unconditional,
        help: "Quiet period after the last change of a file before it is reloaded.")
    var quietMilliseconds = 150

    @Option(
        name: .customLong("probe-timeout"), parsing: .unconditional,
        help: "Seconds a probe may take before the plugin counts as hanging.")
    var probeTimeout: Double = 5

    @Option(
        name: .customLong("retired-budget-mb"), parsing: .unconditional,
        help: "Warn when retired Swift images keep more than this mapped.")
    var retiredBudget = 256

    @Flag(name: .customLong("no-probe"), help: "Load new builds without probing them in a child process first.")
    var noProbe = false

    @OptionGroup var viewport: ViewportOptions

    @OptionGroup var images: ImageOptions

    @OptionGroup var isolation: IsolationOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Draw the view at these widths (each 1 to 4096) side by side (the first is the interactive one; the page can change them).",
            valueName: "320,375,768"))
    var widths: WidthList?

    func validate() throws {
        if let problem = widths?.problem { throw ValidationError("--widths: \(problem)") }
        guard (view == nil) == gallery else { throw ValidationError("give a view file, or --gallery (not both)") }
        guard (0...60_000).contains(quietMilliseconds) else { throw ValidationError("--quiet-ms: must be 0 to 60000") }
        if let problem = InputLimits.problem(probeTimeout, in: 0...3600, excludingLowerBound: true) {
            throw ValidationError("--probe-timeout: \(problem)")
        }
        guard (0...(1 << 30)).contains(retiredBudget) else {
            throw ValidationError("--retired-budget-mb: must be 0 to \(1 << 30)")
        }
    }

    /// What listening on every interface means, said at start: the page, its taps and its edits are open to
    /// anyone who can reach the port (nothing but the `Host` check stands between them and the preview).
    static func networkWarning(host: String, port: UInt16) -> String {
        let addresses = MachineAddresses.networkAddresses().map { "http://\($0):\(port)/" }
        let reach = addresses.isEmpty ? "" : " (this machine: \(addresses.joined(separator: ", ")))"
        return "hubhost dev: warning: --host \(host) listens on every interface: anyone who can reach port \(port)"
            + "\(reach) sees the view and can tap and edit it; use --host 127.0.0.1 (the default) to keep it here"
    }

    /// True when binding `host:port` fails because something listens there (the address resolved as the server
    /// resolves it; with SO_REUSEADDR, as servers bind, so a port in TIME_WAIT is not taken for a busy one).
    static func portInUse(host: String, port: UInt16) -> Bool {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { return false }
        defer { freeaddrinfo(found) }
        let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        return bind(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 && errno == EADDRINUSE
    }

    func run() throws {
        // A folder named that does not exist would make every worker fail to watch it, and be restarted for ever.
        try plugins.requireNamedFolders()
        let viewFile = URL(fileURLWithPath: view ?? "gallery.json").standardizedFileURL
        // Only when the session starts: a worker restarted while the file is away draws the last good view.
        if let view, !CallRecorder.isWorker, !FileManager.default.fileExists(atPath: viewFile.path) {
            Diagnostics.print("hubhost dev: \(TerminalText.escaped(view)): no such file")
            throw ExitCode(.failed)
        }
        // A port in use is said before any plugin is loaded (the server would only find out after the first frame).
        // Not by a worker: a restarted one would find the port its own supervisor serves on and exit.
        if port != 0, !CallRecorder.isWorker, Self.portInUse(host: host, port: port) {
            Diagnostics.print(
                "hubhost dev: cannot serve on \(host):\(port): port \(port) is in use (another hubhost dev?); pick "
                    + "another with --port, or --port 0")
            throw ExitCode(.failed)
        }
        var options = DevLoop.Options(pluginFolders: plugins.folders, viewFile: viewFile)
        let (cache, cacheProblem) = CacheFolder.usable(plugins.cacheDirectory.map { URL(fileURLWithPath: $0) })
        if let cacheProblem { Diagnostics.print("hubhost: \(cacheProblem)") }
        options.imageCacheDirectory = cache
        options.trust = plugins.trust
        options.preferredPluginIDs = Set(plugins.preferred)
        options.quietPeriod = Double(quietMilliseconds) / 1000
        options.probeTimeout = probeTimeout
        options.retiredMemoryBudget = retiredBudget << 20
        options.probe = !noProbe
        options.viewport = viewport.size
        options.gallery = gallery
        if let widths = widths?.values, let first = widths.first {
            options.viewport.width = first
            options.extraWidths = Array(widths.dropFirst())
        }
        // A story has no folder (the gallery's view file is a placeholder in the working directory): it draws data:
        // URIs only, on the sheet and on its own canvas alike, as `hubhost gallery` draws it.
        let imageAccess = gallery ? ImageAccess(viewFile: nil) : images.access(viewFile: viewFile)
        options.imageAccess = imageAccess

        // The page shows the view as the SVG drawing HubRender's HTML output embeds; frames are drawn by the page.
        // Images drawn as `render --format html` draws them: data: URIs, and files the view may use, inlined.
        // A resolver per drawing: an image file replaced while the page is open is read again on the next frame.
        let folders = options.pluginFolders.map(\.path).joined(separator: ", ")
        let what = gallery ? "the gallery of every story" : "view \(TerminalText.escaped(viewFile.path))"
        let host = host
        let port = port
        // An IPv6 address is bracketed in a URL ("http://[::1]:8080/"), or the browser reads its colons as a port.
        // Every interface: the page is opened here by a loopback address (a browser sends "0.0.0.0" as the name).
        let everyInterface = MachineAddresses.isWildcard(host)
        let urlHost = everyInterface ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
        let launch = DevLaunch(
            options: options, bindAddress: host, port: port, supervises: isolation.supervises,
            callTimeout: isolation.callTimeout,
            probeCacheDirectory: ProbeGate.defaultCacheDirectory(imagesDirectory: cache),
            html: { tree, idPrefix, supplied in
                var svg = SVGRenderer(
                    images: ImageResolver(access: imageAccess, supplied: supplied), showFrames: false)
                svg.idPrefix = idPrefix
                return svg.render(tree)
            },
            gallery: { GallerySheet(items: $0.map(\.galleryItem)).placedSVG() },
            makeLogger: plugins.makeLogger,
            reportProblems: { plugins.reportProblems(of: $0) },
            servingLine: { port in
                let serving = "hubhost dev: serving http://\(urlHost):\(port)/ — \(what), plugins \(folders)"
                guard everyInterface else { return serving }
                return serving + "\n" + Self.networkWarning(host: host, port: port)
            },
            cannotServe: { error in
                Diagnostics.print("hubhost dev: cannot serve on \(host):\(port): \(ErrorText.describe(error))")
                Glibc.exit(ExitStatus.failed.rawValue)
            })
        try DevFrontEnd.run(launch)
    }
}
