import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost validate PLUGIN.so…`: the conformance suite for plugin authors. Each plugin runs in its own child
/// process (as clap-validator does), so a crash or hang is reported as a failure of that plugin, not of the tool.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check plugins against the hub plugin ABI, each in a child process.",
        discussion: """
            Checks: ELF image, descriptor and ABI, init; for every component: created by its factory, layout traits, \
            extension tables complete (no NULL functions), preferred size finite and non-negative for every sample \
            model and container, load view, configure and draw every sample model, reuse with another model, \
            every extension called (children, image handling, content offset and view observers, action performer \
            and observer), selection state, UI state round trip, destroy, every showcase story read and drawn; every action handler with each trigger, \
            with and without custom data; every layout manager's margins; unload clean. With --view, every \
            component also runs over the view's models of its namespaces (a plugin that serves none of them is not \
            run over the view, and a note says so). A crash or hang names its call and model. \
            Module files beside the plugin are checked too: every function a binding names must be exported, and \
            its defaults must fit the signature.
            The file is also checked as the loader checks it (not writable by others, nor its folder); functions \
            it exports besides hub_plugin_entry that no module file beside it binds are noted.
            \(ExitStatus.help([
                (.ok, "every plugin passes every check"), (.problems, "a check of a plugin failed"),
                (.notFound, "an argument names no file or folder"),
                (.failed, "the --view file cannot be read or is not a view"),
            ]))
            """
    )

    @Argument(help: "Plugin files, or folders of them (every *.so inside).")
    var plugins: [String]

    @Flag(
        name: .customLong("allow-unsafe-permissions"),
        help: "Do not fail a plugin file that others can write, or whose folder they can (the loader refuses it).")
    var allowUnsafePermissions = false

    @Option(
        help: ArgumentHelp(
            "Also run each plugin's components, extensions and action handlers over this view's models.",
            valueName: "view.json"))
    var view: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(parsing: .unconditional, help: "Seconds a plugin may take before it counts as hanging.")
    var timeout: Double = 10

    struct Result: Encodable {
        var file: String
        var passed: Bool
        /// A crash or hang of the child, when there was one.
        var failure: String?
        var report: ProbeReport?
        /// Worth a look, but not a failure (functions exported besides the entry point).
        var notes: [String] = []
        /// Failures of checks read from the file that the host still loads it with (unique symbols).
        var fails: [String] = []

        private enum CodingKeys: String, CodingKey { case file, passed, failure, report, notes, fails }

        /// Every key, null when empty: a script reads `report` and `failure` the same way whatever happened (a
        /// crash left `report` out, so `p["report"]["checks"]` failed exactly when it mattered).
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(passed, forKey: .passed)
            try container.encode(failure, forKey: .failure)
            try container.encode(report, forKey: .report)
            try container.encode(notes, forKey: .notes)
            try container.encode(fails, forKey: .fails)
        }
    }

    func validate() throws {
        if let problem = InputLimits.problem(timeout, in: 0...InputLimits.seconds, excludingLowerBound: true) {
            throw ValidationError("--timeout: \(problem)")
        }
    }

    func run() throws {
        var viewNamespaces: Set<String>?
        // A view that cannot be used is the view's problem, not every plugin's (each probe would fail on it).
        if let view {
            let bytes: [UInt8]
            do { bytes = try readWholeFile(view, limit: ViewModelDecoder.maxViewBytes) } catch {
                Diagnostics.print("hubhost validate: --view \(view): cannot read: \(ErrorText.describe(error))")
                throw ExitCode(.failed)
            }
            do {
                var namespaces = Set<String>()
                try ViewModelDecoder(file: view).decode(bytes: bytes).viewModel.forEachModel {
                    namespaces.insert($0.componentIdentifier.namespace)
                }
                viewNamespaces = namespaces
            } catch {
                Diagnostics.print("hubhost validate: --view \(ErrorText.describe(error))")
                throw ExitCode(.failed)
            }
        }
        guard let executable = ProbeRunner.defaultExecutable() else {
            throw ValidationError("cannot find the hubhost executable to run the checks in a child process")
        }
        let work: URL
        do { work = try ScratchFolder.make("hubhost-validate") } catch {
            Diagnostics.print(
                "hubhost validate: cannot make a temporary folder in \(ScratchFolder.base.path): \(error)")
            throw ExitCode(.failed)
        }
        defer { try? FileManager.default.removeItem(at: work) }
        let runner = ProbeRunner(executable: executable, timeout: timeout, workDirectory: work)
        let trust = PluginTrust(allowUnsafePermissions: allowUnsafePermissions)
        let files = try pluginFiles()
        let viewFile = view
        let namespacesOfView = viewNamespaces
        let found = Locked([Result?](repeating: nil, count: files.count))
        // Several plugins at a time, each in a child of its own, results in the files' order: a plugin that hangs
        // waits out its timeout (ten in a folder took 10 × --timeout one after another).
        Threads.forEachIndex(files.count, lanes: 4, name: "hubhost-validate") { index in
            let result = Self.check(
                files[index], runner: runner, trust: trust, view: viewFile, viewNamespaces: namespacesOfView)
            found.withLock { $0[index] = result }
        }
        let results = found.withLock { $0 }.compactMap { $0 }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            struct Output: Encodable {
                var passed: Bool
                var plugins: [Result]
            }
            let data = try encoder.encode(Output(passed: results.allSatisfy(\.passed), plugins: results))
            StandardOutput.print(String(decoding: data, as: UTF8.self))
        } else {
            for result in results { printHuman(result) }
            let failed = results.filter { !$0.passed }.count
            StandardOutput.print(
                failed == 0 ? "\(results.count) plugin(s) passed" : "\(failed) of \(results.count) plugin(s) failed")
        }
        if !results.allSatisfy(\.passed) { throw ExitCode(.problems) }
    }

    /// One plugin's result: its probe (over the view's models too when it serves some of them: each child decodes
    /// the whole view, and 300 plugins over a 100k view took 4 min 37 s, most of them serving none of it), what
    /// the loader would refuse, and what its exports say.
    private static func check(
        _ file: URL, runner: ProbeRunner, trust: PluginTrust, view: String?, viewNamespaces: Set<String>?
    ) -> Result {
        var (report, failure) = runner.validate(file, view: nil)
        var viewNote: String?
        if let view, let viewNamespaces, failure == nil, let served = report?.namespaces.map({ $0.namespace }) {
            if viewNamespaces.isDisjoint(with: served) {
                viewNote = "--view \(PathText.fileName(view)) names none of its components: none of its models were run"
            } else {
                (report, failure) = runner.validate(file, view: URL(fileURLWithPath: view))
            }
        }
        // What the loader would refuse fails the plugin too.
        var moduleFiles = moduleFileCheck(for: file)
        if let viewNote { moduleFiles.notes.append(viewNote) }
        let bindingProblems = [trust.refusal(of: file)].compactMap { $0 } + moduleFiles.problems
        return Result(
            file: file.path,
            passed: failure == nil && (report?.conforms ?? false) && bindingProblems.isEmpty
                && moduleFiles.fails.isEmpty,
            failure: failure ?? (bindingProblems.isEmpty ? nil : bindingProblems.joined(separator: "\n  ")),
            report: report, notes: moduleFiles.notes, fails: moduleFiles.fails)
    }

    /// The files the arguments name: a file as it is, a folder as every `*.so` directly inside it (sorted).
    private func pluginFiles() throws -> [URL] {
        var files: [URL] = []
        for path in plugins {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                Diagnostics.print("hubhost validate: \(path): no such file or folder")
                throw ExitCode(.notFound)
            }
            let url = URL(fileURLWithPath: path).standardizedFileURL
            if isFolder {
                let found = PluginFolders.pluginFiles(in: [url]).files
                if found.isEmpty { Diagnostics.print("hubhost validate: \(path): no plugin files (*.so) in it") }
                files += found
            } else {
                files.append(url)
            }
        }
        // Nothing to validate is not a pass (a folder gone empty in CI).
        if files.isEmpty {
            Diagnostics.print("hubhost validate: no plugin files to validate")
            throw ExitCode(.failed)
        }
        return files
    }

    /// What the module files beside `plugin` say of it, read with its exported functions once:
    /// - problems: bindings naming it whose symbol (or `awoken` hook) it does not export, bindings that could not
    ///   be read (a default that does not fit the signature…), and module files that cannot be read at all (they
    ///   bind nothing, for this plugin too);
    /// - notes: functions it exports besides `hub_plugin_entry` that no binding names. A note, not a failure:
    ///   `hubhost call` and module files in other folders may use them; a plugin linked with the version script
    ///   (writing-plugins.md) exports nothing else.
    /// Read from the ELF, without loading the plugin.
    /// - fails: what the file exports that makes it wrong though it loads (unique symbols).
    static func moduleFileCheck(for plugin: URL) -> (problems: [String], notes: [String], fails: [String]) {
        let symbols = (try? ELFInspector.exportedSymbols(of: plugin)) ?? ELFInspector.ExportedSymbols()
        let exported = symbols.functions
        let name = plugin.lastPathComponent
        var problems: [String] = []
        var fails: [String] = []
        func list(_ names: some Collection<String>) -> String {
            let sorted = names.sorted()
            return sorted.prefix(5).map { TerminalText.escaped(ELFInspector.demangled($0), limit: 60) }
                .joined(separator: ", ")
                + (sorted.count > 5 ? " and \(sorted.count - 5) more" : "")
        }
        if !symbols.unique.isEmpty {
            // Two plugins built from the same code then share that state, and the plugin is never unloaded.
            fails.append(
                "exports unique symbols \(list(symbols.unique)) (C++ inline or template statics): the loader makes "
                    + "one of each for the whole process, shared with every other plugin that defines it, and never "
                    + "unloads \(name); link with the version script (see writing-plugins.md), or build with "
                    + "-fvisibility=hidden or -fno-gnu-unique")
        }
        var bound = Set<String>()
        for url in ModuleFile.files(in: [plugin.deletingLastPathComponent()]) {
            let file: ModuleFile
            do { file = try ModuleFile(contentsOf: url) } catch {
                problems.append("\(error)")
                continue
            }
            // Bindings that could not be read and that name this plugin: found by their place in the file.
            let raw = (try? JSONValue.parse(Data(contentsOf: url)))?["bindings"]?.arrayValue ?? []
            let mine = raw.indices.filter { raw[$0]["plugin"]?.stringValue == name }
            problems += file.problems.filter { problem in
                mine.contains { problem.description.contains("bindings[\($0)]") }
            }.map(\.description)
            for binding in file.bindings where binding.plugin == name {
                for symbol in [binding.symbol] + (binding.awoken.map { [$0] } ?? []) {
                    bound.insert(symbol)
                    guard !exported.contains(symbol) else { continue }
                    problems.append(
                        "\(url.lastPathComponent): binding \(binding.label): \(symbol) is not exported by \(name) "
                            + "(add it to the version script, or mark it HUB_EXPORT)")
                }
            }
        }
        let extra = exported.filter { $0 != "hub_plugin_entry" && !bound.contains($0) }
        var notes: [String] = []
        if !extra.isEmpty {
            notes.append(
                "exports \(list(extra)) besides hub_plugin_entry and no module file beside it binds them; unless they "
                    + "are meant for `hubhost call`, link with the version script (see writing-plugins.md)")
        }
        if !symbols.data.isEmpty {
            // Another library defining the same name binds to this one's (or this one to its).
            notes.append(
                "exports data \(list(symbols.data)): another library in the process that uses the same names can "
                    + "bind to them; link with the version script (see writing-plugins.md)")
        }
        return (problems, notes, fails)
    }

    /// Every line goes through `TerminalText.line`: ids, versions and failure messages come from the plugin.
    private func printHuman(_ result: Result) {
        let name = URL(fileURLWithPath: result.file).lastPathComponent
        let plugin = result.report?.plugin.map { " (\($0.id) \($0.version), ABI \($0.abi))" } ?? ""
        StandardOutput.print(TerminalText.line("\(result.passed ? "PASS" : "FAIL") \(name)\(plugin)"))
        for note in result.notes { StandardOutput.print(TerminalText.line("  note: " + note)) }
        for fail in result.fails { StandardOutput.print(TerminalText.line("  fail " + fail)) }
        if let failure = result.failure {
            for (index, line) in failure.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                StandardOutput.print(TerminalText.line((index == 0 ? "  FAIL " : "") + line))
            }
        }
        for check in result.report?.checks ?? [] where !check.passed || !result.passed {
            StandardOutput.print(TerminalText.line("  \(check)"))
        }
        if !result.fails.isEmpty || result.report?.checks.contains(where: { !$0.passed && !$0.fatal }) == true {
            // A plugin that fails only those still loads: say why it fails all the same.
            StandardOutput.print(
                "  (fail: a check the plugin must pass, though the host still loads it; FAIL: the host refuses it)")
        }
    }
}
