import Foundation
import HubTestKit

/// Shared helpers of the dev-loop tests: temp folders, the package root, built artifacts, C fixtures.
enum TestSupport {
    /// This file is Tests/HubDevTests/Support/TestSupport.swift.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = packageRoot.appendingPathComponent("Tests/HubDevTests/Fixtures")
    static let header = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")

    /// The build's bin directory: the running test binary lives in it (or in a bundle inside it).
    static var binDirectory: URL {
        var dir = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
        ).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("hubhost").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }

    static var hubhost: URL { binDirectory.appendingPathComponent("hubhost") }

    /// Builds h1's Swift fixture plugin (Tests/HubHostTests/Fixtures/SwiftFixturePlugin.swift: namespace
    /// "swiftfixture", component "label" drawing "swift label VERSION") with `version`, then renames it over
    /// `destination`.
    static func installSwiftPlugin(version: String, at destination: URL) throws {
        let work = temporaryDirectory("swiftfixture")
        defer { try? FileManager.default.removeItem(at: work) }
        try "module CHubPlugin {\n  header \"\(header.appendingPathComponent("hub_plugin.h").path)\"\n  export *\n}\n"
            .write(to: work.appendingPathComponent("module.modulemap"), atomically: true, encoding: .utf8)
        let template = try String(
            contentsOf: packageRoot.appendingPathComponent("Tests/HubHostTests/Fixtures/SwiftFixturePlugin.swift"),
            encoding: .utf8)
        let source = work.appendingPathComponent("Plugin.swift")
        try template.replacingOccurrences(of: "__FIXTURE_VERSION__", with: version).write(
            to: source, atomically: true, encoding: .utf8)
        let output = work.appendingPathComponent("out.so")
        try run(
            "/usr/bin/env",
            [
                "swiftc", "-emit-library", "-parse-as-library",
                "-module-name", "DevSwift" + version.filter { $0.isNumber }, "-I", work.path,
                source.path, "-o", output.path,
            ])
        guard rename(output.path, destination.path) == 0 else { throw TestFailure("rename failed") }
    }

    /// Runs a tool to completion (stdout and stderr read together); returns its exit status, stdout and stderr.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], expectSuccess: Bool = true)
        throws -> (status: Int32, stdout: String, stderr: String)
    {
        let result = try ProcessRunner.run(URL(fileURLWithPath: tool), arguments)
        if expectSuccess && result.status != 0 {
            throw TestFailure(
                "\(arguments.prefix(2).joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return (result.status, result.stdout, result.stderr)
    }

    /// A new folder, removed when the test process exits (tests here kill workers, which cannot clean up).
    static func temporaryDirectory(_ label: String = "hubdev") -> URL { ProcessScratch.folder(label) }

    /// Compiles a fixture C plugin into `output` with extra `-D` definitions. Returns the compiler's complaint on
    /// failure.
    @discardableResult
    static func compilePlugin(_ source: String, to output: URL, defines: [String] = []) throws -> URL {
        try ProcessRunner.tool(
            "cc",
            ["-shared", "-fPIC", "-O1", "-I", header.path] + defines.map { "-D\($0)" }
                + ["-o", output.path, fixtures.appendingPathComponent(source).path])
        return output
    }

    /// Builds into a temp file, then renames over `destination`: a new inode, as `install` and linkers do.
    static func installPlugin(_ source: String, at destination: URL, defines: [String] = []) throws {
        let staging = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString.prefix(6)).tmp")
        try compilePlugin(source, to: staging, defines: defines)
        guard rename(staging.path, destination.path) == 0 else { throw TestFailure("rename failed") }
    }

    /// Polls `condition` until it holds or `timeout` passes (waiting for another process, not timing it).
    static func waitUntil(timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects what a callback delivers on another thread.
final class Collector<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T] = []
    func append(_ items: [T]) {
        lock.lock()
        storage += items
        lock.unlock()
    }
    var items: [T] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
