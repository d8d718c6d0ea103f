import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

/// `hubhost render VIEW.json`: decode a Hub view model, resolve its components through the loaded plugins, lay
/// it out and write frames (JSON), a drawing (SVG, HTML) or an outline (text).
struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract:
            "Render a Hub JSON view model with the loaded plugins: frames as JSON, a drawing as SVG or HTML, or an outline.",
        discussion: """
            The view is decoded with Hub's schema (a root array is the body). Every value of the wrong type is \
            reported on stderr as FILE: JSON-PATH: problem, left out, and rendering goes on (unless --strict). \
            Components whose namespace has no plugin, or whose plugin has no such component, fall back by category, \
            as in Hub; each such component id gets a warning at its first model, with the nearest id the plugins \
            provide (the exit status is not changed by it; --strict refuses the view).

            Images: data: URIs are drawn; http(s) URIs are never fetched (a placeholder is drawn); local paths \
            (relative, absolute or file:) are read only when they resolve, after symlinks and "..", inside the \
            view's folder or an --assets folder, to a regular file of at most --max-image-bytes. Any other image \
            is a problem naming its JSON path, and its placeholder is drawn.

            JSON output: {"body": [node], "contentSize", "header": node|null, "overlays": [node], "viewport"} with \
            node = {"children", "componentIdentifier", "frame": {"height","width","x","y"}, "id", "indexPath", \
            "source": {"namespace","plugin"} or "fallback", "traits"}; keys sorted. Child frames are relative to \
            their parent, overlay frames to the viewport.

            \(ExitStatus.help([
                (.ok, "rendered, no problems in the view"),
                (.problems, "rendered, but the view had problems or a plugin could not be loaded (listed on stderr)"),
                (.failed, "nothing rendered: the file cannot be read, is not JSON, has a root that is not a view, "
                    + "or --strict found problems; or the output cannot be written"),
                (.notFound, "--layout-manager names no registered layout manager, or a --plugins folder does not "
                    + "exist (nothing rendered)"),
                (.pluginFault, "rendered, but a plugin crashed, hung or exited: it was quarantined and its components "
                    + "fell back (the fault is on stderr)"),
            ]))
            """
    )

    @Argument(help: ArgumentHelp("The view model (Hub JSON).", valueName: "view.json"))
    var view: String

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var viewport: ViewportOptions

    @OptionGroup var images: ImageOptions

    @OptionGroup var isolation: IsolationOptions

    @Option(help: "Output format: json, svg, html, text or png.")
    var format: DrawingFormat = .json

    @Option(parsing: .unconditional, help: "Pixels per point of --format png (2 for a retina-sized image).")
    var scale: Double = 1

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Write to this file (- for stdout; a device, FIFO or symlink is written through, never replaced).",
            valueName: "file"))
    var output: String?

    @Flag(
        help:
            "Treat any problem in the view, or a component id no plugin provides, as an error: render nothing, exit 2.")
    var strict = false

    @Option(
        name: .customLong("layout-manager"),
        help: ArgumentHelp(
            "Use the layout manager a plugin registered under this id instead of the host default.", valueName: "id"))
    var layoutManager: String?

    @Option(parsing: .unconditional, help: "The margin of the host's default layout manager (Hub's componentMargin).")
    var margin: Double = 15

    @Option(
        name: .customLong("max-errors"), parsing: .unconditional,
        help: "Report at most this many problems of the view (the rest are counted).")
    var maxErrors: Int = 100

    func validate() throws {
        if let problem = InputLimits.problem(margin, in: 0...InputLimits.margin) {
            throw ValidationError("--margin: \(problem)")
        }
        guard maxErrors > 0 else { throw ValidationError("--max-errors must be at least 1") }
        if let problem = InputLimits.problem(scale, in: 0...8, excludingLowerBound: true) {
            throw ValidationError("--scale: \(problem)")
        }
    }

    func run() throws {
        // Plugin code runs in a worker (this command again); this process only supervises it.
        // A --plugins folder that does not exist stops the command before the view is read or anything written.
        try plugins.requireNamedFolders()
        if isolation.supervises { OneShotSupervisor(isolation: isolation, plugins: plugins, viewFile: view).run() }
        // Decode first: a broken file needs no plugins.
        let loaded = try LoadedView.load(view, images: images, maxErrors: maxErrors)
        if strict && !loaded.problems.isEmpty {
            Diagnostics.print("\(view): not rendered (--strict): \(loaded.problemCount) problem(s)")
            throw ExitCode(.failed)
        }

        let host = try plugins.makeHost()
        let pluginStatus = plugins.reportProblems(of: host)
        let unresolved = loaded.reportUnresolvedComponents(in: host, maxErrors: maxErrors)
        if strict && !unresolved.isEmpty {
            Diagnostics.print(
                "\(view): not rendered (--strict): \(unresolved.count) component id(s) no plugin provides")
            throw ExitCode(.failed)
        }

        let manager: HubCore.LayoutManager
        do {
            manager = try LayoutManagerChoice.resolve(id: layoutManager, in: host.layoutManagers, defaultMargin: margin)
        } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.notFound)
        }

        let pipeline = RenderPipeline(registry: host.registry, layoutManager: manager)
        // A one-shot render: instances are reused as they are drawn; only drawings keep display lists.
        pipeline.options = RenderPipeline.Options(
            retainBodyInstances: false, keepDisplayLists: format.needsDisplayLists)
        let tree: RenderTree
        if format.streams {
            // Each body component is written as soon as it is drawn: no display list or body node outlives its
            // write.
            pipeline.options.keepsStreamedBody = false
            tree = try format.writeStreaming(
                naming: host.sourceNaming, access: loaded.access, suppliedImages: host.suppliedImage,
                diagnostics: loaded.problems, to: output
            ) { stream in
                pipeline.options.bodyStream = stream
                defer { pipeline.options.bodyStream = nil }
                return pipeline.render(loaded.viewModel, viewport: viewport.size)
            }
            pipeline.tearDown()
        } else {
            tree = pipeline.render(loaded.viewModel, viewport: viewport.size)
            // Instances go before the plugins that made them.
            pipeline.tearDown()
            try format.write(
                tree, naming: host.sourceNaming, access: loaded.access, suppliedImages: host.suppliedImage,
                diagnostics: loaded.problems, scale: scale, to: output)
        }
        ProcessLifetime.keepUntilExit(loaded, tree)
        if !loaded.problems.isEmpty || pluginStatus != nil || BoundaryValues.replacedAny {
            throw ExitCode(pluginStatus ?? .problems)
        }
    }
}
