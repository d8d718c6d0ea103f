import Dispatch
import Foundation
import HubCLI
import HubHost
import HubPreview

/// Runs `hubhost dev` once its command line is decided: the worker's dev loop, the supervisor with the preview
/// server, or (`--in-process`) everything in this process.
enum PreviewFrontEnd {
    static func serve(_ launch: DevLaunch) throws -> Never {
        var options = launch.options
        if CallRecorder.isWorker {
            // The worker: the dev loop, reporting to the supervisor that started it.
            options.quarantinedVersions = WorkerEnvironment.quarantined
            try DevWorker().run(
                options: options, logger: launch.makeLogger(), html: launch.html, gallery: launch.gallery,
                started: { loop in launch.reportProblems(loop.host) })
        }
        let server = PreviewServer(bindAddress: launch.bindAddress, port: launch.port)
        server.exportName =
            launch.options.gallery ? "gallery" : launch.options.viewFile.deletingPathExtension().lastPathComponent
        if launch.supervises {
            // The supervisor: the preview server and what must survive a plugin fault; plugins run in a worker.
            var supervision = DevSupervisor.Options(
                arguments: Array(CommandLine.arguments.dropFirst()),
                viewFile: options.gallery ? nil : options.viewFile)
            supervision.callTimeout = launch.callTimeout
            supervision.endsLeftoverProcesses = true  // this process starts nothing but its workers
            let probeCache = launch.probeCacheDirectory
            supervision.persist = { record in ProbeGate.persist(record, cacheDirectory: probeCache) }
            let supervisor = DevSupervisor(options: supervision, server: server)
            supervisor.start()
            listen(server, launch)
            // The supervisor runs no plugin code: the main queue may move to another thread.
            withExtendedLifetime(supervisor) { dispatchMain() }
        }

        // --in-process: everything here, for a debugger.
        let loop = DevLoop(options: options, logger: launch.makeLogger())
        let preview = DevPreview(loop: loop, server: server, html: launch.html, gallery: launch.gallery)
        try loop.start()
        launch.reportProblems(loop.host)
        listen(server, launch)
        // The main queue runs on the main thread (not dispatchMain(), which ends it on Linux): the thread the
        // plugins were initialised on.
        withExtendedLifetime((loop, preview)) { MainThreadRunLoop.run() }
    }

    /// Starts the preview server and prints the serving line with its port; a port that cannot be used exits 2.
    private static func listen(_ server: PreviewServer, _ launch: DevLaunch) {
        let servingLine = launch.servingLine
        let cannotServe = launch.cannotServe
        Task {
            do {
                let port = try await server.start()
                FileHandle.standardOutput.write(Data((servingLine(port) + "\n").utf8))
            } catch {
                cannotServe(error)
            }
        }
    }
}
