import Foundation
import HubTestKit
import Testing

/// Builds test plugins at test time from the C and Swift sources in `Fixtures/`, into a fresh temporary folder.
struct FixtureBuilder {
    /// The package root, from this file's path (Tests/HubHostTests/Support/Fixtures.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let includeDir = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")
    static let fixtures = packageRoot.appendingPathComponent("Tests/HubHostTests/Fixtures")
    /// The build's bin dir: the directory of the running test binary.
    static let binDir = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ).deletingLastPathComponent()

    /// A fresh folder for one test's plugins, and one for the host's private copies.
    let root: URL
    var plugins: URL { root.appendingPathComponent("plugins") }
    var cache: URL { root.appendingPathComponent("cache") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("plugins"), withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }

    /// Compiles `Fixtures/fixture_plugin.c` with `defines` into `plugins/<name>` and returns its URL.
    @discardableResult
    func cPlugin(
        _ name: String, _ defines: [String: String] = [:], extraFlags: [String] = [],
        into folder: URL? = nil
    ) throws -> URL {
        let output = (folder ?? plugins).appendingPathComponent(name)
        let defineFlags = defines.sorted { $0.key < $1.key }.map { "-D\($0.key)=\($0.value)" }
        try Self.run(
            "/usr/bin/env",
            ["cc", "-shared", "-fPIC", "-I", Self.includeDir.path] + defineFlags + extraFlags
                + [Self.fixtures.appendingPathComponent("fixture_plugin.c").path, "-o", output.path])
        return output
    }

    /// Writes `bytes` as `plugins/<name>`.
    @discardableResult
    func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = plugins.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// Compiles the Swift fixture plugin with `version` into `path` (written to a temporary name, then renamed,
    /// as a build tool would).
    func swiftPlugin(version: String, at path: URL) throws {
        let work = root.appendingPathComponent("swift-\(UUID().uuidString)")
        let moduleMaps = work.appendingPathComponent("modulemap")
        try FileManager.default.createDirectory(at: moduleMaps, withIntermediateDirectories: true)
        try """
        module CHubPlugin {
          header "\(Self.includeDir.appendingPathComponent("hub_plugin.h").path)"
          export *
        }
        """.write(to: moduleMaps.appendingPathComponent("module.modulemap"), atomically: true, encoding: .utf8)
        let template = try String(
            contentsOf: Self.fixtures.appendingPathComponent("SwiftFixturePlugin.swift"), encoding: .utf8)
        let source = work.appendingPathComponent("Plugin.swift")
        try template.replacingOccurrences(of: "__FIXTURE_VERSION__", with: version)
            .write(to: source, atomically: true, encoding: .utf8)
        let temporary = work.appendingPathComponent("out.so")
        let module = "SwiftFixture" + version.filter { $0.isLetter || $0.isNumber }
        try Self.run(
            "/usr/bin/env",
            [
                "swiftc", "-emit-library", "-parse-as-library", "-module-name", module,
                "-I", moduleMaps.path, source.path, "-o", temporary.path,
            ], in: work)
        guard rename(temporary.path, path.path) == 0 else { throw FixtureError.failed("rename to \(path.path)") }
    }

    enum FixtureError: Error, CustomStringConvertible {
        case failed(String)
        var description: String {
            if case .failed(let s) = self { return s }
            return ""
        }
    }

    /// Runs a tool, throwing its stderr when it fails.
    static func run(_ tool: String, _ arguments: [String], in directory: URL? = nil) throws {
        let result = try ProcessRunner.run(URL(fileURLWithPath: tool), arguments, currentDirectory: directory)
        guard result.status == 0 else {
            throw FixtureError.failed("\(arguments.prefix(3).joined(separator: " ")) failed: \(result.stderr)")
        }
    }

    /// True when any mapping in this process is `path`. Read with stdio to EOF: procfs files report size 0,
    /// and size-trusting readers drop later mappings.
    static func isMapped(_ path: String) -> Bool {
        guard let file = fopen("/proc/self/maps", "r") else { return false }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!).trimmingCharacters(in: .newlines)
            if text.hasSuffix(" " + path) || text.hasSuffix(" " + path + " (deleted)") { return true }
        }
        return false
    }
}
