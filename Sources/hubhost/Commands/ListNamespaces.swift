import ArgumentParser
import Foundation
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
            [{"namespace", "components"}], …}]} with sorted keys.

            \(ExitStatus.help([
                (.ok, "every plugin file loaded (or --safe-mode)"),
                (.problems, "at least one file was rejected or refused (the others are listed)"),
                (.failed, "no plugin files were found"),
            ]))
            """
    )

    @OptionGroup var plugins: PluginOptions

    @Flag(name: .customLong("json"), help: "Print JSON for scripts instead of a table.")
    var json = false

    func run() throws {
        let host = plugins.makeHost()
        if json {
            print(try Self.jsonText(host.plugins))
        } else {
            print(Self.table(host.plugins), terminator: "")
        }
        // The table already lists every rejected file; JSON output gets the human-readable lines on stderr.
        plugins.reportProblems(of: host, includingRejections: json)
        if plugins.isSafeMode { return }  // said on stderr: nothing is loaded on purpose
        if host.plugins.isEmpty {
            Diagnostics.print(
                "hubhost: no plugin files (*.so) in \(plugins.folders.map(\.path).joined(separator: ", "))")
            throw ExitCode(.failed)
        }
        if host.plugins.contains(where: { $0.reason != nil }) { throw ExitCode(.problems) }
    }

    static func jsonObject(_ record: PluginRecord) -> [String: Any] {
        [
            "file": record.file.path,
            "id": record.id ?? NSNull(),
            "version": record.version ?? NSNull(),
            "abi": record.abi ?? NSNull(),
            "state": record.state.name,
            "reason": record.reason ?? NSNull(),
            "swift": record.isSwiftImage,
            "warnings": record.warnings,
            "namespaces": record.namespaces.map {
                ["namespace": $0.namespace, "components": $0.components] as [String: Any]
            },
        ]
    }

    static func jsonText(_ records: [PluginRecord]) throws -> String {
        let object: [String: Any] = ["plugins": records.map(jsonObject)]
        let data = try JSONSerialization.data(
            withJSONObject: object,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// A plain-text table, then the rejected files with their reasons.
    static func table(_ records: [PluginRecord]) -> String {
        var rows: [[String]] = [["NAMESPACE", "COMPONENTS", "PLUGIN", "VERSION", "FILE", "ABI", "STATE"]]
        for record in records where record.reason == nil {
            let common = [
                record.id ?? "-", record.version ?? "-", record.file.lastPathComponent, record.abi ?? "-",
                record.state.name,
            ]
            if record.namespaces.isEmpty { rows.append(["-", "-"] + common) }
            for namespace in record.namespaces {
                rows.append([namespace.namespace, namespace.components.joined(separator: ",")] + common)
            }
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            let cells = row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }
            out += cells.joined(separator: "  ") + "\n"
        }
        // Files that did not load, each with its reason (which names the file). Never dropped.
        let notLoaded = records.filter { $0.reason != nil }
        if !notLoaded.isEmpty {
            out += "\nnot loaded (\(notLoaded.count)):\n"
            let width = notLoaded.map(\.state.name.count).max() ?? 0
            for record in notLoaded {
                out +=
                    "  \(record.state.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(record.reason!)\n"
            }
        }
        return out
    }
}
