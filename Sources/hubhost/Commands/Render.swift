import ArgumentParser
import Foundation
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
            Components whose namespace has no plugin, or whose plugin has no such component, fall back by category.

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
                (.problems, "rendered, but the view had problems (listed on stderr)"),
                (.failed, "nothing rendered: the file cannot be read, is not JSON, has a root that is not a view, "
                    + "or --strict found problems; or the output cannot be written"),
                (.notFound, "--layout-manager names no registered layout manager"),
            ]))
            """
    )

    @Argument(help: ArgumentHelp("The view model (Hub JSON).", valueName: "view.json"))
    var view: String

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var viewport: ViewportOptions

    @OptionGroup var images: ImageOptions

    @Option(help: "Output format: json, svg, html or text.")
    var format: Format = .json

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Write to this file (- for stdout; a device, FIFO or symlink is written through, never replaced).",
            valueName: "file"))
    var output: String?

    @Flag(help: "Treat any problem in the view as an error: render nothing, exit 2.")
    var strict = false

    @Option(
        name: .customLong("layout-manager"),
        help: ArgumentHelp(
            "Use the layout manager a plugin registered under this id instead of the host default.", valueName: "id"))
    var layoutManager: String?

    @Option(help: "The margin of the host's default layout manager (Hub's componentMargin).")
    var margin: Double = 15

    @Option(
        name: .customLong("max-errors"), help: "Report at most this many problems of the view (the rest are counted).")
    var maxErrors: Int = 100

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, svg, html, text }

    func validate() throws {
        if let problem = InputLimits.problem(margin, in: 0...InputLimits.margin) {
            throw ValidationError("--margin: \(problem)")
        }
        guard maxErrors > 0 else { throw ValidationError("--max-errors must be at least 1") }
    }

    func run() throws {
        let url = URL(fileURLWithPath: view)
        let fileName = view

        // Decode first: a broken file needs no plugins.
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            Diagnostics.print("\(fileName): cannot read: \(error.localizedDescription)")
            throw ExitCode(.failed)
        }
        let decoded: DecodeResult
        do {
            decoded = try ViewModelDecoder(file: fileName, maxIssues: maxErrors).decode(data)
        } catch let failure as DecodeFailure {
            Diagnostics.print(failure.description)
            throw ExitCode(.failed)
        }
        let access = images.access(viewFile: url)
        var problems = decoded.issues.map(\.description)
        problems += access.problems(in: decoded.viewModel, file: fileName).map(\.description)
        if decoded.suppressedIssueCount > 0 {
            problems.append(
                "\(fileName): … and \(decoded.suppressedIssueCount) more problems (--max-errors \(maxErrors))")
        }
        for line in problems { Diagnostics.print(line) }
        if strict && !problems.isEmpty {
            Diagnostics.print("\(fileName): not rendered (--strict): \(decoded.totalIssueCount) problem(s)")
            throw ExitCode(.failed)
        }

        let host = plugins.makeHost()
        plugins.reportProblems(of: host)

        let manager: HubCore.LayoutManager
        do {
            manager = try LayoutManagerChoice.resolve(id: layoutManager, in: host.layoutManagers, defaultMargin: margin)
        } catch {
            Diagnostics.print("hubhost: \(error)")
            throw ExitCode(.notFound)
        }

        let pipeline = RenderPipeline(registry: host.registry, layoutManager: manager)
        // A one-shot render: instances are reused as they are drawn; only drawings keep display lists.
        pipeline.options = RenderPipeline.Options(
            retainBodyInstances: false,
            keepDisplayLists: format == .svg || format == .html)
        let tree = pipeline.render(decoded.viewModel, viewport: viewport.size)

        let naming = SourceNaming { owner in
            host.plugins.first { $0.owner == owner }?.id ?? SourceNaming.idBeforeVersion(owner)
        }
        // Instances go before the plugins that made them.
        pipeline.tearDown()

        let sink: OutputFile
        do { sink = try OutputFile(path: output ?? "-") } catch {
            Diagnostics.print("hubhost: \(error)")
            throw ExitCode(.failed)
        }
        let resolver = ImageResolver(access: access)
        switch format {
        case .json: JSONRenderer(naming: naming).render(tree) { sink.write($0) }
        case .svg: sink.write(SVGRenderer(images: resolver).render(tree))
        case .html:
            sink.write(
                HTMLRenderer(svg: SVGRenderer(images: resolver), naming: naming).render(tree, diagnostics: problems))
        case .text: sink.write(TextRenderer(naming: naming).render(tree))
        }
        do { try sink.commit() } catch {
            Diagnostics.print("hubhost: \(error)")
            throw ExitCode(.failed)
        }
        if !problems.isEmpty { throw ExitCode(.problems) }
    }
}
