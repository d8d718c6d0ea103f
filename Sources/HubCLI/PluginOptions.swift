import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import Logging

/// The plugin options every command shares.
struct PluginOptions: ParsableArguments {
    @Option(
        name: .customLong("plugins"),
        help: ArgumentHelp(
            "A folder of plugins (*.so); repeatable. Default: HUBHOST_PLUGIN_PATH (colon-separated), else ./plugins.",
            valueName: "dir"))
    var pluginFolders: [String] = []

    @Option(
        name: .customLong("plugin-cache"),
        help: ArgumentHelp(
            "Where private copies of plugin images go. Default: $XDG_CACHE_HOME/hubhost/images or ~/.cache/hubhost/images.",
            valueName: "dir"))
    var cacheDirectory: String?

    @Flag(name: .customLong("verbose"), help: "Log what the plugin host does (to stderr).")
    var verbose = false

    @Flag(name: .customLong("safe-mode"), help: "Load no plugins at all (also HUBHOST_SAFE_MODE=1).")
    var safeMode = false

    @Option(
        name: .customLong("trusted-hashes"),
        help: ArgumentHelp(
            "Load only plugins whose SHA-256 is listed in this file (sha256sum output).", valueName: "file"))
    var trustedHashes: String?

    @Option(
        name: .customLong("prefer"),
        help: ArgumentHelp(
            "When two plugins claim one namespace, load this one (by plugin id); repeatable. Without it, neither loads.",
            valueName: "plugin-id"))
    var preferred: [String] = []

    @Flag(
        name: .customLong("allow-unsafe-permissions"),
        help: """
            Load plugin files even when others can write them or their folder, or another user owns them.
            """)
    var allowUnsafePermissions = false

    @Flag(
        name: .customLong("reprobe"),
        help: """
            Probe every plugin again instead of using the cached verdicts: clears quarantines (after fixing what a \
            plugin depended on, or a hang that was the machine's).
            """)
    var reprobe = false

    func validate() throws {
        if let trustedHashes {
            do { _ = try TrustedDigests(contentsOf: trustedHashes) } catch {
                throw ValidationError("--trusted-hashes \(error)")
            }
        }
    }

    /// Safe mode, from the flag or the environment.
    var isSafeMode: Bool { safeMode || HostEnvironment.current.safeModeRequested }

    /// Which plugin files may load (`validate()` already checked that --trusted-hashes reads).
    var trust: PluginTrust {
        PluginTrust(
            allowUnsafePermissions: allowUnsafePermissions,
            trustedDigests: trustedHashes.flatMap { try? TrustedDigests(contentsOf: $0) }, safeMode: isSafeMode)
    }

    /// The folders to load from, resolved as documented.
    var folders: [URL] {
        PluginFolders.resolve(explicit: pluginFolders, environment: .current)
    }

    /// A logger writing to stderr; plugin rejections are reported by the commands themselves, so only errors
    /// are logged unless --verbose.
    func makeLogger() -> Logger {
        var logger = Logger(label: "hubhost") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .error
        return logger
    }

    /// What `makeHost` does with the module files beside the plugins.
    enum ModuleFiles {
        /// Bind them and print their problems (every command that may run plugin code).
        case bindAndReport
        /// Bind them; the caller lists their problems its own way (`host.services.moduleFileProblems`).
        case bindQuietly
        /// Do not bind them: nothing of them runs (a listing that needs no services).
        case skip
    }

    /// A host with the plugins of `folders` loaded and their module files bound. Rejected files are in
    /// `host.plugins` with their reasons.
    ///
    /// - Throws: `ExitCode(.notFound)` when a `--plugins` folder named on the command line does not exist: a typo
    ///   there would draw every component as a fallback (and replace the output the user had), so nothing is
    ///   done. Folders from HUBHOST_PLUGIN_PATH or the default are only reported, as before.
    func makeHost(moduleFiles: ModuleFiles = .bindAndReport) throws -> PluginHost {
        try requireNamedFolders()
        // From here on plugin code may run in this process: what it prints goes to stderr, not into the output.
        StandardOutput.divertPluginOutput()
        // A cache folder that cannot be written is said once, and the run goes on in a temporary one.
        let (cache, problem) = CacheFolder.usable(cacheDirectory.map { URL(fileURLWithPath: $0) })
        if let problem { Diagnostics.print("hubhost: \(problem)") }
        let host = PluginHost(cacheDirectory: cache, logger: makeLogger())
        host.trust = trust
        host.preferredPluginIDs = Set(preferred)
        host.quarantinedVersions = WorkerEnvironment.quarantined
        if isSafeMode { Diagnostics.print("hubhost: safe mode: no plugins are loaded") }
        // Each plugin version is first exercised in a child process (cached); crashing ones are quarantined. The
        // children are forked from one scanner process (`probe --serve`), started only when something needs
        // probing: one start-up for a cold folder of hundreds of plugins instead of one per plugin.
        let gate = ProbeGate.standard(
            cacheDirectory: ProbeGate.defaultCacheDirectory(imagesDirectory: cache), warm: true)
        // Once per command: a worker started again after a fault keeps the verdicts its first worker made.
        gate?.ignoresCachedVerdicts = reprobe && !WorkerEnvironment.isRestart
        gate?.install(on: host)
        // Plugins hear of each other's services once the batch is loaded and its module files bound.
        host.services.registry.holdingNotices {
            host.loadPlugins(in: folders)
            // Every command binds the module files beside the plugins, so plugins can `inject` what they declare
            // (`moduleFiles`: whether, and whether this prints their problems).
            switch moduleFiles {
            case .bindAndReport:
                for problem in host.services.loadModuleFiles(in: folders) { Diagnostics.print("hubhost: \(problem)") }
            case .bindQuietly: host.services.loadModuleFiles(in: folders)
            case .skip: break
            }
        }
        // A --prefer that names no plugin is a typo: the command stops before it writes anything (exit 3, "names
        // nothing"), as for a layout manager no plugin registered (it went on, replaced the output file, exit 3).
        let ids = Set(host.plugins.compactMap(\.id))
        let unknown = preferred.filter { !ids.contains($0) }
        for id in unknown {
            Diagnostics.print("hubhost: --prefer \(TerminalText.escaped(id)): no plugin in the folders has that id")
        }
        if !unknown.isEmpty { throw ExitCode(.notFound) }
        return host
    }

    /// Stops the command (exit 3) when a `--plugins` folder given on the command line is not a folder.
    func requireNamedFolders() throws {
        for path in pluginFolders where !path.isEmpty {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder else {
                Diagnostics.print("hubhost: --plugins \(path): no such folder")
                throw ExitCode(.notFound)
            }
        }
    }

    /// Writes one diagnostic line per missing folder, plugin warning and (unless the command lists them itself)
    /// rejected plugin to stderr. Returns the status the command ends with for them: `.pluginFault` when a
    /// plugin's probe crashed, hung or exited during this run (it was quarantined and its components fall back),
    /// `.problems` when anything else was reported, nil when nothing was. So a CI job does not go green on output
    /// drawn with a plugin missing.
    @discardableResult
    func reportProblems(of host: PluginHost, includingRejections: Bool = true) -> ExitStatus? {
        var reported = false
        var faulted = false
        for folder in host.missingFolders {
            Diagnostics.print("hubhost: plugin folder \(folder.path) does not exist")
            reported = true
        }
        // A --prefer that names no plugin here is a typo, not a choice: the clash it was meant to settle stays.
        let ids = Set(host.plugins.compactMap(\.id))
        var unknownPreference = false
        for id in preferred where !ids.contains(id) {
            Diagnostics.print("hubhost: --prefer \(TerminalText.escaped(id)): no plugin in the folders has that id")
            unknownPreference = true
        }
        // A worker started again after a fault: its supervisor said which plugins it quarantined in this run.
        let quarantinedThisRun = Set(host.quarantinedVersions.map(\.file))
        for record in host.plugins {
            if let reason = record.reason {
                if includingRejections && !quarantinedThisRun.contains(record.file.path) {
                    Diagnostics.print("hubhost: \(record.state.name) \(reason)")
                }
                reported = true
                // Faulted in this run: in its probe, or (a worker started again) in the worker before this one.
                faulted = faulted || record.faultedThisRun || quarantinedThisRun.contains(record.file.path)
                continue
            }
            // A worker started again after a fault loads the same plugins: its first worker said their warnings.
            // Notes (what hubhost put right) are said, and leave the status alone.
            if !WorkerEnvironment.isRestart {
                for note in record.notes { Diagnostics.print("hubhost: \(record.file.lastPathComponent): \(note)") }
            }
            for warning in record.warnings {
                if !WorkerEnvironment.isRestart {
                    Diagnostics.print("hubhost: \(record.file.lastPathComponent): \(warning)")
                }
                reported = true
            }
        }
        return faulted ? .pluginFault : unknownPreference ? .notFound : reported ? .problems : nil
    }
}

/// Diagnostics go to stderr, so stdout stays parseable. Each is one line: control characters that untrusted
/// text brought in are escaped and the line is bounded (`TerminalText.line`), so a view cannot forge messages.
enum Diagnostics {
    static func print(_ line: String) {
        collected?.append(line)
        StandardError.writeLine(TerminalText.line(line))
    }

    /// Lines printed while `collect` runs its body (one thread: the command's).
    nonisolated(unsafe) private static var collected: [String]?

    /// Runs `body`, putting the lines it printed into `lines` as well (whether it throws or not), so that a
    /// report can say why an input failed, not only the terminal.
    static func collect<T>(_ lines: inout [String], _ body: () throws -> T) rethrows -> T {
        let outer = collected
        collected = []
        defer {
            lines = collected ?? []
            collected = outer.map { $0 + lines }
        }
        return try body()
    }

    /// Several lines, each made safe as `print` makes one.
    static func printBlock(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { print(String(line)) }
    }
}
