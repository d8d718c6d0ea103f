import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

/// What `render` and `events` share before and after their own work: the view read, decoded and its problems
/// reported (image problems included), the names of components' sources, and a drawing written in the chosen
/// format. (`dev` shares the option groups; its view is read by the dev loop, which re-reads it on every save.)
struct LoadedView {
    let path: String
    let url: URL
    let decoded: DecodeResult
    let access: ImageAccess
    /// Every problem line printed, in order (decode problems, refused images, the count beyond --max-errors).
    let problems: [String]
    /// How many problems the view has, those beyond --max-errors included.
    let problemCount: Int

    var viewModel: ViewModel { decoded.viewModel }

    /// Reads and decodes `path`, printing every problem. A file that cannot be read or is not a view exits 2.
    static func load(_ path: String, images: ImageOptions, maxErrors: Int = 100) throws -> LoadedView {
        let url = URL(fileURLWithPath: ProcessStart.absolute(path))
        let bytes: [UInt8]
        do { bytes = try readWholeFile(path, limit: ViewModelDecoder.maxViewBytes) } catch {
            Diagnostics.print("\(path): cannot read: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        let decoded: DecodeResult
        do {
            decoded = try ViewModelDecoder(file: path, maxIssues: maxErrors).decode(bytes: bytes)
        } catch let failure as DecodeFailure {
            Diagnostics.print(failure.description)
            throw ExitCode(.failed)
        }
        let access = images.access(viewFile: url)
        let imageIssues = access.problems(in: decoded.viewModel, file: path)
        var problems = (decoded.issues + imageIssues).map(\.description)
        if decoded.suppressedIssueCount > 0 {
            problems.append("\(path): … and \(decoded.suppressedIssueCount) more problems (--max-errors \(maxErrors))")
        }
        // A worker started again after a plugin fault: the first one printed them.
        if !WorkerEnvironment.isRestart {
            for line in problems { Diagnostics.print(line) }
            for note in decoded.notes + access.placeholderWarnings(in: decoded.viewModel, file: path) {
                Diagnostics.print(note.warningLine)
            }
            if decoded.suppressedNoteCount > 0 {
                Diagnostics.print("\(path): … and \(decoded.suppressedNoteCount) more ids used twice")
            }
        }
        return LoadedView(
            path: path, url: url, decoded: decoded, access: access, problems: problems,
            problemCount: decoded.totalIssueCount + imageIssues.count)
    }
}

extension LoadedView {
    /// Prints a warning for each component id of the view that no loaded plugin provides (see
    /// `UnresolvedComponents`), at most `maxErrors`, and returns them. A warning, not a problem: Hub falls back
    /// by design, and views (the examples among them) name fallbacks on purpose; `render --strict` refuses them.
    @discardableResult
    /// `asProblems`: said as problems, not warnings (`snapshot`: a golden of a fallback drawing would be wrong).
    func reportUnresolvedComponents(in host: PluginHost, maxErrors: Int = 100, asProblems: Bool = false) -> [String] {
        let issues = UnresolvedComponents.problems(
            in: viewModel, registry: host.registry, file: path, detailed: maxErrors,
            unavailable: host.unavailableNamespaces)
        var lines = issues.prefix(maxErrors).map {
            asProblems ? $0.description + " (a golden of its fallback would be wrong)" : $0.warningLine
        }
        if issues.count > maxErrors {
            lines.append("\(path): … and \(issues.count - maxErrors) more component ids no plugin provides")
        }
        // A worker started again after a plugin fault: the first one printed them.
        if !WorkerEnvironment.isRestart { for line in lines { Diagnostics.print(line) } }
        return lines
    }
}

extension DecodeIssue {
    /// The issue as a warning line: "FILE: JSON-PATH: warning: …" (a problem's line without "warning: ").
    var warningLine: String { DecodeIssue(file: file, path: path, message: "warning: " + message).description }
}

/// Values a one-shot command keeps until the process exits: freeing a 100k-model view and its render tree node
/// by node is several percent of a render, and the exit returns the memory at once.
enum ProcessLifetime {
    nonisolated(unsafe) private static var kept: [Any] = []
    static func keepUntilExit(_ values: Any...) { kept.append(contentsOf: values) }
}

extension PluginHost {
    /// Sources named by plugin id (the owner's id before its version for owners no longer listed).
    var sourceNaming: SourceNaming {
        SourceNaming { [weak self] owner in
            self?.plugins.first { $0.owner == owner }?.id ?? SourceNaming.idBeforeVersion(owner)
        }
    }
}

/// The output formats of `render` and `events --format`.
enum DrawingFormat: String, ExpressibleByArgument, CaseIterable {
    case json, svg, html, text, png

    /// Whether drawing it needs the components' display lists.
    var needsDisplayLists: Bool { self == .svg || self == .html || self == .png }

    /// Whether `writeStreaming` can write it: every body node is written as soon as it is drawn, so a huge view
    /// keeps neither display lists nor body nodes.
    var streams: Bool { self != .png }

    /// The drawing written while `render` renders (see `RenderPipeline.Options.bodyStream`), to `path` as `write`
    /// does, for a format that `streams`; returns the tree `render` returned.
    func writeStreaming(
        naming: SourceNaming, access: ImageAccess, suppliedImages: @escaping (String) -> [UInt8]? = { _ in nil },
        diagnostics: [String] = [], to path: String?, _ render: (RenderPipeline.BodyStream) -> RenderTree
    ) throws -> RenderTree {
        precondition(streams, "\(self) is not written while rendering")
        let sink: OutputFile
        do { sink = try OutputFile(path: path ?? "-") } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        let write: (UnsafeRawBufferPointer) -> Void = { sink.write($0) }
        let tree: RenderTree
        switch self {
        case .json: tree = JSONRenderer(naming: naming).renderStreaming(to: write, render)
        case .text: tree = TextRenderer(naming: naming).renderStreaming(to: write, render)
        case .html:
            tree = HTMLRenderer(
                svg: SVGRenderer(images: ImageResolver(access: access, supplied: suppliedImages)), naming: naming
            )
            .renderStreaming(to: write, diagnostics: diagnostics, render)
        default:
            tree = SVGRenderer(images: ImageResolver(access: access, supplied: suppliedImages))
                .renderStreaming(to: write, render)
        }
        do { try sink.commit() } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        return tree
    }

    /// Writes `tree` to `path` (nil or "-": stdout) as `OutputFile` does; a write error exits 2. Images of
    /// `unshownImages` are drawn as their placeholders (see `ImageResolver.unshown`).
    func write(
        _ tree: RenderTree, naming: SourceNaming, access: ImageAccess, unshownImages: Set<String> = [],
        suppliedImages: @escaping (String) -> [UInt8]? = { _ in nil }, diagnostics: [String] = [], scale: Double = 1,
        to path: String?
    ) throws {
        let sink: OutputFile
        do { sink = try OutputFile(path: path ?? "-") } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        let images = ImageResolver(
            access: access, unshown: unshownImages, supplied: suppliedImages, forPNG: self == .png)
        switch self {
        case .json: JSONRenderer(naming: naming).render(tree) { sink.write($0) }
        case .svg: SVGRenderer(images: images).render(tree) { sink.write($0) }
        case .html:
            sink.write(
                HTMLRenderer(svg: SVGRenderer(images: images), naming: naming).render(tree, diagnostics: diagnostics))
        case .text: TextRenderer(naming: naming).render(tree) { sink.write($0) }
        case .png:
            let canvas = tree.canvasSize
            if let problem = PNGImage.sizeProblem(width: canvas.width, height: canvas.height, scale: scale) {
                sink.discard()
                Diagnostics.print("hubhost: cannot draw the PNG: \(problem) (--format svg draws any size)")
                throw ExitCode(.failed)
            }
            do {
                PNGFont.warnOnce()
                let image = try PNGImage.rasterize(
                    svg: SVGRenderer(images: images, showFrames: false).render(tree), width: canvas.width,
                    height: canvas.height, scale: scale)
                sink.write(try image.pngData())
            } catch {
                Diagnostics.print("hubhost: cannot draw the PNG: \(ErrorText.describe(error))")
                throw ExitCode(.failed)
            }
        }
        do { try sink.commit() } catch {
            Diagnostics.print("hubhost: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
    }
}

/// The font check of PNG output, said once per process (see `PNGImage.missingFontWarning`).
enum PNGFont {
    nonisolated(unsafe) private static var warned = false

    static func warnOnce() {
        guard !warned else { return }
        warned = true
        if let warning = PNGImage.missingFontWarning { Diagnostics.print("hubhost: warning: \(warning)") }
    }
}
