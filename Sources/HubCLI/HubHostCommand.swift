import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// The `hubhost` command: every subcommand, shared by the two executables. `hubhost` is everything but the live
/// preview's HTTP server; `hubhost-dev` adds it (see `DevFrontEnd`), so the commands people run most do not pay
/// for loading an HTTP stack they never use.
public struct HubHostCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hubhost",
        abstract: "A headless Hub Framework host: loads component plugins (.so) and works with their components.",
        discussion: """
            Plugin folders: every *.so in each --plugins DIR (repeatable), else in the colon-separated folders of \
            HUBHOST_PLUGIN_PATH, else in ./plugins. Each command documents its exit codes; 64 always means a \
            usage error.
            """,
        version: HostVersion.description,
        // One line per command; keep the list sorted by how often it is used.
        subcommands: [
            ListNamespaces.self,
            Render.self,
            Events.self,
            Gallery.self,
            Snapshot.self,
            Validate.self,
            Dev.self,
            Probe.self,
            ListServices.self,
            Call.self,
            Inject.self,
        ]
    )

    public init() {}

    /// Parses the command line and runs the command. A worker (started by a supervising hubhost) first attaches
    /// the black box its supervisor reads, so every plugin call is noted there.
    public static func start() {
        // Before any plugin code can change them: the files the user names are found and made as the user would.
        if let problem = ProcessStart.capture() {
            Diagnostics.print("hubhost: \(problem)")
            Self.exit(withError: ExitCode(.failed))
        }
        // A `dev` worker started as `hubhost` (a supervisor given this executable) is `hubhost-dev`'s: it goes
        // there before attaching, which closes the black box's descriptor and clears its variable.
        if DevFrontEnd.serve == nil, CommandLine.arguments.dropFirst().first == "dev",
            HostEnvironment.variable(BlackBox.environmentKey) != nil
        {
            DevFrontEnd.replaceProcess()
        }
        CallRecorder.attachFromEnvironment()
        rejectHelpForUnknownCommand()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
        // Done, but what it printed never arrived: not done (exit 2, as a file that cannot be written is).
        if let failure = StandardOutput.writeFailure {
            if StandardOutput.readerWentAway {
                signal(SIGPIPE, SIG_DFL)
                kill(getpid(), SIGPIPE)
            }
            Diagnostics.print("hubhost: cannot write -: \(failure)")
            exit(withError: ExitCode(.failed))
        }
        // Done, with a plugin's absurd values (NaN, out of range) replaced and said on stderr: done with problems,
        // whichever command drew them (a golden or a gallery of a broken drawing must not pass as clean).
        if BoundaryValues.replacedAny { exit(withError: ExitCode(.problems)) }
    }

    /// `hubhost help bogus` would print the top-level help and exit 0 (the parser's `help` takes any name), so a
    /// script that checks a command exists would be told it does.
    static func rejectHelpForUnknownCommand() {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.first == "help", let name = arguments.dropFirst().first, !name.hasPrefix("-") else { return }
        let known = configuration.subcommands.map { $0._commandName }
        guard !known.contains(name) else { return }
        exit(withError: ValidationError("no command '\(name)'; the commands are \(known.joined(separator: ", "))"))
    }
}
