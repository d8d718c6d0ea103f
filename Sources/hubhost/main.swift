// hubhost: a headless Hub Framework component host that loads plugins (.so) through a versioned C ABI.
import ArgumentParser
import HubHost

/// The `hubhost` command. (A file named main.swift cannot use @main, so it is started at the bottom.)
struct HubHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
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
}

// A worker (started by a supervising hubhost) notes every plugin call in the black box its supervisor reads.
CallRecorder.attachFromEnvironment()
HubHostCommand.main()
