import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubInjection

/// `hubhost list-services`: every service and binding, its owner, scope and live instances.
struct ListServices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-services",
        abstract: "List every service and injector binding with its owner, scope, version and live instances.",
        discussion: """
            Loads the plugins and the module files (*.modules.json) beside them. One row per key: key (id or \
            id:name), version, owner, scope, live instances (acquisitions held for C services, instances alive \
            for bindings). --unload PLUGIN (a file name or plugin id, repeatable) unloads plugins first and \
            reports what is still alive after its owner was revoked. --json prints {"services": [{"key", "id", \
            "name", "version", "owner", "scope", "live"}], "survivors": [{"key", "owner", "what"}], "problems": \
            [...]} with sorted keys; a binding has no version ("-" in the table, null in JSON).

            \(ExitStatus.help([
                (.ok, "listed"),
                (.problems, "a plugin or module file had problems (they are listed too)"),
                (.notFound, "a --plugins folder does not exist, or --unload names no loaded plugin"),
                (.survivors, "instances are alive after their owner was revoked"),
                (.pluginFault, "a plugin function crashed, hung or exited (an eager singleton, an observer): reported"),
            ]))
            """
    )

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var isolation: IsolationOptions

    @Option(
        name: .customLong("unload"),
        help: ArgumentHelp(
            "Unload this plugin (file name or id) before listing.",
            valueName: "plugin"))
    var unload: [String] = []

    @Flag(name: .customLong("json"), help: "Print JSON for scripts instead of a table.")
    var json = false

    enum GraphFormat: String, ExpressibleByArgument { case dot, svg }

    @Option(
        help: ArgumentHelp(
            "Print the dependency graph instead: owners → keys they provide → consumers holding them (dot or svg).",
            valueName: "format"))
    var graph: GraphFormat?

    func run() throws {
        // Eager singletons run plugin functions while module files bind: in a worker, so a crash is reported.
        if isolation.supervises {
            var supervisor = OneShotSupervisor(isolation: isolation, plugins: plugins, viewFile: "")
            supervisor.context = "listing services (module files bind eager singletons as their plugins load)"
            supervisor.run()
        }
        let host = try plugins.makeHost(moduleFiles: .bindQuietly)
        var problems = host.services.moduleFileProblems.map(\.description)
        problems += host.plugins.compactMap(\.reason)
        // Registrations a plugin made and the host refused (its init went on): listed with the others.
        let warnings = host.plugins.flatMap { record in
            record.warnings.map { "\(record.file.lastPathComponent): \($0)" }
        }
        problems += warnings
        for name in unload {
            guard let record = host.loadedPlugins.first(where: { $0.file.lastPathComponent == name || $0.id == name })
            else {
                Diagnostics.print(
                    "hubhost list-services: --unload \(TerminalText.escaped(name)): no loaded plugin has that file name or id"
                )
                throw ExitCode(.notFound)
            }
            host.unload(record)
        }
        let registrations = host.services.registrations
        let survivors = host.services.survivors
        if let graph {
            let dependencies = ServiceGraph(
                provides: registrations.map { ($0.owner.displayName, $0.key.description, $0.scope) },
                uses: host.services.registry.acquisitions.map { ($0.consumer.displayName, $0.key.description) })
            StandardOutput.print(graph == .dot ? dependencies.dot() : dependencies.svg(), terminator: "")
            if !problems.isEmpty { throw ExitCode(.problems) }
            return
        }
        if json {
            StandardOutput.print(
                try TextTable.json(Listing(registrations: registrations, survivors: survivors, problems: problems)))
        } else {
            StandardOutput.print(Self.table(registrations), terminator: "")
            StandardOutput.print(
                survivors.isEmpty
                    ? "alive after revocation: none"
                    : "alive after revocation:\n" + survivors.map { "  \($0)" }.joined(separator: "\n"))
        }
        let pluginStatus = plugins.reportProblems(of: host)
        // What reportProblems printed (rejections, warnings) is not printed again.
        for problem in problems
        where !host.plugins.contains(where: { $0.reason == problem }) && !warnings.contains(problem) {
            Diagnostics.print("hubhost: \(problem)")
        }
        if !survivors.isEmpty { throw ExitCode(.survivors) }
        if !problems.isEmpty || pluginStatus != nil { throw ExitCode(pluginStatus ?? .problems) }
    }

    /// The `--json` output: services, survivors and problems.
    struct Listing: Encodable {
        struct Service: Encodable {
            var key: String
            var id: String
            var name: String?
            /// Nil for an injector binding, which has no version (the table's "-").
            var version: Int?
            var owner: String
            var scope: String
            var live: Int

            /// A service without a name has `"name": null`, a binding without a version `"version": null`.
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(key, forKey: .key)
                try container.encode(id, forKey: .id)
                try container.encode(name, forKey: .name)
                try container.encode(version, forKey: .version)
                try container.encode(owner, forKey: .owner)
                try container.encode(scope, forKey: .scope)
                try container.encode(live, forKey: .live)
            }
            enum CodingKeys: String, CodingKey { case key, id, name, version, owner, scope, live }
        }
        struct Survivor: Encodable {
            var key: String
            var owner: String
            var what: String
        }
        var services: [Service]
        var survivors: [Survivor]
        var problems: [String]

        init(registrations: [RegistrationInfo], survivors: [HubInjection.Survivor], problems: [String]) {
            services = registrations.map {
                Service(
                    key: $0.key.description, id: $0.key.id, name: $0.key.name,
                    version: $0.version == 0 ? nil : Int($0.version),
                    owner: $0.owner.description, scope: $0.scope, live: $0.liveInstances)
            }
            self.survivors = survivors.map {
                Survivor(key: $0.key.description, owner: $0.owner.description, what: $0.what)
            }
            self.problems = problems
        }
    }

    static func table(_ registrations: [RegistrationInfo]) -> String {
        var rows: [[String]] = [["KEY", "VERSION", "OWNER", "SCOPE", "LIVE"]]
        for r in registrations {
            rows.append([
                r.key.description, r.version == 0 ? "-" : "\(r.version)", r.owner.description, r.scope,
                "\(r.liveInstances)",
            ])
        }
        return TextTable.render(rows)
    }
}
