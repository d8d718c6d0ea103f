import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost snapshot record|verify`: golden PNGs of views, stories and scripted steps, for CI.
struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Record golden PNGs of views, stories and scripted steps, or verify that they still match.",
        discussion: """
            INPUTS are view files (X.json), folders of views (every *.json in them, not recursive), event scripts \
            (X.jsonl, replayed against the view X.json beside it; each {"event": "snapshot", "name": "N"} line is \
            a picture), and --gallery (every story of every loaded plugin). Each is drawn at every --widths width \
            (a story's own widths win) as DIR/NAME@WIDTH.png: views as X@375.png (the whole content), script \
            steps as X.N@375.png (the screen at that step: WIDTH x --height at the scroll offset), stories as \
            gallery/NS-NAME.STORY@375.png. record --gallery removes the gallery goldens no story has any more \
            (each named).

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

        @Option(
            parsing: .unconditional,
            help: "Viewport height in points: a view is drawn whole, a script step as the screen of this height.")
        var height: Double = 667

        @Option(parsing: .unconditional, help: "Pixels per point.")
        var scale: Double = 1

        @Option(help: ArgumentHelp("Run only shard K of N (1-based), e.g. 2/4.", valueName: "K/N"))
        var shard: String?

        @OptionGroup var plugins: PluginOptions

        @OptionGroup var images: ImageOptions

        @OptionGroup var isolation: IsolationOptions

        func validate() throws {
            if let problem = widths.problem { throw ValidationError("--widths: \(problem)") }
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
        /// What it was drawn from, for messages: a file, or a story of a component.
        var source: String
        /// Its input had problems (a component drawn as a fallback, a story's bad image): record keeps the golden
        /// there is rather than replace it with a drawing known to be wrong.
        var inputHadProblems = false
        /// The bytes a plugin's image loader supplied for remote image URIs (see `ImageResolver.supplied`).
        var suppliedImages: (String) -> [UInt8]? = { _ in nil }
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
        /// Inputs and plugins that could not be used, with why: failures of their own in JUnit.
        var failures: [(name: String, reason: String)] = []
        /// The name of every picture of the run, in every shard: what verify expects the goldens folder to hold.
        var allNames: Set<String> = []
        /// With --gallery, the name of every picture the loaded plugins' stories have, drawn or not (a story that
        /// cannot be drawn, two that share a name): gallery goldens outside it belong to no story any more.
        var galleryNames: Set<String> = []
        /// Script steps not drawn because a line before them could not apply, with why: skipped test cases in JUnit
        /// (a dashboard showed them as gone).
        var skipped: [(name: String, reason: String)] = []
        /// `galleryNames` without their widths: the stories the loaded plugins have.
        var galleryStems: Set<String> = []
        /// The start of the gallery goldens of each namespace a loaded plugin registered ("gallery/demo-"): a
        /// golden of a namespace no loaded plugin has is one of a plugin missing from this run, not of a story gone.
        var galleryNamespacePrefixes: [String] = []
        /// No plugin was loaded on purpose (`--safe-mode`): no story says anything about the gallery goldens.
        var safeMode = false
    }

    /// Draws every input; problems are printed where they happen.
    /// `finished`: called in the supervising process once its last worker ended without a fault, with the faults
    /// of the run (see `OneShotSupervisor.finished`).
    static func pictures(_ options: Options, finished: (([PluginFault]) -> Void)? = nil) throws -> Drawn {
        if options.isolation.supervises {
            var supervisor = OneShotSupervisor(isolation: options.isolation, plugins: options.plugins, viewFile: "")
            supervisor.finished = finished
            // A fault names the view it happened in: the worker notes which input it draws.
            let files = inputFiles(options.inputs).files
            supervisor.viewFileOfInput = { number in
                guard number >= 1 && number <= files.count else { return nil }
                let file = files[number - 1]
                return file.hasSuffix(".jsonl") ? String(file.dropLast()) : file
            }
            supervisor.run()
        }
        let host = try options.plugins.makeHost()
        var drawn = Drawn()
        drawn.safeMode = options.plugins.isSafeMode
        drawn.galleryNamespacePrefixes = host.plugins.filter { $0.reason == nil }.flatMap(\.namespaces).map {
            "gallery/" + Showcase.Shot.safe($0.namespace) + "-"
        }
        drawn.pluginStatus = options.plugins.reportProblems(of: host)
        drawn.hadProblems = drawn.pluginStatus != nil
        for folder in host.missingFolders { drawn.failures.append(("plugins " + folder.path, "no such folder")) }
        for record in host.plugins {
            if let reason = record.reason { drawn.failures.append(("plugin " + record.file.lastPathComponent, reason)) }
        }
        var pictures: [Picture] = []
        let (files, missing, notUTF8) = inputFiles(options.inputs)
        for (inputs, reason) in [
            (missing, "no such file or folder"), (notUTF8, "its name is not valid UTF-8: rename it"),
        ] {
            for input in inputs {
                Diagnostics.print("\(input): \(reason)")
                drawn.hadUnusableInput = true
                drawn.failures.append((input, reason))
            }
        }
        for (number, file) in files.enumerated() {
            CallRecorder.noteInput(number + 1)
            // What fails the run must show in JUnit and the report as well as on stderr: what was said of it.
            var said: [String] = []
            do {
                let (made, hadProblems) = try Diagnostics.collect(&said) {
                    try file.hasSuffix(".jsonl")
                        ? script(file, options, host, skipped: &drawn.skipped) : view(file, options, host)
                }
                pictures += made
                drawn.hadProblems = drawn.hadProblems || hadProblems
                if hadProblems { drawn.failures.append((file, "has problems: " + Self.firstOf(said))) }
            } catch {
                drawn.hadUnusableInput = true
                drawn.failures.append((file, "could not be read, decoded or replayed: " + Self.firstOf(said.suffix(1))))
            }
        }
        CallRecorder.noteInput(0)
        if options.gallery {
            let (entries, shots, problems) = Showcase.shots(of: host, widths: options.widths.values)
            for entry in entries {
                for story in entry.stories {
                    for width in story.drawnWidths(options.widths.values) {
                        let name =
                            "gallery/" + Showcase.Shot.id(component: entry.component, story: story.name, width: width)
                        drawn.galleryNames.insert(name)
                        drawn.galleryStems.insert(Snapshot.stem(name))
                    }
                }
            }
            for problem in problems { Diagnostics.print("hubhost: \(problem)") }
            drawn.hadProblems = drawn.hadProblems || !problems.isEmpty
            if !problems.isEmpty {
                drawn.failures.append(("gallery", "\(problems.count) story problem(s) (listed on stderr)"))
            }
            pictures += shots.map {
                Picture(
                    name: "gallery/" + $0.id, tree: $0.tree, access: ImageAccess(viewFile: nil),
                    source: "story \(TerminalText.quoted($0.story.name)) of \($0.entry.component) (\($0.entry.plugin))",
                    inputHadProblems: !$0.story.warnings.isEmpty)
            }
        }
        // Two inputs whose names make one file (home.json and Home.json, stories "x y" and "x,y") would overwrite
        // each other's golden: a record that verify then fails for ever. Neither is drawn; both are named.
        var byName: [String: [Picture]] = [:]
        for picture in pictures { byName[picture.name, default: []].append(picture) }
        for (name, same) in byName where same.count > 1 {
            let sources = Array(Set(same.map(\.source))).sorted()
            let from = sources.count > 1 ? "both " + sources.joined(separator: " and ") : "\(sources[0]) twice"
            Diagnostics.print("hubhost: \(name).png would be drawn from \(from); rename one")
            drawn.hadUnusableInput = true
            drawn.failures.append((name, "drawn from \(from)"))
        }
        drawn.pictures = pictures.filter { byName[$0.name]?.count == 1 }
        drawn.allNames = Set(drawn.pictures.map(\.name))
        drawn.pictures.sort { $0.name < $1.name }
        if let shard = options.shard, let (index, count) = options.parsedShard(shard) {
            drawn.pictures = drawn.pictures.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
        }
        return drawn
    }

    /// "; 1 input with problems (exit 1): NAME has problems: …" for a summary line, so its last line says why the
    /// run fails even when every image matched.
    static func failuresSaid(_ failures: [(name: String, reason: String)]) -> String {
        guard let first = failures.first else { return "" }
        let count = failures.count == 1 ? "1 input" : "\(failures.count) inputs"
        // A plugin's reason names its file already ("plugin libx.so" → "libx.so: crashed …").
        let name = PathText.fileName(first.name)
        let named = first.reason.hasPrefix(name.replacing(#/^plugin /#, with: "") + ":")
        return "; \(count) with problems: " + (named ? first.reason : "\(name) \(first.reason)")
            + (failures.count > 1 ? " (and \(failures.count - 1) more)" : "")
    }

    /// The first of `lines` (what was said of an input), and how many more stderr has.
    static func firstOf<Lines: Collection<String>>(_ lines: Lines) -> String {
        guard var first = lines.first else { return "the reason is on stderr" }
        // The command's name leads every stderr line; in a JUnit message or the report it says nothing.
        if first.hasPrefix("hubhost: ") { first.removeFirst("hubhost: ".count) }
        return first + (lines.count > 1 ? " (and \(lines.count - 1) more line(s) on stderr)" : "")
    }

    /// The files the inputs name, in the order they are drawn (a folder's views sorted by name), the inputs that
    /// do not exist, and a folder's views whose names are not UTF-8 (hubhost cannot name them).
    static func inputFiles(_ inputs: [String]) -> (files: [String], missing: [String], notUTF8: [String]) {
        var files: [String] = []
        var missing: [String] = []
        var notUTF8: [String] = []
        for input in inputs {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
                missing.append(input)
                continue
            }
            guard isFolder else {
                files.append(input)
                continue
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []
            for name in names.filter({ $0.hasSuffix(".json") && !$0.hasPrefix(".") }).sorted() {
                let path = PathText.appending(name, to: input)
                // A name that is not UTF-8 reaches here with U+FFFD in it, naming no file: said as what it is (it
                // was "cannot read: No such file or directory").
                if name.unicodeScalars.contains("\u{FFFD}") && !FileManager.default.fileExists(atPath: path) {
                    notUTF8.append(path)
                } else {
                    files.append(path)
                }
            }
        }
        return (files, missing, notUTF8)
    }

    private static func baseName(_ file: String) -> String {
        let name = PathText.fileName(file)
        let pathExtension = PathText.fileExtension(name)
        return Showcase.Shot.safe(pathExtension.isEmpty ? name : String(name.dropLast(pathExtension.count + 1)))
    }

    /// The view's pictures, one per width, and whether it had problems (printed by `LoadedView`).
    private static func view(_ file: String, _ options: Options, _ host: PluginHost) throws -> ([Picture], Bool) {
        let loaded = try LoadedView.load(file, images: options.images)
        // A golden of a fallback drawing would be wrong, as it would be of a story's: a problem, not a warning.
        let unresolved = loaded.reportUnresolvedComponents(in: host, asProblems: true)
        let pictures = options.widths.values.map { width in
            let pipeline = RenderPipeline(registry: host.registry)
            pipeline.options = RenderPipeline.Options(retainBodyInstances: false, keepDisplayLists: true)
            let tree = pipeline.render(loaded.viewModel, viewport: Size(width: width, height: options.height))
            pipeline.tearDown()
            return Picture(
                name: "\(baseName(file))@\(Int(width))", tree: tree, access: loaded.access, source: file,
                inputHadProblems: !loaded.problems.isEmpty || !unresolved.isEmpty, suppliedImages: host.suppliedImage)
        }
        return (pictures, !loaded.problems.isEmpty || !unresolved.isEmpty)
    }

    /// Replays `file` against the view of the same name; every snapshot step is a picture. Also says whether the
    /// view had problems.
    private static func script(
        _ file: String, _ options: Options, _ host: PluginHost, skipped: inout [(name: String, reason: String)]
    ) throws -> ([Picture], Bool) {
        let viewFile = String(file.dropLast("l".count))  // X.jsonl → X.json
        let loaded = try LoadedView.load(viewFile, images: options.images)
        let unresolved = loaded.reportUnresolvedComponents(in: host, asProblems: true)
        // Read as `events` reads it: a line of invalid UTF-8 is named with its byte, not "cannot read".
        let bytes: [UInt8]
        do { bytes = try readWholeFile(file, limit: EventScript.maxBytes) } catch {
            Diagnostics.print("\(file): cannot read: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }
        let lines = EventScript.lines(of: bytes)
        var pictures: [Picture] = []
        // An event that could not apply (a tap on nothing, a target off screen) makes the pictures after it show
        // another state than the script meant: a problem, as `events` exits 1 for it.
        var eventsFailed = false
        for width in options.widths.values {
            let engine = host.makeEventEngine(
                viewModel: loaded.viewModel, viewport: Size(width: width, height: options.height),
                viewFile: loaded.url, imageAccess: loaded.access)
            engine.load()
            var names = Set<String>()
            // The events that could not apply, by script line (the engine keeps steps only when it traces).
            var failures: [(line: Int, message: String)] = []
            var skippedAfterFailure: (at: Int, after: Int)?
            for (number, line, invalidUTF8At) in lines {
                let event: ViewEvent
                do {
                    if let byte = invalidUTF8At {
                        throw EventScriptError(
                            file: file, line: number, reason: "invalid UTF-8 at byte \(byte) of the line")
                    }
                    event = try EventScript.parse(line, file: file, number: number)
                } catch {
                    Diagnostics.print("hubhost: \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
                CallRecorder.noteStep(number)
                let known = engine.problems.count
                engine.apply(event, step: number)
                failures += engine.problems.dropFirst(known).map { (number, $0.message) }
                if case .snapshot(let name) = event {
                    let safe = Showcase.Shot.safe(name)
                    guard names.insert(safe).inserted else {
                        Diagnostics.print("hubhost: \(file):\(number): a second snapshot named \(safe)")
                        throw ExitCode(.failed)
                    }
                    // After a step that could not apply, the screen is not the one the script meant: no picture
                    // (a golden of it would pass for one), said once per script.
                    if let first = failures.first {
                        if skippedAfterFailure == nil { skippedAfterFailure = (number, first.line) }
                        skipped.append(
                            (
                                "\(baseName(file)).\(safe)@\(Int(width))",
                                "not drawn: line \(first.line) before it could not apply"
                            ))
                        continue
                    }
                    pictures.append(
                        Picture(
                            name: "\(baseName(file)).\(safe)@\(Int(width))", tree: engine.screenTree(),
                            access: loaded.access, source: "\(file):\(number)",
                            // The view's problems are in every picture; a step that failed takes none after it.
                            inputHadProblems: !loaded.problems.isEmpty || !unresolved.isEmpty,
                            // What was delivered by this step, as the screen shows it.
                            suppliedImages: engine.images.suppliedSoFar))
                }
            }
            CallRecorder.noteStep(0)
            // As `events` says them: file:line: what (for the first width that met any).
            if !eventsFailed {
                for failure in failures {
                    Diagnostics.print(
                        "hubhost: \(file):\(failure.line): \(failure.message) (at width \(DevLoop.widthText(width)))")
                }
            }
            if !failures.isEmpty { eventsFailed = true }
            if let skipped = skippedAfterFailure {
                Diagnostics.print(
                    "hubhost: \(file):\(skipped.at): no pictures after line \(skipped.after), which could not apply "
                        + "(at width \(DevLoop.widthText(width)))")
            }
            engine.pipeline.tearDown()
        }
        return (pictures, !loaded.problems.isEmpty || !unresolved.isEmpty || eventsFailed)
    }

    /// A picture as a PNG image.
    static func draw(_ picture: Picture, scale: Double) throws -> PNGImage {
        let canvas = picture.tree.canvasSize
        // Refused before its SVG is made, with what does work for a long view.
        if let problem = PNGImage.sizeProblem(width: canvas.width, height: canvas.height, scale: scale) {
            throw PNGImage.Failure(
                description: problem + "; snapshot a long view as a script of its screens (X.jsonl beside X.json, "
                    + "with scroll and snapshot steps: docs/snapshots.md), or draw it whole with `hubhost render "
                    + "--format svg`")
        }
        PNGFont.warnOnce()
        let images = ImageResolver(access: picture.access, supplied: picture.suppliedImages, forPNG: true)
        let svg = SVGRenderer(images: images, showFrames: false).render(picture.tree)
        // A golden with a placeholder where the view has an image would be wrong.
        if images.placedUndrawableSVG {
            throw PNGImage.Failure(description: "it holds an image librsvg cannot draw (above)")
        }
        return try PNGImage.rasterize(svg: svg, width: canvas.width, height: canvas.height, scale: scale)
    }

    /// `--out` names a folder, or nothing yet (record makes it): a file there is a mistake, said once.
    static func checkGoldenFolder(_ path: String, mustExist: Bool) throws {
        var isFolder = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
        if exists && !isFolder {
            Diagnostics.print("hubhost: --out \(path): not a folder")
            throw ExitCode(.failed)
        }
        if !exists && mustExist {
            Diagnostics.print("hubhost: --out \(path): no such folder (record the goldens first)")
            throw ExitCode(.failed)
        }
    }

    /// A run that draws nothing checks nothing: it is not a pass (a plugin folder or a views folder gone empty).
    /// Says so (unless the inputs that could not be used were named already) and returns false.
    static func drewSomething(_ drawn: inout Drawn, _ verb: String) -> Bool {
        guard drawn.allNames.isEmpty else { return true }
        if !drawn.hadUnusableInput {
            let nothing = "the inputs drew no image, so nothing was \(verb == "record" ? "recorded" : "compared")"
            Diagnostics.print("hubhost: snapshot \(verb): \(nothing)")
            drawn.failures.append(("inputs", nothing))
        }
        drawn.hadUnusableInput = true
        return false
    }

    /// Why a gallery golden no story drew is not drawn: its story is drawn at other widths, a plugin did not load
    /// in this run, or the story is gone.
    /// `hint`: say how to remove it (verify's messages; record removes it).
    static func whyUndrawn(_ name: String, _ drawn: Drawn, hint: Bool = true) -> String {
        let remedy = hint ? " (`snapshot record --gallery` removes it)" : ""
        if drawn.galleryStems.contains(stem(name)) {
            return "its story is drawn at other widths now" + remedy
        }
        if drawn.pluginStatus != nil { return "a plugin did not load in this run (above), or the story is gone" }
        if drawn.safeMode { return "no plugin was loaded (--safe-mode)" }
        if !ownedByLoadedPlugin(name, drawn) {
            return "no plugin of this run registers its namespace (is its plugin missing from the plugin folders? "
                + "If it is gone for good, remove the file)"
        }
        return "the component or story is gone" + remedy
    }

    /// A picture's name without its width ("gallery/x.y@375" → "gallery/x.y").
    static func stem(_ name: String) -> String { name.lastIndex(of: "@").map { String(name[..<$0]) } ?? name }

    /// The PNGs in the goldens folder and its gallery/ folder that hubhost could have written, as picture names
    /// ("home@375", "gallery/x.y@375"). Other files (a logo.png, a README's pictures) are not goldens: never
    /// compared, never removed.
    static func goldenNames(in folder: URL) -> [String] {
        var names: [String] = []
        for (sub, prefix) in [(folder, ""), (folder.appendingPathComponent("gallery"), "gallery/")] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: sub.path)) ?? []
            names += files.filter { $0.hasSuffix(".png") }.map { String($0.dropLast(4)) }.filter(isGoldenName).map {
                prefix + $0
            }
        }
        return names.sorted()
    }

    /// Whether `name` (a file name without ".png") is one a picture gets: `Showcase.Shot.safe` characters, then
    /// "@" and the width.
    static func isGoldenName(_ name: String) -> Bool {
        guard let at = name.lastIndex(of: "@"), !name.hasPrefix(".") else { return false }
        let width = name[name.index(after: at)...]
        return !width.isEmpty && width.allSatisfy(\.isASCII) && width.allSatisfy(\.isNumber)
            && name[..<at].unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == "."
            }
    }

    /// Whether gallery golden `name` is of a namespace a plugin of this run registered.
    static func ownedByLoadedPlugin(_ name: String, _ drawn: Drawn) -> Bool {
        drawn.galleryNamespacePrefixes.contains { name.hasPrefix($0) }
    }

    /// Removes the PNGs under the goldens folder's gallery/ that no story of the loaded plugins has (each said);
    /// returns how many. Only that folder's goldens of namespaces a loaded plugin registers are touched: a plugin
    /// missing from this run's folders (or `--safe-mode`) says nothing about its stories, and each golden it
    /// leaves is said, kept.
    /// With a `stage`, each is noted there, for the supervisor to remove once the worker ended cleanly.
    static func removeGoldensNoStoryHas(_ drawn: Drawn, in folder: URL, stage: inout RecordStage?) -> Int {
        var removed = 0
        var kept: [String] = []
        for name in goldenNames(in: folder) where name.hasPrefix("gallery/") && !drawn.galleryNames.contains(name) {
            guard !drawn.safeMode, ownedByLoadedPlugin(name, drawn) else {
                kept.append(name)
                continue
            }
            if stage != nil {
                stage!.remove(name + ".png", because: whyUndrawn(name, drawn, hint: false))
                removed += 1
                continue
            }
            do {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name + ".png"))
                Diagnostics.print("hubhost: removed \(name).png: \(whyUndrawn(name, drawn, hint: false))")
                removed += 1
            } catch {
                Diagnostics.print("hubhost: cannot remove \(name).png: \(ErrorText.describe(error))")
            }
        }
        if let first = kept.first {
            let more = kept.count > 1 ? " (and \(kept.count - 1) more)" : ""
            Diagnostics.print(
                "hubhost: kept \(kept.count) gallery golden(s) no story drew, such as \(first).png\(more): "
                    + whyUndrawn(first, drawn, hint: false))
        }
        return removed
    }

    /// Writes `data` to `url` the way every hubhost output is written (atomically; links written through).
    /// Writes a file the user asked for (a golden, a report, JUnit), its folders made with the user's umask.
    static func write(_ data: Data, to url: URL) throws {
        try ProcessStart.makeFolders(url.deletingLastPathComponent().path)
        let sink = try OutputFile(path: url.path)
        sink.write(data)
        try sink.commit()
    }

    /// What a golden that is not a readable PNG is instead (a Git LFS pointer, a truncated PNG…).
    static func whatItIs(_ data: Data) -> String {
        if data.isEmpty { return "an empty file" }
        if data.starts(with: Data("version https://git-lfs".utf8)) {
            return "a Git LFS pointer, not the image (run `git lfs pull`)"
        }
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            return "a PNG that cannot be decoded (truncated or damaged, \(data.count) bytes); record it again"
        }
        return "not a PNG (\(data.count) bytes)"
    }

    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record",
            abstract: "Draw every input as a golden PNG in --out DIR.",
            discussion: ExitStatus.help([
                (.ok, "recorded"),
                (
                    .problems,
                    "recorded, but some inputs had problems (listed on stderr; their images are not recorded, their "
                        + "goldens kept); or nothing recorded, as a plugin could not be loaded"
                ),
                (
                    .failed,
                    "an input or an image could not be drawn or written (the others are recorded), two inputs "
                        + "would share a golden, or nothing was drawn"
                ),
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
            try Snapshot.checkGoldenFolder(options.out, mustExist: false)
            // Goldens whose every text is a box would be committed as the truth and fail wherever fonts exist.
            if case .noFont = PNGImage.fontProblem {
                Diagnostics.print(
                    "hubhost: snapshot record: nothing recorded: \(PNGImage.missingFontWarning!); install the font "
                        + "(or point FONTCONFIG_FILE at a configuration that finds it)")
                throw ExitCode(.failed)
            }
            let folder = URL(fileURLWithPath: ProcessStart.absolute(options.out))
            // Supervised, the worker stages what it records and this process puts it in place once the worker ended
            // without a fault (`RecordStage`).
            var stage: RecordStage? = nil
            if options.isolation.supervises {
                RecordStage.removeStale(in: folder)
                let supervisorStage: RecordStage
                do { supervisorStage = try RecordStage.make(in: folder) } catch {
                    Diagnostics.print(
                        "hubhost: snapshot record: nothing recorded: cannot write in \(folder.path): "
                            + ErrorText.reason(error))
                    throw ExitCode(.failed)
                }
                _ = try Snapshot.pictures(options) { faults in
                    if faults.isEmpty {
                        if !supervisorStage.commit() { Glibc.exit(ExitStatus.failed.rawValue) }
                    } else {
                        supervisorStage.discard()
                    }
                }
            } else if CallRecorder.isWorker {
                stage = RecordStage(workerOf: folder)
            }
            var drawn = try Snapshot.pictures(options)
            // The same for a plugin that did not load (quarantined by an earlier run, refused): its components
            // would be recorded as fallbacks.
            if let pluginStatus = drawn.pluginStatus {
                Diagnostics.print(
                    "hubhost: snapshot record: nothing recorded, as a plugin did not load or loaded with a problem "
                        + "(above); goldens drawn then could replace good ones")
                throw ExitCode(pluginStatus)
            }
            guard Snapshot.drewSomething(&drawn, "record") else { throw ExitCode(.failed) }
            var recorded = 0
            var unwritten = 0
            var undrawable = 0
            var withProblems = 0
            for picture in drawn.pictures {
                // Its input's problems were said; a golden of this drawing would be wrong (a fallback, a broken
                // image) and would replace a good one.
                if picture.inputHadProblems {
                    withProblems += 1
                    continue
                }
                let png: Data
                do { png = try Snapshot.draw(picture, scale: options.scale).pngData() } catch {
                    // One image that cannot be drawn (a view taller than a PNG can be) does not stop the others.
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    drawn.hadUnusableInput = true
                    undrawable += 1
                    continue
                }
                do {
                    if stage != nil {
                        try stage!.write(png, name: picture.name + ".png")
                    } else {
                        try Snapshot.write(png, to: folder.appendingPathComponent(picture.name + ".png"))
                    }
                } catch {
                    // The others are still recorded (each golden is replaced whole or not at all), and counted.
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    unwritten += 1
                    drawn.hadUnusableInput = true
                    continue
                }
                recorded += 1
            }
            // Every plugin loaded (or nothing was recorded): a gallery golden none of their stories has is one of a
            // story renamed or removed, or of a width no longer asked for, which verify would fail for ever. Only the
            // whole gallery says so, not a shard of it.
            let removed =
                options.gallery && options.shard == nil
                ? Snapshot.removeGoldensNoStoryHas(drawn, in: folder, stage: &stage) : 0
            let summary =
                "recorded \(recorded) image(s) in \(folder.path)" + Snapshot.failuresSaid(drawn.failures)
                + (withProblems > 0
                    ? "; \(withProblems) not recorded, as their inputs have problems (above; their goldens are kept)"
                    : "")
                + (removed > 0 ? "; removed \(removed) gallery golden(s) no story has (above)" : "")
                + (unwritten > 0 ? "; \(unwritten) could not be written (above)" : "")
                + (undrawable > 0 ? "; \(undrawable) could not be drawn (above)" : "")
            if stage != nil { try stage!.finish(summary: summary) } else { StandardOutput.print(summary) }
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
                (
                    .failed,
                    "a golden is missing (with --gallery: a gallery golden no story draws), an input or image "
                        + "could not be drawn, or nothing was drawn"
                ),
                (.notFound, "a --plugins folder does not exist (nothing compared)"),
                (.pluginFault, "a plugin crashed, hung or exited: it was quarantined (whatever it left undrawn)"),
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
            // A report inside the goldens folder would be taken for goldens by the next run (and its images
            // compared, or removed as stale by record --gallery).
            if PathText.isSameOrInside(ProcessStart.absolute(report), ProcessStart.absolute(options.out)) {
                throw ValidationError("--report \(report) is inside --out \(options.out): name a folder outside it")
            }
        }

        func run() throws {
            try Snapshot.checkGoldenFolder(options.out, mustExist: true)
            // A record stopped while it put its goldens in place is finished first: a half old, half new folder
            // would be compared.
            if !CallRecorder.isWorker {
                RecordStage.removeStale(in: URL(fileURLWithPath: ProcessStart.absolute(options.out)))
            }
            var drawn = try Snapshot.pictures(options)
            // Nothing drawn still writes the report and JUnit (a plugin that crashed is in them), so that neither an
            // earlier run's nor none at all stands for this one.
            _ = Snapshot.drewSomething(&drawn, "verify")
            let golden = URL(fileURLWithPath: ProcessStart.absolute(options.out))
            var results: [SnapshotReport.Result] = []
            var cannotDraw = 0
            for picture in drawn.pictures {
                let actual: PNGImage
                do { actual = try Snapshot.draw(picture, scale: options.scale) } catch {
                    cannotDraw += 1
                    Diagnostics.print("hubhost: \(picture.name): \(ErrorText.describe(error))")
                    drawn.hadUnusableInput = true
                    // A failure of its own in JUnit and the report: a job that reads only them must not pass.
                    drawn.failures.append((picture.name, "cannot be drawn: \(ErrorText.describe(error))"))
                    continue
                }
                let file = golden.appendingPathComponent(picture.name + ".png")
                guard let data = FileManager.default.contents(atPath: file.path) else {
                    results.append(.init(name: picture.name, outcome: .missing(file.path, actual: actual)))
                    continue
                }
                guard let expected = PNGImage(png: data) else {
                    results.append(
                        .init(name: picture.name, outcome: .damaged(file.path, Snapshot.whatItIs(data), actual: actual))
                    )
                    continue
                }
                let diff = PixelDiff(expected: expected, actual: actual)
                // Sizes must match whatever the tolerance: a view that grew a row changed.
                if !diff.sizeChanged && (diff.differing == 0 || diff.fraction * 100 <= tolerance) {
                    results.append(.init(name: picture.name, outcome: .matched(diff.differing)))
                } else {
                    results.append(
                        .init(
                            name: picture.name,
                            outcome: .differs(diff, expected: expected, actual: actual)))
                }
            }
            // Goldens nothing drew (once, in the first shard). A gallery golden is a story that went away, or whose
            // plugin did not load: missing, as a CI run must not pass without checking it. Any other may be an old
            // view or width: said, not failed (a run may verify some views of a shared folder).
            var unchecked: [String] = []
            if (options.shard.flatMap(options.parsedShard)?.index ?? 1) == 1 {
                for name in Snapshot.goldenNames(in: golden) where !drawn.allNames.contains(name) {
                    if name.hasPrefix("gallery/") {
                        // Without --gallery, stories are not this run's business.
                        if options.gallery {
                            results.append(.init(name: name, outcome: .undrawn(Snapshot.whyUndrawn(name, drawn))))
                        }
                    } else {
                        unchecked.append(name)
                    }
                }
            }
            for result in results where !result.isMatch {
                Diagnostics.print("hubhost: \(result.name): \(result.summary)")
            }
            for name in unchecked.prefix(20) {
                Diagnostics.print("hubhost: \(name).png: no input of this run draws it (an old view or width?)")
            }
            if unchecked.count > 20 {
                Diagnostics.print("hubhost: … and \(unchecked.count - 20) more goldens no input draws")
            }
            // Written when there is something to report, and over a report an earlier run left (so a failing run's
            // report never stands for a passing one's); a passing run makes no folder.
            var report = SnapshotReport(results: results, tolerance: tolerance, failures: drawn.failures)
            report.skipped = drawn.skipped
            let changed = results.filter(\.isDifference)
            let folder = URL(fileURLWithPath: ProcessStart.absolute(self.report))
            let earlier = FileManager.default.fileExists(
                atPath: folder.appendingPathComponent(SnapshotReport.manifestName).path)
            // The JUnit file first: a CI job's test publisher reads it even when the report cannot be written (a
            // read-only checkout lost both).
            if let junit {
                do {
                    try Snapshot.write(
                        Data(report.junit().utf8), to: URL(fileURLWithPath: ProcessStart.absolute(junit)))
                } catch {
                    Diagnostics.print("hubhost: cannot write \(junit): \(ErrorText.describe(error))")
                    throw ExitCode(.failed)
                }
            }
            if results.contains(where: { !$0.isMatch }) || !drawn.failures.isEmpty || earlier {
                do { try report.write(to: folder) } catch {
                    Diagnostics.print(
                        "hubhost: cannot write the report in \(self.report): \(ErrorText.describe(error)) (--report DIR "
                            + "names another folder)")
                    throw ExitCode(.failed)
                }
            }
            let missing = results.filter(\.isMissing).count
            let undrawn = results.filter(\.isUndrawn).count
            let matched = results.filter(\.isMatch).count
            // Differences a tolerance let pass are said, so a growing drift is seen before it fails.
            let withinTolerance = results.filter {
                if case .matched(let pixels) = $0.outcome { return pixels > 0 } else { return false }
            }.count
            StandardOutput.print(
                "\(results.count) image(s): \(matched) match"
                    + (withinTolerance > 0 ? " (\(withinTolerance) within --tolerance)" : "")
                    + ", \(changed.count) differ, \(missing) missing"
                    + (undrawn > 0 ? ", \(undrawn) gallery golden(s) no story drew" : "")
                    + (unchecked.isEmpty ? "" : ", \(unchecked.count) golden(s) not drawn")
                    + (cannotDraw > 0 ? ", \(cannotDraw) that could not be drawn" : "")
                    + Snapshot.failuresSaid(drawn.failures)
                    + (matched == results.count && drawn.failures.isEmpty ? "" : "; report: \(self.report)/report.html")
            )
            // A plugin fault first: what it left undrawn or missing is its doing, and the plugin is what to fix. The
            // gallery goldens of a plugin that did not load (quarantined by an earlier run) are its doing as well.
            if drawn.pluginStatus == .pluginFault { throw ExitCode(.pluginFault) }
            if missing > 0 || (undrawn > 0 && drawn.pluginStatus == nil) || drawn.hadUnusableInput {
                throw ExitCode(.failed)
            }
            if !changed.isEmpty || drawn.hadProblems { throw ExitCode(.problems) }
        }
    }
}
