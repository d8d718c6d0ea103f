import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

/// `hubhost gallery`: every component of every loaded plugin, in each of its stories, at each width.
struct Gallery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gallery",
        abstract: "Show every component of the loaded plugins in each of its stories and widths (HTML, JSON or PNG).",
        discussion: """
            Stories come from plugins (ABI 1.1's hub.showcase/1 extension, HubComponentWithStories in Swift). A \
            component whose plugin declares none is shown with the host's sample models, marked "host". A story's \
            own widths replace --widths.

            JSON: [{"plugin", "pluginVersion", "file", "namespace", "component": "ns:name", "stories": [{"name", \
            "source": "plugin"|"host", "widths", "model" (JSON text), "problem"?, "warnings"}]}], widths filled in. \
            HTML: one page, a \
            section per plugin, a row per component. PNG: the same drawings on one sheet (--scale for pixel density).

            \(ExitStatus.help([
                (.ok, "written"),
                (.problems, "written, but some stories could not be drawn or a plugin could not be loaded (listed on "
                    + "stderr)"),
                (.failed, "the output cannot be written or drawn"),
                (.notFound, "a --plugins folder does not exist (nothing written)"),
                (.pluginFault, "written, but a plugin crashed, hung or exited: it was quarantined"),
            ]))
            """
    )

    enum Format: String, ExpressibleByArgument { case html, json, png }

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var isolation: IsolationOptions

    @Option(help: "html, json or png.")
    var format: Format = .html

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (- for stdout).", valueName: "file"))
    var output: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Container widths, comma-separated, each 1 to 4096.", valueName: "320,375,768"))
    var widths = WidthList([375])

    @Option(parsing: .unconditional, help: "Pixels per point of --format png.")
    var scale: Double = 1

    func validate() throws {
        if let problem = widths.problem { throw ValidationError("--widths: \(problem)") }
        if let problem = InputLimits.problem(scale, in: 0...8, excludingLowerBound: true) {
            throw ValidationError("--scale: \(problem)")
        }
    }

    func run() throws {
        if isolation.supervises { OneShotSupervisor(isolation: isolation, plugins: plugins, viewFile: "").run() }
        let host = try plugins.makeHost()
        let pluginStatus = plugins.reportProblems(of: host)
        let (entries, shots, problems) = Showcase.shots(of: host, widths: widths.values)
        for problem in problems { Diagnostics.print("hubhost: \(problem)") }

        let sink: OutputFile
        do { sink = try OutputFile(path: output ?? "-") } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        let sheet = GallerySheet(
            items: shots.map(\.galleryItem),
            images: ImageResolver(forPNG: format == .png))
        switch format {
        case .json:
            var listed = entries
            for i in listed.indices {
                for j in listed[i].stories.indices where listed[i].stories[j].widths.isEmpty {
                    listed[i].stories[j].widths = widths.values
                }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            sink.write(try encoder.encode(listed) + Data("\n".utf8))
        case .html:
            // A plugin that did not load (quarantined, refused) would otherwise just be missing from the sheet.
            let notLoaded = host.plugins.filter { !$0.isLoaded }.compactMap { record in
                record.reason.map { "\(record.state.name) \($0)" }
            }
            sink.write(sheet.html(notes: notLoaded + problems))
        case .png:
            let (svg, size) = sheet.svg()
            if let problem = PNGImage.sizeProblem(width: size.width, height: size.height, scale: scale) {
                sink.discard()
                Diagnostics.print(
                    "hubhost: cannot draw the gallery as one PNG: \(problem); --format html shows any number of "
                        + "stories, and `hubhost snapshot record --gallery` draws a PNG per story")
                throw ExitCode(.failed)
            }
            PNGFont.warnOnce()
            do {
                sink.write(
                    try PNGImage.rasterize(svg: svg, width: size.width, height: size.height, scale: scale).pngData())
            } catch {
                Diagnostics.print("hubhost: cannot draw the gallery: \(ErrorText.describe(error))")
                throw ExitCode(.failed)
            }
        }
        do { try sink.commit() } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        if !problems.isEmpty || pluginStatus != nil { throw ExitCode(pluginStatus ?? .problems) }
    }
}

extension Showcase.Shot {
    /// The shot as the gallery sheet draws it.
    var galleryItem: GallerySheet.Item {
        GallerySheet.Item(
            plugin: entry.plugin, namespace: entry.namespace, component: entry.component, story: story.name,
            source: story.source.rawValue, width: width, tree: tree)
    }
}
