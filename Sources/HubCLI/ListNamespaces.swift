import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost

/// `hubhost list-namespaces`: what every plugin file offers, and why any was rejected.
struct ListNamespaces: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-namespaces",
        abstract: "List the namespaces and components of every plugin, and every rejected plugin file with its reason.",
        discussion: """
            One row per namespace: namespace, components, plugin id, version, file, ABI, state (active, pinned for \
            Swift images that can never be unloaded, rejected). Rejected files are always listed with the reason.
            --json prints {"plugins": [{"file", "id", "version", "abi", "state", "reason", "namespaces": \
            [{"namespace", "components"}], "actionNamespaces", …}]} with sorted keys. Action namespaces are listed \
            as rows whose components read "(actions)".

            \(ExitStatus.help([
                (.ok, "every plugin file loaded (or --safe-mode)"),
                (.problems, "at least one file was rejected or refused (the others are listed), or a plugin folder of "
                    + "HUBHOST_PLUGIN_PATH is missing"),
                (.failed, "no plugin files were found (also when every folder is missing)"),
                (.notFound, "a --plugins folder does not exist"),
                (.pluginFault, "a plugin crashed, hung or exited while it was first checked: it is listed as "
                    + "quarantined"),
            ]))
            """
    )

    @OptionGroup var plugins: PluginOptions
    @OptionGroup var isolation: IsolationOptions

    @Flag(name: .customLong("json"), help: "Print JSON for scripts instead of a table.")
    var json = false

    func run() throws {
        // Plugins load in this process (a worker costs more than the listing; the probe ran each new build's init in
        // a child already). Plugin code that crashes or hangs here anyway (an init that reads a config file) makes
        // the process start itself again, and that run lists in a worker, which names the plugin and quarantines it.
        // A listing that ended inside plugin code without starting again (killed, stopped by the user) leaves its
        // marker, and the next listing runs in a worker too. A worker run that meets a hang keeps the next one in a
        // worker as well (a hang is kept out for its run only), so an init that hangs on every load is named.
        var sentinel: InProcessSentinel?
        var restart: InProcessRestart?
        if isolation.supervises, !plugins.isSafeMode {
            let guardFile = InProcessSentinel(cacheDirectory: plugins.cacheDirectory, command: "list-namespaces")
            var unfinished = guardFile.unfinishedRuns
            let restartCause = InProcessRestart.causeText(timeout: isolation.callTimeout)
            if restartCause != nil { unfinished.append(guardFile.ownMarker) }
            if restartCause != nil || !unfinished.isEmpty {
                try plugins.requireNamedFolders()
                Diagnostics.print(
                    restartCause.map {
                        "hubhost: plugin code \($0) while this listing loaded plugins; listing again in a worker, "
                            + "which names the plugin"
                    }
                        ?? "hubhost: the last listing stopped inside plugin code (a crash there, or a kill from outside); "
                        + "listing in a worker this time, which names a plugin that crashes")
                var supervisor = OneShotSupervisor(isolation: isolation, plugins: plugins, viewFile: "")
                supervisor.context = "listing plugins (their init runs as they load)"
                supervisor.finished = { faults in
                    if !faults.contains(where: { $0.kind == .hang }) { guardFile.clear(unfinished) }
                }
                supervisor.run()
            }
            guardFile.begin()
            sentinel = guardFile
            restart = InProcessRestart(arguments: CommandLine.arguments, timeout: isolation.callTimeout)
        }
        defer {
            restart?.disarm()
            sentinel?.end()
        }
        // What plugin code starts while it loads here, and leaves running, is ended before the listing exits.
        LeftoverProcesses.adoptInThisProcess()
        // Listing needs no services: module files are not bound, so no eager singleton (plugin code) runs here.
        let host = try plugins.makeHost(moduleFiles: .skip)
        // The plugins are loaded: what follows is the listing's own work. A reader that goes away while it prints
        // (`| head`) does not make the next listing think this one ended inside plugin code.
        restart?.disarm()
        sentinel?.end()
        sentinel = nil
        if json {
            StandardOutput.print(try Self.jsonText(host))
        } else {
            StandardOutput.print(Self.table(host), terminator: "")
        }
        // The table already lists every rejected file; JSON output gets the human-readable lines on stderr.
        var status = plugins.reportProblems(of: host, includingRejections: json)
        if let leftovers = LeftoverProcesses.endInThisProcess() {
            Diagnostics.print("hubhost: " + leftovers)
            status = status ?? .problems
        }
        if plugins.isSafeMode { return }  // said on stderr: nothing is loaded on purpose
        if host.plugins.isEmpty {
            Diagnostics.print(
                "hubhost: no plugin files (*.so) in \(plugins.folders.map(\.path).joined(separator: ", "))")
            throw ExitCode(.failed)
        }
        // The listing is out: the plugins' exit handlers are not run here (see the worker's, which names them).
        HubHostCommand.endWithoutPluginExitCode(status?.rawValue ?? ExitStatus.ok.rawValue)
    }

    /// One plugin file as both outputs show it.
    struct PluginRow: Encodable {
        struct Namespace: Encodable {
            var namespace: String
            var components: [String]
        }
        var file: String
        var id: String?
        var version: String?
        var abi: String?
        var state: String
        var reason: String?
        var swift: Bool
        var warnings: [String]
        var namespaces: [Namespace]
        /// The action namespaces it registered (`hub_host.register_action_factory`).
        var actionNamespaces: [String]

        init(_ record: PluginRecord, host: PluginHost) {
            file = record.file.path
            id = record.id
            version = record.version
            abi = record.abi
            state = record.state.name
            reason = record.reason
            swift = record.isSwiftImage
            warnings = record.warnings
            namespaces = record.namespaces.map { Namespace(namespace: $0.namespace, components: $0.components) }
            actionNamespaces = host.actionFactories.allEntries.filter { $0.owner == record.owner }.map(\.key)
        }

        enum CodingKeys: String, CodingKey {
            case file, id, version, abi, state, reason, swift, warnings, namespaces, actionNamespaces
        }

        /// Absent values are `null`, so every row has every key.
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(id, forKey: .id)
            try container.encode(version, forKey: .version)
            try container.encode(abi, forKey: .abi)
            try container.encode(state, forKey: .state)
            try container.encode(reason, forKey: .reason)
            try container.encode(swift, forKey: .swift)
            try container.encode(warnings, forKey: .warnings)
            try container.encode(namespaces, forKey: .namespaces)
            try container.encode(actionNamespaces, forKey: .actionNamespaces)
        }
    }

    static func jsonText(_ host: PluginHost) throws -> String {
        struct Listing: Encodable { var plugins: [PluginRow] }
        return try TextTable.json(Listing(plugins: host.plugins.map { PluginRow($0, host: host) }))
    }

    /// A plain-text table, then the rejected files with their reasons.
    static func table(_ host: PluginHost) -> String {
        let rows = host.plugins.map { PluginRow($0, host: host) }
        var cells: [[String]] = [["NAMESPACE", "COMPONENTS", "PLUGIN", "VERSION", "FILE", "ABI", "STATE"]]
        for row in rows where row.reason == nil {
            let common = [
                row.id ?? "-", row.version ?? "-", PathText.fileName(row.file), row.abi ?? "-", row.state,
            ]
            if row.namespaces.isEmpty && row.actionNamespaces.isEmpty { cells.append(["-", "-"] + common) }
            for namespace in row.namespaces {
                cells.append([namespace.namespace, namespace.components.joined(separator: ",")] + common)
            }
            for namespace in row.actionNamespaces { cells.append([namespace, "(actions)"] + common) }
        }
        // Ids, versions, names and reasons come from plugin files: no control character of theirs reaches the
        // terminal.
        var out = TextTable.render(cells.map { $0.map { TerminalText.escaped($0, limit: 200) } })
        // Files that did not load, each with its reason (which names the file). Never dropped.
        let notLoaded = rows.compactMap { row in row.reason.map { (state: row.state, reason: $0) } }
        if !notLoaded.isEmpty {
            out += "\nnot loaded (\(notLoaded.count)):\n"
            let width = notLoaded.map(\.state.count).max() ?? 0
            for (state, reason) in notLoaded {
                out +=
                    "  " + state + String(repeating: " ", count: width - state.count) + "  "
                    + TerminalText.line(reason) + "\n"
            }
        }
        return out
    }
}
