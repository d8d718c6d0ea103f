import ArgumentParser
import CHubSystem
import FoundationEssentials
import HubCore
import HubHost
import HubRender

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
        StandardOutput.fillClosedStandardDescriptors()
        // A launcher may have blocked them (test runners do), and the mask is inherited: hubhost ends when asked
        // to, as its workers and probes do.
        csystem_unblock_stop_signals()
        // Ctrl-Z stops the workers and probes (in process groups of their own) with hubhost.
        csystem_follow_job_control()
        // Before any plugin code can change them: the files the user names are found and made as the user would.
        if let problem = ProcessStart.capture() ?? argumentThatIsNotUTF8() {
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
        // A probe that has not answered for a while is said as it happens (plugins that hang took their whole
        // budget each, in silence). One line, from the thread that waits for it.
        ProbeRunner.slowProbeNotice = { StandardError.writeLine("hubhost: " + TerminalText.line($0)) }
        rejectHelpForUnknownCommand()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
        let status = finishedStatus(ExitStatus.ok.rawValue)
        if status != ExitStatus.ok.rawValue { exit(withError: ExitCode(status)) }
    }

    /// Arguments reach Swift as text, with bytes that are not UTF-8 replaced: a file named so could then not be
    /// found ("No such file or directory" for a file that is there). Said at once instead.
    static func argumentThatIsNotUTF8() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            let shown = PathText.shownBytes(bytes)
            return "argument \(index), \"\(shown)\", is not valid UTF-8: hubhost names files in UTF-8 (rename it; "
                + "`convmv -f latin1 -t utf8` renames a folder's files)"
        }
        return nil
    }

    /// The status of a command that finished with `status`: not done (2) when what it printed never arrived (as
    /// for a file that cannot be written; a reader that went away ends the process with SIGPIPE here), and done with
    /// problems (1) when a plugin's absurd values (NaN, out of range) were replaced and said on stderr, whichever
    /// command drew them (a golden or a gallery of a broken drawing must not pass as clean).
    static func finishedStatus(_ status: Int32) -> Int32 {
        if let failure = StandardOutput.writeFailure {
            if StandardOutput.readerWentAway {
                signal(SIGPIPE, SIG_DFL)
                kill(getpid(), SIGPIPE)
            }
            Diagnostics.print("hubhost: cannot write -: \(failure)")
            return ExitStatus.failed.rawValue
        }
        if (BoundaryValues.replacedAny || ImageResolver.overBudgetSeen || ImageResolver.unsafeSVGSeen)
            && status == ExitStatus.ok.rawValue
        {
            return ExitStatus.problems.rawValue
        }
        return status
    }

    /// Ends a command that ran plugin code in this process once its output is out, without running exit handlers:
    /// the plugins' atexit handlers and destructors are not the command's work (a listing whose plugin crashed at
    /// exit ended every run with a crash dump, after printing a listing that called it active).
    static func endWithoutPluginExitCode(_ status: Int32) -> Never {
        let final = finishedStatus(status)
        // hubhost's own exit work, which `_exit` would skip with the plugins'.
        CacheFolder.removeTemporaryFolders()
        CallRecorder.noteExitWithoutHandlers()
        fflush(nil)
        ProcessStart.restoreStandardDescriptors()
        _exit(final)
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
