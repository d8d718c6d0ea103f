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
            and observer), selection state, UI state round trip, destroy; every action handler with each trigger, \
            with and without custom data; every layout manager's margins; unload clean. With --view, every \
            component also runs over the view's models of its namespaces. A crash or hang names its call and model. \
            Module files beside the plugin are checked too: every function a binding names must be exported, and \
            its defaults must fit the signature.
            \(ExitStatus.help([(.ok, "every plugin passes every check"), (.problems, "a check of a plugin failed")]))
            """
    )

    @Argument(help: "Plugin files.")
    var plugins: [String]

    @Option(
        help: ArgumentHelp(
            "Also run each plugin's components, extensions and action handlers over this view's models.",
            valueName: "view.json"))
    var view: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(help: "Seconds a plugin may take before it counts as hanging.")
    var timeout: Double = 10

    struct Result: Encodable {
        var file: String
        var passed: Bool
        /// A crash or hang of the child, when there was one.
        var failure: String?
        var report: ProbeReport?
    }

    func run() throws {
        guard let executable = ProbeRunner.defaultExecutable() else {
            throw ValidationError("cannot find the hubhost executable to run the checks in a child process")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-validate-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let runner = ProbeRunner(executable: executable, timeout: timeout, workDirectory: work)
        var results: [Result] = []
        for path in plugins {
            let file = URL(fileURLWithPath: path).standardizedFileURL
            let (report, failure) = runner.validate(file, view: view.map { URL(fileURLWithPath: $0) })
            let bindingProblems = Self.moduleFileProblems(for: file)
            results.append(
                Result(
                    file: file.path,
                    passed: failure == nil && (report?.conforms ?? false) && bindingProblems.isEmpty,
                    failure: failure ?? (bindingProblems.isEmpty ? nil : bindingProblems.joined(separator: "\n  ")),
                    report: report))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
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

    /// What is wrong with the module-file bindings beside `plugin` that name it: a symbol it does not export
    /// (plugins linked with the version script export only hub_plugin_entry), or defaults that do not fit the
    /// signature. Read from the ELF, without loading the plugin.
    static func moduleFileProblems(for plugin: URL) -> [String] {
        let files = ModuleFile.files(in: [plugin.deletingLastPathComponent()])
        guard !files.isEmpty else { return [] }
        let exported = (try? ELFInspector.exportedFunctions(of: plugin)) ?? []
        var problems: [String] = []
        for url in files {
            guard let file = try? ModuleFile(contentsOf: url) else { continue }
            // Bindings that could not be read (a default that does not fit the signature…) and that name this
            // plugin: found by their place in the file.
            let raw = (try? JSONValue.parse(Data(contentsOf: url)))?["bindings"]?.arrayValue ?? []
            let mine = raw.indices.filter { raw[$0]["plugin"]?.stringValue == plugin.lastPathComponent }
            problems += file.problems.filter { problem in
                mine.contains { problem.description.contains("bindings[\($0)]") }
            }.map(\.description)
            for binding in file.bindings where binding.plugin == plugin.lastPathComponent {
                if !exported.contains(binding.symbol) {
                    problems.append(
                        "\(url.lastPathComponent): binding \(binding.label): \(binding.symbol) is not exported by "
                            + "\(plugin.lastPathComponent) (add it to the version script, or mark it HUB_EXPORT)")
                }
            }
        }
        return problems
    }

    /// Every line goes through `TerminalText.line`: ids, versions and failure messages come from the plugin.
    private func printHuman(_ result: Result) {
        let name = URL(fileURLWithPath: result.file).lastPathComponent
        let plugin = result.report?.plugin.map { " (\($0.id) \($0.version), ABI \($0.abi))" } ?? ""
        StandardOutput.print(TerminalText.line("\(result.passed ? "PASS" : "FAIL") \(name)\(plugin)"))
        if let failure = result.failure {
            for (index, line) in failure.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                StandardOutput.print(TerminalText.line((index == 0 ? "  FAIL " : "") + line))
            }
        }
        for check in result.report?.checks ?? [] where !check.passed || !result.passed {
            StandardOutput.print(TerminalText.line("  \(check)"))
        }
    }
}
