import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

/// `hubhost snapshot record|verify`: golden PNGs of views, stories and scripted steps, for CI.
struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Record golden PNGs of views, stories and scripted steps, or verify that they still match.",
        discussion: """
            INPUTS are view files (X.json), folders of views (every *.json in them, not recursive), event scripts \
            (X.jsonl, replayed against the view X.json beside it; each {"event": "snapshot", "name": "N"} line is \
            a picture), and --gallery (every story of every loaded plugin). Each is drawn at every --widths width \
            (a story's own widths win) as DIR/NAME@WIDTH.png: views as X@375.png, script steps as \
            X.N@375.png, stories as gallery/NS-NAME.STORY@375.png.

            verify draws them again and compares pixel by pixel: an image differs when more than --tolerance \
            percent of its pixels differ (sizes must match). For each difference it writes NAME.expected.png, \
            NAME.actual.png and NAME.diff.png (red where the pixels differ) and one report.html showing them side \
            by side into --report DIR. --junit FILE writes JUnit XML (one test case per image). --shard K/N takes \
            every Nth image from the Kth (sorted by name), so CI runners can split a large library.
            """,
        subcommands: [Record.self, Verify.self]
    )

    /// What record and verify share.
    struct Options: ParsableArguments {
        @Argument(help: ArgumentHelp("View files, folders of views, event scripts.", valueName: "inputs"))
        var inputs: [String] = []

        @Flag(help: "Also every story of every loaded plugin (as `hubhost gallery` shows them).")
        var gallery = false

        @Option(name: .customLong("out"), help: ArgumentHelp("The folder of golden PNGs.", valueName: "dir"))
        var out: String

        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Container widths, comma-separated, each 1 to 4096.", valueName: "320,375,768"))
        var widths = WidthList([375])

        @Option(parsing: .unconditional, help: "Viewport height in points, for views and scripts.")
        var height: Double = 667

        @Option(parsing: .unconditional, help: "Pixels per point.")
        var scale: Double = 1

        @Option(help: ArgumentHelp("Run only shard K of N (1-based), e.g. 2/4.", valueName: "K/N"))
        var shard: String?

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var images: ImageOptions

        @OptionGroup var isolation: IsolationOptions

        func validate() throws {
            guard !inputs.isEmpty || gallery else {
                throw ValidationError("give view files, folders, scripts or --gallery")
            }
            if let problem = InputLimits.problem(scale, in: 0...8, excludingLowerBound: true) {
                throw ValidationError("--scale: \(problem)")
            }
            if let problem = InputLimits.problem(height, in: 0...InputLimits.viewportSide, excludingLowerBound: true) {
                throw ValidationError("--height: \(problem)")
            }
            if let shard, parsedShard(shard) == nil { throw ValidationError("--shard: expected K/N with 1 ≤ K ≤ N") }
        }

        func parsedShard(_ text: String) -> (index: Int, count: Int)? {
            let parts = text.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2, parts[1] >= 1, (1...parts[1]).contains(parts[0]) else { return nil }
            return (parts[0], parts[1])
        }
    }

    /// One image to record or verify: its name (the path under DIR, without ".png") and its drawing.
    struct Picture {
        var name: String
        var tree: RenderTree
        var access: ImageAccess
    }

    /// What `pictures` drew, and what went wrong on the way (each printed where it happened).
    struct Drawn {
        var pictures: [Picture] = []
        /// Problems that still let a picture be drawn: a view's problems, a plugin that did not load, a story
        /// that cannot be drawn (exit 1).
        var hadProblems = false
        /// An input that does not exist or cannot be read, decoded or replayed: its pictures are missing (exit 2).
        var hadUnusableInput = false
        /// What loading the plugins ends the command with (see `PluginOptions.reportProblems`).
        var pluginStatus: ExitStatus?
    }

    /// Draws every input; problems are printed where they happen.
    static func pictures(_ options: Options) throws -> Drawn {
        if options.isolation.supervises {
            OneShotSupervisor(isolation: options.isolation, plugins: options.plugins, viewFile: "").run()
        }
        let host = try options.plugins.makeHost()
        var drawn = Drawn()
        drawn.pluginStatus = options.plugins.reportProblems(of: host)
        drawn.hadProblems = drawn.pluginStatus != nil
        for input in options.inputs {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
                Diagnostics.print("\(input): no such file or folder")
                drawn.hadUnusableInput = true
                continue
            }
            let files: [String]
            if isFolder {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []
                files = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().map {
                    PathText.appending($0, to: input)
                }
            } else {
                files = [input]
            }
            for file in files {
                do {
                    let (made, hadProblems) =
                        try file.hasSuffix(".jsonl") ? script(file, options, host) : view(file, options, host)
                    drawn.pictures += made
                    drawn.hadProblems = drawn.hadProblems || hadProblems
                } catch {
                    drawn.hadUnusableInput = true
                }
            }
        }
        if options.gallery {
            let (_, shots, problems) = Showcase.shots(of: host, widths: options.widths.values)
            for problem in problems { Diagnostics.print("hubhost: \(problem)") }
            drawn.hadProblems = drawn.hadProblems || !problems.isEmpty
            drawn.pictures += shots.map {
                Picture(name: "gallery/" + $0.id, tree: $0.tree, access: ImageAccess(viewFile: nil))
            }
        }
        drawn.pictures.sort { $0.name < $1.name }
        if let shard = options.shard, let (index, count) = options.parsedShard(shard) {
            drawn.pictures = drawn.pictures.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
        }
        return drawn
    }

    private static func baseName(_ file: String) -> String {
        let name = PathText.fileName(file)
        let pathExtension = PathText.fileExtension(name)
        return Showcase.Shot.safe(pathExtension.isEmpty ? name : String(name.dropLast(pathExtension.count + 1)))
    }

    /// The view's pictures, one per width, and whether it had problems (printed by `LoadedView`).
    private static func view(_ file: String, _ options: Options, _ host: PluginHost) throws -> ([Picture], Bool) {
        let loaded = try LoadedView.load(file, images: options.images)
        loaded.reportUnresolvedComponents(in: host.registry)
        let pictures = options.widths.values.map { width in
            let pipeline = RenderPipeline(registry: host.registry)
            pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: true)
            let tree = pipeline.render(loaded.viewModel, viewport: Size(width: width, height: options.height))
            pipeline.tearDown()
            return Picture(name: "\(baseName(file))@\(Int(width))", tree: tree, access: loaded.access)
        }
        return (pictures, !loaded.problems.isEmpty)
    }

    /// Replays `file` against the view of the same name; every snapshot step is a picture. Also says whether the
    /// view had problems.
    private static func script(_ file: String, _ options: Options, _ host: PluginHost) throws -> ([Picture], Bool) {
        let viewFile = String(file.dropLast("l".count))  // X.jsonl → X.json
        let loaded = try LoadedView.load(viewFile, images: options.images)
        loaded.reportUnresolvedComponents(in: host.registry)
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            Diagnostics.print("\(file): cannot read (or not UTF-8)")
            throw ExitCode(.failed)
        }
        var pictures: [Picture] = []
        for width in options.widths.values {
            let engine = host.makeEventEngine(
                viewModel: loaded.viewModel, viewport: Size(width: width, height: options.height),
                viewFile: loaded.url, imageAccess: loaded.access)
            engine.load()
            var names = Set<String>()
            for (number, line) in EventScript.lines(of: text) {
                let event: ViewEvent
                do { event = try EventScript.parse(line, file: file, number: number) } catch {
                    Diagnostics.print("hubhost: \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
                CallRecorder.noteStep(number)
                engine.apply(event, step: number)
                if case .snapshot(let name) = event {
                    let safe = Showcase.Shot.safe(name)
                    guard names.insert(safe).inserted else {
                        Diagnostics.print("hubhost: \(file):\(number): a second snapshot named \(safe)")
                        throw ExitCode(.failed)
                    }
                    pictures.append(
                        Picture(
                            name: "\(baseName(file)).\(safe)@\(Int(width))", tree: engine.renderTree(),
                            access: loaded.access))
                }
            }
            CallRecorder.noteStep(0)
            engine.pipeline.tearDown()
        }
        return (pictures, !loaded.problems.isEmpty)
    }

    /// A picture as a PNG image.
    static func draw(_ picture: Picture, scale: Double) throws -> PNGImage {
        let svg = SVGRenderer(images: ImageResolver(access: picture.access), showFrames: false).render(picture.tree)
        let canvas = picture.tree.canvasSize
        return try PNGImage.rasterize(svg: svg, width: canvas.width, height: canvas.height, scale: scale)
    }

    /// Writes `data` to `url` the way every hubhost output is written (atomically; links written through).
    static func write(_ data: Data, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let sink = try OutputFile(path: url.path)
        sink.write(data)
        try sink.commit()
    }

    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record",
            abstract: "Draw every input as a golden PNG in --out DIR.",
            discussion: ExitStatus.help([
                (.ok, "recorded"),
                (
                    .problems,
                    "recorded, but some inputs had problems (listed on stderr); or nothing recorded, as a plugin "
                        + "could not be loaded"
                ),
                (.failed, "an input or an image could not be drawn or written (the others are recorded)"),
                (.notFound, "a --plugins folder does not exist (nothing recorded)"),
                (.pluginFault, "nothing recorded: a plugin crashed, hung or exited (it was quarantined)"),
            ]))

        @OptionGroup var options: Options

        func run() throws {
            // A worker started again after a plugin fault would draw that plugin's components as fallbacks: goldens
            // of those drawings would be wrong, and would replace good ones. Nothing is recorded.
            if WorkerEnvironment.isRestart {
                Diagnostics.print(
                    "hubhost: snapshot record: nothing recorded, as a plugin crashed, hung or exited (above); fix it "
                        + "and record again")
                throw ExitCode(.pluginFault)
            }
            var drawn = try Snapshot.pictures(options)
            // The same for a plugin that did not load (quarantined by an earlier run, refused): its components
            // would be recorded as fallbacks.
            if let pluginStatus = drawn.pluginStatus {
                Diagnostics.print(
                    "hubhost: snapshot record: nothing recorded, as a plugin could not be loaded (above); goldens "
                        + "drawn without it would replace good ones")
                throw ExitCode(pluginStatus)
            }
            let folder = URL(fileURLWithPath: options.out)
            var recorded = 0
            for picture in drawn.pictures {
                let png: Data
                do { png = try Snapshot.draw(picture, scale: options.scale).pngData() } catch {
                    // One image that cannot be drawn (a view taller than a PNG can be) does not stop the others.
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    drawn.hadUnusableInput = true
                    continue
                }
                do { try Snapshot.write(png, to: folder.appendingPathComponent(picture.name + ".png")) } catch {
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
                recorded += 1
            }
            StandardOutput.print("recorded \(recorded) image(s) in \(folder.path)")
            if drawn.hadUnusableInput { throw ExitCode(.failed) }
            if drawn.hadProblems { throw ExitCode(drawn.pluginStatus ?? .problems) }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Draw every input again and compare it with its golden PNG in --out DIR.",
            discussion: ExitStatus.help([
                (.ok, "every image matches its golden"),
                (.problems, "an image differs (see --report), an input had problems or a plugin could not be loaded"),
                (.failed, "a golden is missing, or an input or image could not be drawn"),
                (.notFound, "a --plugins folder does not exist (nothing compared)"),
                (.pluginFault, "a plugin crashed, hung or exited: it was quarantined"),
            ]))

        @OptionGroup var options: Options

        @Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "Percent of pixels that may differ before an image counts as changed.", valueName: "percent"))
        var tolerance: Double = 0

        @Option(help: ArgumentHelp("Where the report of differences goes.", valueName: "dir"))
        var report = "snapshot-report"

        @Option(help: ArgumentHelp("Write JUnit XML here.", valueName: "file"))
        var junit: String?

        func validate() throws {
            if let problem = InputLimits.problem(tolerance, in: 0...100) {
                throw ValidationError("--tolerance: \(problem)")
            }
        }

        func run() throws {
            var drawn = try Snapshot.pictures(options)
            let golden = URL(fileURLWithPath: options.out)
            var results: [SnapshotReport.Result] = []
            for picture in drawn.pictures {
                let actual: PNGImage
                do { actual = try Snapshot.draw(picture, scale: options.scale) } catch {
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    drawn.hadUnusableInput = true
                    continue
                }
                let file = golden.appendingPathComponent(picture.name + ".png")
                guard let data = FileManager.default.contents(atPath: file.path) else {
                    results.append(.init(name: picture.name, outcome: .missing(file.path)))
                    continue
                }
                guard let expected = PNGImage(png: data) else {
                    results.append(.init(name: picture.name, outcome: .missing("\(file.path) (not a PNG)")))
                    continue
                }
                let diff = PixelDiff(expected: expected, actual: actual)
                if diff.differing == 0 || diff.fraction * 100 <= tolerance {
                    results.append(.init(name: picture.name, outcome: .matched(diff.differing)))
                } else {
                    results.append(
                        .init(
                            name: picture.name,
                            outcome: .differs(diff, expected: expected, actual: actual)))
                }
            }
            let report = SnapshotReport(results: results, tolerance: tolerance)
            let changed = results.filter(\.isDifference)
            if !changed.isEmpty {
                do { try report.write(to: URL(fileURLWithPath: self.report)) } catch {
                    Diagnostics.print("hubhost: cannot write the report: \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
            }
            if let junit {
                do { try Snapshot.write(Data(report.junit().utf8), to: URL(fileURLWithPath: junit)) } catch {
                    Diagnostics.print("hubhost: cannot write \(junit): \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
            }
            for result in results where !result.isMatch {
                Diagnostics.print("hubhost: \(result.name): \(result.summary)")
            }
            let missing = results.filter(\.isMissing).count
            StandardOutput.print(
                "\(results.count) image(s): \(results.count - changed.count - missing) match, \(changed.count) differ, "
                    + "\(missing) missing" + (changed.isEmpty ? "" : "; report: \(self.report)/report.html"))
            if missing > 0 || drawn.hadUnusableInput { throw ExitCode(.failed) }
            if !changed.isEmpty || drawn.hadProblems {
                throw ExitCode(drawn.pluginStatus == .pluginFault ? .pluginFault : .problems)
            }
        }
    }
}
