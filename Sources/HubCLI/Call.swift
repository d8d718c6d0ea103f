import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost

/// `hubhost call PLUGIN SYMBOL --signature SIG ARGS…`: calls a plugin export through libffi.
struct Call: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call a C function a plugin exports (through libffi) and print its result.",
        discussion: """
            The plugin is loaded from a private copy without calling its init. SIG is "(types)->type" with types \
            i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 str ptr, and void as a return type, e.g. "(str,i32)->ptr". \
            Integers may be decimal or 0x-hex, ptr arguments an address or NULL; null passes NULL for a str or a \
            ptr, as hubhost inject reads it. A str result is printed as a \
            quoted string, a ptr as an address.

            \(ExitStatus.help([
                (.ok, "called"),
                (.problems, "the call was refused (bad signature, missing symbol, wrong argument count or type)"),
                (.notFound, "the plugin file does not exist"),
                (.pluginFault, "the function crashed, hung or exited (reported; nothing is quarantined)"),
            ]))
            """
    )

    @Argument(help: "The plugin file (.so).") var plugin: String
    @Argument(help: "The exported function.") var symbol: String
    @Option(name: .customLong("signature"), help: ArgumentHelp("The function's signature.", valueName: "sig"))
    var signature: String
    @Argument(parsing: .allUnrecognized, help: "The arguments, one word each (negative numbers allowed).")
    var arguments: [String] = []

    @Flag(
        name: .customLong("allow-unsafe-permissions"),
        help: "Load the plugin even when others can write it or its folder (every command refuses it otherwise).")
    var allowUnsafePermissions = false

    @OptionGroup var isolation: IsolationOptions

    func run() throws {
        // The call runs in a worker: a wrong signature or a crashing function is reported; hubhost lives.
        if isolation.supervises {
            var supervisor = OneShotSupervisor(
                isolation: isolation, plugins: try PluginOptions.parse([]), viewFile: "")
            supervisor.recovers = false
            supervisor.quarantinesWithoutRecovering = false
            supervisor.context =
                "the call was \(symbol) \(signature) with \(arguments.isEmpty ? "no arguments" : arguments.joined(separator: " "))"
            supervisor.run()
        }
        StandardOutput.divertPluginOutput()  // what the called function prints goes to stderr
        // A file that is not there is a name that names nothing (3), as for every command.
        guard FileManager.default.fileExists(atPath: plugin) else {
            Diagnostics.print("hubhost call: \(TerminalText.escaped(plugin)): no such file")
            throw ExitCode(.notFound)
        }
        do {
            let result = try ExportCaller.call(
                plugin: URL(fileURLWithPath: plugin),
                trust: PluginTrust(allowUnsafePermissions: allowUnsafePermissions),
                symbol: symbol,
                signature: signature, arguments: arguments.first == "--" ? Array(arguments.dropFirst()) : arguments)
            StandardOutput.print(result.description)
        } catch {
            Diagnostics.print("hubhost call: \(ErrorText.describe(error))")
            throw ExitCode(.problems)
        }
    }
}
