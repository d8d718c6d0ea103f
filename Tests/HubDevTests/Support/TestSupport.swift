import Foundation

/// Shared helpers of the dev-loop tests: temp folders, the package root, built artifacts, C fixtures.
enum TestSupport {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = packageRoot.appendingPathComponent("Tests/HubDevTests/Fixtures")
    static let header = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")

    /// The build's bin directory: the running test binary lives in it (or in a bundle inside it).
    static var binDirectory: URL {
        var dir = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("hubhost").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }

    static var hubhost: URL { binDirectory.appendingPathComponent("hubhost") }

    static func temporaryDirectory(_ label: String = "hubdev") -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Compiles a fixture C plugin into `output` with extra `-D` definitions. Returns the compiler's complaint on
    /// failure.
    @discardableResult
    static func compilePlugin(_ source: String, to output: URL, defines: [String] = []) throws -> URL {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["cc", "-shared", "-fPIC", "-O1", "-I", header.path]
            + defines.map { "-D\($0)" }
            + ["-o", output.path, fixtures.appendingPathComponent(source).path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("cc \(source) failed: \(String(decoding: message, as: UTF8.self))")
        }
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
    func append(_ items: [T]) { lock.lock(); storage += items; lock.unlock() }
    var items: [T] { lock.lock(); defer { lock.unlock() }; return storage }
}
