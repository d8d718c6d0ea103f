import Foundation
import HubTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Which plugin files hubhost agrees to load, end to end on the real executable: permissions and owners (as ssh
/// and sudo check them), --trusted-hashes, safe mode, setuid, and a cache folder that cannot be written.
@Suite("Plugin trust (process)", .serialized)
struct PluginTrustCLITests {
    typealias CLI = ListNamespacesCLITests

    final class Folder {
        let root: URL
        var plugins: URL { root.appendingPathComponent("plugins") }
        var plugin: URL { plugins.appendingPathComponent("libgood.so") }
        var cache: URL { root.appendingPathComponent("cache") }
        init() throws { root = try CLI.folder(good: true, bad: false) }
        deinit { try? FileManager.default.removeItem(at: root) }

        func list(_ extra: [String] = [], environment: [String: String]? = nil) throws -> CLI.Result {
            try CLI.run(
                ["list-namespaces", "--plugins", plugins.path, "--plugin-cache", cache.path] + extra,
                environment: environment)
        }
    }

    @Test func aPluginOthersCanWriteIsRefusedUnlessAllowed() throws {
        let folder = try Folder()
        chmod(folder.plugin.path, 0o757)
        let refused = try folder.list()
        #expect(refused.status == 1)
        #expect(
            refused.stdout.contains(
                "libgood.so: refused: the file is writable by others (mode 0757); chmod o-w it, "
                    + "or pass --allow-unsafe-permissions"), "\(refused.stdout)")
        #expect(!refused.stdout.contains("com.example.fixture"))
        let allowed = try folder.list(["--allow-unsafe-permissions"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.contains("com.example.fixture"))

        chmod(folder.plugin.path, 0o775)
        #expect(try folder.list().stdout.contains("is writable by its group (mode 0775)"))
        chmod(folder.plugin.path, 0o755)
        chmod(folder.plugins.path, 0o777)
        let loose = try folder.list()
        #expect(loose.stdout.contains("its folder \(folder.plugins.path) is writable by others (mode 0777)"))
        chmod(folder.plugins.path, 0o755)
        #expect(try folder.list().status == 0)
    }

    /// Through a symbolic link the file is the target's: a folder others can write, where the target is, is
    /// refused as the plugin folder itself would be; a link to a device or a folder is not a plugin.
    @Test func aLinkIsJudgedByWhereItLeads() throws {
        let folder = try Folder()
        let loose = folder.root.appendingPathComponent("loose")
        try FileManager.default.createDirectory(at: loose, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.plugin, to: loose.appendingPathComponent("libgood.so"))
        chmod(loose.path, 0o777)
        try FileManager.default.createSymbolicLink(
            atPath: folder.plugin.path, withDestinationPath: "../loose/libgood.so")
        try FileManager.default.createSymbolicLink(
            atPath: folder.plugins.appendingPathComponent("libzero.so").path, withDestinationPath: "/dev/zero")
        let refused = try folder.list()
        #expect(
            refused.stdout.contains(
                "libgood.so: refused: the folder \(loose.path) it links into is writable by others"),
            "\(refused.stdout)")
        #expect(refused.stdout.contains("libzero.so: refused: not a regular file"), "\(refused.stdout)")
        chmod(loose.path, 0o755)
        #expect(try folder.list().stdout.contains("com.example.fixture"))
    }

    @Test(.enabled(if: geteuid() == 0, "changing a file's owner needs root (CI runs as root)"))
    func aPluginAnotherUserOwnsIsRefused() throws {
        let folder = try Folder()
        #expect(chown(folder.plugin.path, 65534, 65534) == 0)
        let refused = try folder.list()
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("the file is owned by uid 65534, not by you (uid 0) or root; chown it"))
    }

    @Test func trustedHashesLoadOnlyListedPlugins() throws {
        let folder = try Folder()
        let other = folder.plugins.appendingPathComponent("libother.so")
        try CLI.compile(to: other, defines: ["-DFIXTURE_NAMESPACE=\"other\"", "-DFIXTURE_ID=\"com.example.other\""])
        let digest = try Self.sha256(folder.plugin)
        let list = folder.root.appendingPathComponent("trusted.txt")
        try "# reviewed builds\n\n\(digest)  libgood.so\n".write(to: list, atomically: true, encoding: .utf8)
        let result = try folder.list(["--trusted-hashes", list.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("com.example.fixture"))
        let otherDigest = try Self.sha256(other)
        #expect(result.stdout.contains("libother.so: refused: SHA-256 \(otherDigest) is not in \(list.path)"))

        try "\(digest)  libgood.so\nnot-a-digest  libother.so\n".write(to: list, atomically: true, encoding: .utf8)
        let malformed = try folder.list(["--trusted-hashes", list.path])
        #expect(malformed.status == 64)
        #expect(malformed.stderr.contains("\(list.path):2: expected a SHA-256 digest"))
    }

    @Test func safeModeLoadsNothing() throws {
        let folder = try Folder()
        let flag = try folder.list(["--safe-mode"])
        #expect(flag.status == 0)
        #expect(flag.stderr.contains("safe mode: no plugins are loaded"))
        #expect(!flag.stdout.contains("fixture"))
        var environment = ProcessInfo.processInfo.environment
        environment["HUBHOST_SAFE_MODE"] = "1"
        let variable = try folder.list(environment: environment)
        #expect(variable.status == 0 && !variable.stdout.contains("fixture"))
    }

    @Test func anUnwritableCacheIsReportedOnceAndPluginsStillLoad() throws {
        let folder = try Folder()
        // The run's temporary cache folder goes when it ends.
        let (environment, temporary) = try environmentWithOwnTemporaryFolder(under: folder.root)
        let result = try CLI.run(
            ["list-namespaces", "--plugins", folder.plugins.path, "--plugin-cache", "/dev/null/cache"],
            environment: environment)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("com.example.fixture"))
        #expect(
            result.stderr.components(separatedBy: "cache folder /dev/null/cache cannot be used (Not a directory)")
                .count == 2, "once: \(result.stderr)")
        #expect(!result.stdout.contains("quarantined"))
    }

    /// A setuid copy of hubhost run by an unprivileged user ignores every environment override.
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv (CI runs as root)"))
    func underSetuidTheEnvironmentChoosesNothing() throws {
        let folder = try Folder()
        let work = folder.root.appendingPathComponent("setuid")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let copy = work.appendingPathComponent("hubhost")
        try ProcessRunner.copyExecutable(CLI.hubhost, to: copy)
        chmod(copy.path, 0o4755)
        chmod(folder.root.path, 0o755)
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=65534", "--regid=65534", "--clear-groups", copy.path, "list-namespaces"],
            environment: [
                "HUBHOST_PLUGIN_PATH": folder.plugins.path, "HUBHOST_EXECUTABLE": "/bin/false",
                "XDG_CACHE_HOME": folder.root.appendingPathComponent("evil-cache").path,
            ], currentDirectory: work)
        let (stdout, stderr) = (result.stdout, result.stderr)
        // ./plugins of the working folder, not the environment's folder: nothing found.
        #expect(result.status == 2, "\(stdout)\(stderr)")
        #expect(stderr.contains("no plugin files (*.so) in \(work.path)/plugins"))
        #expect(!stdout.contains("fixture"))
        #expect(!FileManager.default.fileExists(atPath: folder.root.appendingPathComponent("evil-cache").path))
    }

    static func sha256(_ file: URL) throws -> String {
        String(try ProcessRunner.tool("sha256sum", [file.path]).stdout.prefix(64))
    }
}

extension ListNamespacesCLITests {
    /// Compiles the HubHost test fixture plugin to `output` with extra `-D` flags.
    static func compile(to output: URL, defines: [String]) throws {
        try FixtureCompiler.compile(
            TestPaths.packageRoot.appendingPathComponent("Tests/HubHostTests/Fixtures/fixture_plugin.c"), to: output,
            flags: defines)
    }
}
