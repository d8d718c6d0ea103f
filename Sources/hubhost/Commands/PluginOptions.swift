import ArgumentParser
import Foundation
import HubCore
import HubHost
import Logging

/// The plugin options every command shares.
struct PluginOptions: ParsableArguments {
    @Option(name: .customLong("plugins"), help: ArgumentHelp(
        "A folder of plugins (*.so); repeatable. Default: HUBHOST_PLUGIN_PATH (colon-separated), else ./plugins.",
        valueName: "dir"))
    var pluginFolders: [String] = []

    @Option(name: .customLong("plugin-cache"), help: ArgumentHelp(
        "Where private copies of plugin images go. Default: $XDG_CACHE_HOME/hubhost/images or ~/.cache/hubhost/images.",
        valueName: "dir"))
    var cacheDirectory: String?

    @Flag(name: .customLong("verbose"), help: "Log what the plugin host does (to stderr).")
    var verbose = false

    /// The folders to load from, resolved as documented.
    var folders: [URL] {
        PluginFolders.resolve(explicit: pluginFolders, environment: ProcessInfo.processInfo.environment)
    }

    /// A logger writing to stderr; plugin rejections are reported by the commands themselves, so only errors
    /// are logged unless --verbose.
    func makeLogger() -> Logger {
        var logger = Logger(label: "hubhost") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .error
        return logger
    }

    /// A host with the plugins of `folders` loaded. Rejected files are in `host.plugins` with their reasons.
    func makeHost() -> PluginHost {
        let host = PluginHost(cacheDirectory: cacheDirectory.map { URL(fileURLWithPath: $0) }, logger: makeLogger())
        // Each plugin version is first exercised in a child process (cached); crashing ones are quarantined.
        ProbeGate.standard(cacheDirectory: ProbeGate.defaultCacheDirectory(imagesDirectory: cacheDirectory.map { URL(fileURLWithPath: $0) }))?
            .install(on: host)
        host.loadPlugins(in: folders)
        return host
    }

    /// Writes one diagnostic line per missing folder, plugin warning and (unless the command lists them itself)
    /// rejected plugin to stderr.
    func reportProblems(of host: PluginHost, includingRejections: Bool = true) {
        for folder in host.missingFolders {
            Diagnostics.print("hubhost: plugin folder \(folder.path) does not exist")
        }
        for record in host.plugins {
            if let reason = record.reason {
                if includingRejections { Diagnostics.print("hubhost: \(record.state.name) \(reason)") }
                continue
            }
            for warning in record.warnings { Diagnostics.print("hubhost: \(record.file.lastPathComponent): \(warning)") }
        }
    }
}

/// Diagnostics go to stderr, so stdout stays parseable. Each is one line: control characters that untrusted
/// text brought in are escaped and the line is bounded (`TerminalText.line`), so a view cannot forge messages.
enum Diagnostics {
    static func print(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.line(line) + "\n").utf8))
    }
}
