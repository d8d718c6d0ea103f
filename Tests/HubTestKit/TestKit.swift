import Foundation

/// Paths every test target needs: the package, the plugin header, the build's bin folder and the hubhost in it.
public enum TestPaths {
    /// The package root (this file is Tests/HubTestKit/TestKit.swift).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    public static let includeDirectory = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")
    public static let examples = packageRoot.appendingPathComponent("examples")
    /// The build's bin folder: the test binary's own folder.
    public static let binDirectory = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ).deletingLastPathComponent()
    /// The `hubhost` executable the tests run.
    public static let hubhost = binDirectory.appendingPathComponent("hubhost")
}

/// What a finished child process said.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

public struct TestKitFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a child process to completion, reading stdout and stderr at the same time, so a child that fills one pipe
/// while the test reads the other can never deadlock.
public enum ProcessRunner {
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: URL? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let collected = Collected()
        let reader = Thread { collected.stdout = out.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while collected.stdout == nil { Thread.sleep(forTimeInterval: 0.001) }
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: collected.stdout ?? Data(), as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Runs `hubhost` with `arguments`.
    public static func hubhost(
        _ arguments: [String], environment: [String: String]? = nil, currentDirectory: URL? = nil
    ) throws -> ProcessResult {
        try run(TestPaths.hubhost, arguments, environment: environment, currentDirectory: currentDirectory)
    }

    /// Copies an executable that a test then runs, by `cp` in a child: a copy written by this process could have its
    /// write descriptor inherited by a child another test spawns meanwhile, and running it then fails with "Text
    /// file busy" (ETXTBSY).
    public static func copyExecutable(_ source: URL, to destination: URL) throws {
        try tool("cp", [source.path, destination.path])
    }

    /// Runs a tool from PATH and fails with its output when it does not exit 0.
    @discardableResult
    public static func tool(_ name: String, _ arguments: [String], in directory: URL? = nil) throws -> ProcessResult {
        let result = try run(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, currentDirectory: directory)
        guard result.status == 0 else {
            throw TestKitFailure(
                "\(name) \(arguments.joined(separator: " ")) failed (\(result.status)):\n\(result.stderr)")
        }
        return result
    }

    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?
        var stdout: Data? {
            get { lock.withLock { data } }
            set { lock.withLock { data = newValue } }
        }
    }
}

/// Compiles C plugins from test fixtures at test time, against the plugin header.
public enum FixtureCompiler {
    /// `cc -shared -fPIC -I <include> <flags> source -o output`, written to a temporary name and renamed, as a
    /// build tool would (a watcher never sees half a file).
    public static func compile(_ source: URL, to output: URL, flags: [String] = []) throws {
        let temporary = output.deletingLastPathComponent()
            .appendingPathComponent(".\(output.lastPathComponent).\(UUID().uuidString.prefix(8))")
        try ProcessRunner.tool(
            "cc",
            ["-shared", "-fPIC", "-I", TestPaths.includeDirectory.path] + flags + [source.path, "-o", temporary.path])
        guard rename(temporary.path, output.path) == 0 else { throw TestKitFailure("rename to \(output.path) failed") }
    }
}

/// Folders for the whole test process (fixtures and caches shared by a suite, folders of tests whose workers are
/// killed): all under one folder of this process, removed when it exits, so a test that cannot clean up after
/// itself leaves nothing in the temporary folder.
public enum ProcessScratch {
    public static let root: URL = {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ProcessScratch.root) }
        return root
    }()

    /// A new folder under `root`, named after `label`.
    public static func folder(_ label: String) -> URL {
        let folder = root.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// This process's environment with `TMPDIR` at a new, empty folder under `parent`: a child run with it puts its
/// temporary files there, so a test can check it left none. Returns the environment and the folder.
public func environmentWithOwnTemporaryFolder(under parent: URL) throws -> (environment: [String: String], folder: URL)
{
    let folder = parent.appendingPathComponent("tmp")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var environment = ProcessInfo.processInfo.environment
    environment["TMPDIR"] = folder.path
    return (environment, folder)
}

/// A fresh temporary folder, removed when the value goes away.
public final class TemporaryFolder {
    public let url: URL

    public init(_ label: String = "hubhost-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func appending(_ path: String) -> URL { url.appendingPathComponent(path) }
}
