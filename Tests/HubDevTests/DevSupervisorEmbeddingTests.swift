import Foundation
import HubPreview
import Testing

/// A supervisor embedded in another program (the benchmarks do this) may be given `hubhost` rather than
/// `hubhost-dev` as its worker's executable: the worker must still be a worker, reporting frames to it, not a
/// second front end serving a page of its own.
@Suite("dev supervisor embedded", .serialized)
struct DevSupervisorEmbeddingTests {
    @Test func aWorkerStartedAsHubhostReportsItsFramesToTheSupervisor() throws {
        let root = TestSupport.temporaryDirectory("hubdev-embed")
        defer { try? FileManager.default.removeItem(at: root) }
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let view = root.appendingPathComponent("view.json")
        try Data(#"{"body": [{"id": "a", "component": {"id": "nowhere:row"}, "text": {"title": "Embedded"}}]}"#.utf8)
            .write(to: view)
        var options = DevSupervisor.Options(
            arguments: [
                "dev", view.path, "--plugins", plugins.path, "--plugin-cache",
                root.appendingPathComponent("cache").path,
            ], viewFile: view)
        options.executable = TestSupport.hubhost.path
        let supervisor = DevSupervisor(options: options, server: PreviewServer(port: 0))
        let problems = Collector<String>()
        let frames = Collector<String>()
        supervisor.printLine = { _ in }
        supervisor.printProblem = { problems.append([$0]) }
        supervisor.onFrame = { frame, _ in frames.append([frame.html]) }
        supervisor.start(firstFrameTimeout: 60)
        defer { supervisor.stop() }
        let drawn = TestSupport.waitUntil(timeout: 60) { frames.items.contains { $0.contains("Embedded") } }
        #expect(drawn, "no frame with the view reached the supervisor; problems: \(problems.items)")
        #expect(!problems.items.contains { $0.contains("cannot serve") || $0.contains("exited with status") })
    }
}
