import Foundation
import HubTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// hubhost on file systems as they really are, end to end on the real executable: a working directory that is
/// gone, a cache folder that is not the user's, output that cannot be written, one folder reached by two paths,
/// symlinked plugins, names as long as a name may be.
@Suite("File systems (process)", .serialized)
struct FileSystemCLITests {
    typealias CLI = ListNamespacesCLITests
    typealias Folder = PluginTrustCLITests.Folder

    /// Foundation takes relative paths from `/` when the working directory has no name: `-o g.html` wrote `/g.html`.
    @Test func aWorkingDirectoryThatIsGoneIsSaidAndNothingIsWrittenElsewhere() throws {
        let folder = try Folder()
        let gone = folder.root.appendingPathComponent("gone")
        try FileManager.default.createDirectory(at: gone, withIntermediateDirectories: true)
        let name = "hubhost-gone-\(getpid()).json"
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "cd \"$1\" && rmdir \"$1\" && exec \"$2\" list-namespaces --plugins \"$3\" --json > \"$4\"",
                "sh", gone.path, TestPaths.hubhost.path, folder.plugins.path,
                folder.root.appendingPathComponent("out.json").path,
            ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("the working directory cannot be named (it was deleted)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/" + name))
    }

    /// Copies in the cache are loaded as plugin code: a folder another user (or anyone) can write is not used.
    @Test func aCacheFolderThatIsNotTheUsersOwnIsNotUsed() throws {
        let folder = try Folder()
        let shared = folder.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        chmod(shared.path, 0o1777)
        let open = try CLI.run(["list-namespaces", "--plugins", folder.plugins.path, "--plugin-cache", shared.path])
        #expect(open.status == 0 && open.stdout.contains("com.example.fixture"), "\(open.stdout)\(open.stderr)")
        #expect(open.stderr.contains("its group or others may write it"), "\(open.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared.path).isEmpty, "nothing written there")
        if geteuid() == 0 {
            chmod(shared.path, 0o755)
            chown(shared.path, 65534, 65534)
            let theirs = try CLI.run(
                ["list-namespaces", "--plugins", folder.plugins.path, "--plugin-cache", shared.path])
            #expect(theirs.stderr.contains("it belongs to another user (uid 65534)"), "\(theirs.stderr)")
        }
    }

    /// Output printed to stdout that never arrived is not "done".
    @Test func outputThatCannotBeWrittenIsAFailure() throws {
        let folder = try Folder()
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "exec \"$1\" list-namespaces --json --plugins \"$2\" --plugin-cache \"$3\" > /dev/full", "sh",
                TestPaths.hubhost.path, folder.plugins.path, folder.cache.path,
            ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write -: No space left on device"), "\(result.stderr)")
    }

    /// One folder reached by two paths (a symlink to it), and a plugin file reached through a symlink.
    @Test func aFolderReachedTwiceLoadsItsPluginsOnceAndSymlinkedPluginsWork() throws {
        let folder = try Folder()
        let link = folder.root.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder.plugins)
        let twice = try CLI.run([
            "list-namespaces", "--plugins", folder.plugins.path, "--plugins", link.path, "--plugin-cache",
            folder.cache.path,
        ])
        #expect(twice.status == 0, "\(twice.stdout)\(twice.stderr)")
        #expect(!twice.stdout.contains("rejected"), "\(twice.stdout)")
        // `call` loads the file a symlink names (it copied the link, and dlopen found nothing).
        let linkedPlugin = folder.root.appendingPathComponent("libgood.so")
        try FileManager.default.createSymbolicLink(at: linkedPlugin, withDestinationURL: folder.plugin)
        let call = try CLI.run(["call", linkedPlugin.path, "hub_plugin_entry", "--signature", "()->ptr"])
        #expect(call.status == 0 && call.stdout.hasPrefix("0x"), "\(call.stdout)\(call.stderr)")
    }

    /// `-o` takes any name a file may have (255 bytes), and a symlink to nothing yet makes its target, as `>` does.
    @Test func longNamesAndDanglingLinksAreWritten() throws {
        let folder = try Folder()
        let long = folder.root.appendingPathComponent(String(repeating: "n", count: 250) + ".json")
        let target = folder.root.appendingPathComponent("target.json")
        let dangling = folder.root.appendingPathComponent("dangling.json")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: target)
        for output in [long, dangling] {
            let result = try CLI.run([
                "render", "--plugins", folder.plugins.path, "--plugin-cache", folder.cache.path, "-o", output.path,
                TestPaths.packageRoot.appendingPathComponent("examples/fallback.json").path,
            ])
            #expect(result.status <= 1, "\(result.stderr)")
            #expect(!result.stderr.contains("cannot write"), "\(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: long.path))
        #expect(FileManager.default.fileExists(atPath: target.path), "the link's target is made")
    }

    /// A view too tall for a PNG is refused once its size is known, before the drawing is made, and the file the
    /// user had is kept.
    @Test func aViewTooTallForAPNGIsRefusedBeforeItIsDrawn() throws {
        let folder = try Folder()
        let output = folder.root.appendingPathComponent("large.png")
        try Data("kept".utf8).write(to: output)
        let result = try CLI.run([
            "render", "--plugins", folder.plugins.path, "--plugin-cache", folder.cache.path, "--format", "png",
            "-o", output.path, TestPaths.examples.appendingPathComponent("large.json").path,
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains("larger than a PNG hubhost draws (32768) (--format svg draws any size)"),
            "\(result.stderr)")
        #expect(try Data(contentsOf: output) == Data("kept".utf8))
    }
}
