import CHubPlugin
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubHost

@Suite("Loader: discovery, validation, loading", .pluginCode)
struct LoaderTests {
    @Test("a good C plugin loads from a private copy and lists its namespace")
    func goodPluginLoads() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libgood.so", ["FIXTURE_VERSION": "\"2.3.4\""])
        let host = PluginHost(cacheDirectory: fx.cache)
        let records = host.loadPlugins(in: [fx.plugins])

        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.state == .active)
        #expect(record.reason == nil)
        #expect(record.id == "com.example.fixture")
        #expect(record.version == "2.3.4")
        #expect(record.abi == "1.1")
        #expect(record.isSwiftImage == false)
        #expect(record.namespaces.map(\.namespace) == ["fixture"])
        #expect(record.namespaces.first?.components == ["box", "label"])
        #expect(host.registry.entry(forNamespace: "fixture")?.owner == record.owner)
        // Loaded from a content-named private copy, which is what is mapped; the discovered file is not.
        let copy = try #require(record.privateCopy)
        #expect(copy.deletingLastPathComponent().standardizedFileURL == fx.cache.standardizedFileURL)
        #expect(copy.lastPathComponent.hasPrefix("libgood-"))
        #expect(copy.lastPathComponent.contains(String(record.contentHash!.prefix(16))))
        #expect(FixtureBuilder.isMapped(copy.path))
        #expect(!FixtureBuilder.isMapped(file.path))
        #expect(host.plugins.count == 1)
    }

    /// Each bad file is rejected with its own reason while the good one loads.
    @Test("bad files are rejected with their reasons; the rest load")
    func badFilesRejected() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let good = try fx.cPlugin("libgood.so")
        let goodBytes = [UInt8](try Data(contentsOf: good))
        try fx.file("libempty.so", [])
        try fx.file("libtext.so", Array("this is not a library\n".utf8))
        try fx.file("libtruncated.so", Array(goodBytes.prefix(40)))
        try fx.file("libcut.so", Array(goodBytes.prefix(3000)))
        var elf32 = goodBytes
        elf32[4] = 1  // EI_CLASS = ELFCLASS32: a crafted wrong-class header (the real one below when cc -m32 works)
        try fx.file("libclass32.so", elf32)
        try fx.cPlugin("libnoentry.so", ["FIXTURE_NO_ENTRY": "1", "FIXTURE_NAMESPACE": "\"noentry\""])
        try fx.cPlugin("libmagic.so", ["FIXTURE_MAGIC": "0xDEADBEEF", "FIXTURE_NAMESPACE": "\"magic\""])
        try fx.cPlugin("libabi2.so", ["FIXTURE_ABI_MAJOR": "2", "FIXTURE_NAMESPACE": "\"abi2\""])
        try fx.cPlugin("libnewer.so", ["FIXTURE_ABI_MINOR": "9", "FIXTURE_NAMESPACE": "\"newer\""])
        // Built for 1.0 before 1.1 added the showcase extension: loads unchanged (minors are append-only).
        try fx.cPlugin(
            "libolder.so", ["FIXTURE_ABI_MINOR": "0", "FIXTURE_NAMESPACE": "\"older\"", "FIXTURE_ID": "\"older\""])
        try fx.cPlugin(
            "libinitfails.so", ["FIXTURE_FAIL_INIT": "\"database missing\"", "FIXTURE_NAMESPACE": "\"failing\""])

        let host = PluginHost(cacheDirectory: fx.cache)
        host.loadPlugins(in: [fx.plugins])
        let byFile = Dictionary(uniqueKeysWithValues: host.plugins.map { ($0.file.lastPathComponent, $0) })

        let expected: [String: String] = [
            "libempty.so": "libempty.so: empty file (0 bytes)",
            "libtext.so": "libtext.so: not an ELF file (text)",
            "libtruncated.so": "libtruncated.so: truncated ELF header",
            "libcut.so": "libcut.so: truncated ELF",
            "libclass32.so": "libclass32.so: ELF32, this host needs ELF64",
            "libnoentry.so": "libnoentry.so: no entry point hub_plugin_entry",
            "libmagic.so": "libmagic.so: bad magic 0xdeadbeef, not a hub plugin descriptor",
            "libabi2.so": "libabi2.so was built for hub plugin ABI 2.1; this host speaks 1.1",
            "libnewer.so": "libnewer.so was built for hub plugin ABI 1.9; this host speaks 1.1",
            "libinitfails.so": "libinitfails.so: init failed: database missing",
        ]
        #expect(host.plugins.count == expected.count + 2)
        for (file, reason) in expected {
            let record = try #require(byFile[file], "\(file) was not listed")
            #expect(record.state.name == "rejected", "\(file)")
            #expect(record.reason?.hasPrefix(reason) == true, "\(file): \(record.reason ?? "no reason")")
            #expect(record.reason?.contains("\n") == false, "one line")
        }
        // Cut short and written seconds ago: most likely a build still writing it, and said so.
        #expect(
            byFile["libcut.so"]?.reason?.hasSuffix("(still being written? run again once the build is done)") == true)
        #expect(byFile["libtext.so"]?.reason?.contains("still being written") == false)
        #expect(byFile["libgood.so"]?.state == .active)
        #expect(byFile["libolder.so"]?.state == .active)
        #expect(byFile["libolder.so"]?.abi == "1.0")
        #expect(host.registry.allEntries.map(\.namespace).sorted() == ["fixture", "older"])
        // Copies are named by content and shared by every run on the cache (another may be loading one this run
        // refused): a rejected image's copy stays for the weekly prune, and none is written twice.
        let copies = try FileManager.default.contentsOfDirectory(atPath: fx.cache.path).filter { $0.hasSuffix(".so") }
        #expect(copies.count == Set(copies.map { $0.split(separator: "-").last! }).count)
        let again = PluginHost(cacheDirectory: fx.cache).loadPlugins(in: [fx.plugins])
        #expect(again.filter(\.isLoaded).count == 2)

    }

    @Test("a real ELF32 shared object (cc -m32) is rejected by class")
    func realElf32() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let source = fx.root.appendingPathComponent("tiny32.c")
        try "int hub_plugin_entry(void) { return 0; }\n".write(to: source, atomically: true, encoding: .utf8)
        let output = fx.plugins.appendingPathComponent("lib32.so")
        do {
            try FixtureBuilder.run(
                "/usr/bin/env",
                [
                    "cc", "-m32", "-shared", "-fPIC", "-nostdlib", "-ffreestanding",
                    source.path, "-o", output.path,
                ])
        } catch {
            // No 32-bit toolchain here; the crafted header in `badFilesRejected` covers the check.
            return
        }
        let record = PluginHost(cacheDirectory: fx.cache).load(file: output)
        #expect(record.reason == "lib32.so: ELF32, this host needs ELF64")
    }

    @Test("executables and relocatable objects are not shared libraries")
    func wrongELFTypes() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let source = fx.root.appendingPathComponent("main.c")
        try "int main(void) { return 0; }\n".write(to: source, atomically: true, encoding: .utf8)
        let executable = fx.plugins.appendingPathComponent("libexe.so")
        let object = fx.plugins.appendingPathComponent("libobj.so")
        try FixtureBuilder.run("/usr/bin/env", ["cc", "-no-pie", source.path, "-o", executable.path])
        try FixtureBuilder.run("/usr/bin/env", ["cc", "-c", source.path, "-o", object.path])
        let host = PluginHost(cacheDirectory: fx.cache)
        #expect(host.load(file: executable).reason == "libexe.so: an executable, not a shared library")
        #expect(host.load(file: object).reason == "libobj.so: a relocatable object (.o), not a shared library")
    }

    @Test("two plugins claiming one namespace: neither wins by file order; both are refused, naming each other")
    func namespaceClash() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        try fx.cPlugin("liba.so", ["FIXTURE_ID": "\"com.example.first\""])
        try fx.cPlugin("libb.so", ["FIXTURE_ID": "\"com.example.second\""])
        try fx.cPlugin("libc.so", ["FIXTURE_ID": "\"com.example.bystander\"", "FIXTURE_NAMESPACE": "\"other\""])
        let host = PluginHost(cacheDirectory: fx.cache)
        let records = host.loadPlugins(in: [fx.plugins])
        #expect(records.map(\.file.lastPathComponent) == ["liba.so", "libb.so", "libc.so"])
        #expect(host.registry.entry(forNamespace: "fixture") == nil)
        #expect(records[2].state == .active, "an uncontested plugin is untouched")
        for record in records.prefix(2) {
            let reason = try #require(record.reason)
            #expect(
                reason.contains(
                    "refused: namespace \"fixture\" is claimed by com.example.first (liba.so) and "
                        + "com.example.second (libb.so); none is loaded"), "\(reason)")
            #expect(reason.hasSuffix("choose with --prefer com.example.first or --prefer com.example.second"))
        }
    }

    @Test("--prefer settles a contested namespace, whichever file sorts first", arguments: ["first", "second"])
    func namespaceClashPreferred(_ preferred: String) throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        try fx.cPlugin("liba.so", ["FIXTURE_ID": "\"com.example.first\""])
        try fx.cPlugin("libb.so", ["FIXTURE_ID": "\"com.example.second\""])
        let host = PluginHost(cacheDirectory: fx.cache)
        host.preferredPluginIDs = ["com.example.\(preferred)"]
        host.loadPlugins(in: [fx.plugins])
        let winner = try #require(host.loadedPlugins.first)
        #expect(host.loadedPlugins.count == 1)
        #expect(winner.id == "com.example.\(preferred)")
        #expect(host.registry.entry(forNamespace: "fixture")?.owner == winner.owner)
        let loser = try #require(host.plugins.first { $0.id != winner.id && $0.reason != nil })
        #expect(loser.reason?.contains("is also claimed by com.example.\(preferred)") == true, "\(loser.reason ?? "")")
        #expect(loser.reason?.contains("preferred with --prefer") == true)
        #expect(host.plugins.count == 2, "one record per file: the winner's earlier load is replaced")
    }

    @Test("init failing revokes what it registered before failing")
    func initFailureRevokes() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin(
            "libfail.so", ["FIXTURE_FAIL_INIT": "\"no config\"", "FIXTURE_NAMESPACE": "\"failing\""])
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = host.load(file: file)
        #expect(record.reason == "libfail.so: init failed: no config")
        #expect(host.registry.entry(forNamespace: "failing") == nil)
        #expect(record.namespaces.isEmpty)
        #expect(!FixtureBuilder.isMapped(record.privateCopy!.path))
    }

    @Test("the same image twice in one host is refused")
    func sameImageTwice() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libgood.so")
        let twin = fx.plugins.appendingPathComponent("libtwin.so")
        try FileManager.default.copyItem(at: file, to: twin)
        let host = PluginHost(cacheDirectory: fx.cache)
        #expect(host.load(file: file).state == .active)
        #expect(host.load(file: twin).reason == "libtwin.so: the same image is already loaded from libgood.so")
    }

    @Test("plugin folders: --plugins, else HUBHOST_PLUGIN_PATH, else ./plugins")
    func folderResolution() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(
            PluginFolders.resolve(
                explicit: ["/a", "/b"],
                environment: HostEnvironment(variables: ["HUBHOST_PLUGIN_PATH": "/c"], isPrivileged: false)
            ).map(\.path) == ["/a", "/b"])
        #expect(
            PluginFolders.resolve(
                explicit: [],
                environment: HostEnvironment(variables: ["HUBHOST_PLUGIN_PATH": "/c::/d"], isPrivileged: false)
            ).map(\.path) == ["/c", "/d"])
        #expect(
            PluginFolders.resolve(explicit: [], environment: HostEnvironment(variables: [:], isPrivileged: false)).map(
                \.path) == [cwd + "/plugins"])
        #expect(
            PluginFolders.resolve(
                explicit: [], environment: HostEnvironment(variables: ["HUBHOST_PLUGIN_PATH": ""], isPrivileged: false)
            ).map(\.path) == [cwd + "/plugins"])
        // Under setuid or setgid the environment chooses nothing.
        let privileged = HostEnvironment(
            variables: [
                "HUBHOST_PLUGIN_PATH": "/c", "HUBHOST_EXECUTABLE": "/tmp/x",
                "XDG_CACHE_HOME": "/tmp/cache", "HUBHOST_SAFE_MODE": "1",
            ],
            isPrivileged: true)
        #expect(PluginFolders.resolve(explicit: [], environment: privileged).map(\.path) == [cwd + "/plugins"])
        #expect(privileged[HostEnvironment.executable] == nil)
        #expect(privileged.cacheHome.path != "/tmp/cache")
        // A relative XDG_CACHE_HOME is ignored, as the XDG spec says (it was resolved against the working folder).
        let relative = HostEnvironment(variables: ["XDG_CACHE_HOME": "relcache", "HOME": "/h"], isPrivileged: false)
        #expect(relative.cacheHome.path == "/h/.cache")
        #expect(privileged.safeModeRequested, "safe mode only restricts, so it is honoured")
    }

    @Test("discovery: only *.so, sorted, deduplicated; missing folders reported")
    func discovery() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        for name in ["libz.so", "liba.so", "notes.txt", "libm.so.1"] { try fx.file(name, [1]) }
        let missing = fx.root.appendingPathComponent("nowhere")
        // A name that is not UTF-8 is said as its bytes (Swift would replace them, and the file not be found).
        let odd = Array(fx.plugins.path.utf8) + Array("/lib".utf8) + [0xFF] + Array("x.so".utf8)
        let descriptor = odd.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { open(Array($0) + [0], O_WRONLY | O_CREAT, 0o644) }
        }
        #expect(descriptor >= 0)
        close(descriptor)
        let (files, absent, notUTF8) = PluginFolders.pluginFiles(in: [fx.plugins, missing, fx.plugins])
        #expect(files.map(\.lastPathComponent) == ["liba.so", "libz.so"])
        #expect(absent.map(\.lastPathComponent) == ["nowhere"])
        #expect(notUTF8 == [fx.plugins.standardizedFileURL.path + "/lib\\xffx.so"], "\(notUTF8)")
        let host = PluginHost(cacheDirectory: fx.cache)
        host.loadPlugins(in: [missing])
        #expect(host.missingFolders.map(\.lastPathComponent) == ["nowhere"])
    }

    @Test("content digests: 32 hex digits, stable, different for different content (lengths and tails included)")
    func contentDigest() {
        func digest(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { ContentDigest.hex($0) } }
        let samples: [[UInt8]] = [
            [], [0], [0, 0], [1], Array(repeating: 0, count: 16), Array(repeating: 0, count: 17),
            Array("hubhost".utf8), Array("hubhosu".utf8), Array(repeating: 7, count: 4096),
            Array(repeating: 7, count: 4095) + [8],
        ]
        let digests = samples.map(digest)
        #expect(Set(digests).count == samples.count)
        #expect(digests.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
        #expect(digest(Array("hubhost".utf8)) == digests[6])
    }

    @Test("a cached private copy is reused only when its bytes are identical")
    func cachedCopyReuse() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let file = try fx.cPlugin("libgood.so")
        let contents = try Data(contentsOf: file)
        let copies = PrivateCopies(directory: fx.cache)
        let first = try copies.copy(file, contents: contents, contentHash: "0123456789abcdef0123", avoiding: [])
        // Same name, same size, different bytes (a collision or a damaged cache): rewritten, not trusted.
        var damaged = contents
        damaged[damaged.count - 1] ^= 0xFF
        try damaged.write(to: first)
        let second = try copies.copy(file, contents: contents, contentHash: "0123456789abcdef0123", avoiding: [])
        #expect(second == first)
        #expect(try Data(contentsOf: second) == contents)
        // Pruning deletes copies unused for longer than the limit, and never one in use; only its own files: a
        // copy's name and bytes of that hash, or the temporary name of one (the folder may hold the user's
        // libraries: `--plugin-cache` names any folder).
        let staged = fx.cache.appendingPathComponent("staged")
        try Data([1]).write(to: staged)
        let oldName = "libold-\(ContentDigest.of(file: staged)!.prefix(16)).so"
        let old = fx.cache.appendingPathComponent(oldName)
        try FileManager.default.moveItem(at: staged, to: old)
        let interrupted = ".\(oldName).4242.tmp"
        let users = ["libimportant.so", "libfake-0123456789abcdef.so", ".libimportant.so.12.tmp", "notes.tmp"]
        for name in users + [interrupted] { try Data([2]).write(to: fx.cache.appendingPathComponent(name)) }
        var times = [timeval(tv_sec: 1_000_000, tv_usec: 0), timeval(tv_sec: 1_000_000, tv_usec: 0)]
        for name in users + [interrupted, oldName] { utimes(fx.cache.appendingPathComponent(name).path, &times) }
        utimes(first.path, &times)
        #expect(copies.prune(olderThan: 3600, keeping: [first.path]) == [interrupted, oldName].sorted())
        #expect(FileManager.default.fileExists(atPath: first.path))
        for name in users {
            #expect(FileManager.default.fileExists(atPath: fx.cache.appendingPathComponent(name).path))
        }
        // In use (mapped by a retired image): a new name.
        let third = try copies.copy(
            file, contents: contents, contentHash: "0123456789abcdef0123", avoiding: [first.path])
        #expect(third != first)
    }
}

@Suite("Loader: warm starts from the image index", .pluginCode)
struct ImageIndexTests {
    /// A fixture plugin aged past the index's racy window (younger stamps are not trusted), then loaded by a
    /// `hubhost` process, as the run before this one: its copy stays in the cache, unmapped here.
    static func loadedByAnEarlierRun(_ fx: FixtureBuilder) throws -> (file: URL, index: URL) {
        let file = try fx.cPlugin("libgood.so")
        Thread.sleep(forTimeInterval: Double(ImageIndex.racyWindow) / 1e9 + 0.2)
        var environment = ProcessInfo.processInfo.environment
        environment["HUBHOST_PROBE"] = "0"
        let run = try ProcessRunner.hubhost(
            ["list-namespaces", "--plugins", fx.plugins.path, "--plugin-cache", fx.cache.path],
            environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        return (file, fx.cache.appendingPathComponent("images-index.tsv"))
    }

    /// The header gives a component its child delegate right after creation: the probe does too, so a configure
    /// that uses it is not quarantined as a crash (the probe set it only after configuring every sample model).
    @Test("the probe gives components their child delegate before configuring them")
    func theProbeSetsTheChildDelegateFirst() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let plugin = try fx.cPlugin("libtrusting.so", ["FIXTURE_TRUSTS_CHILD_DELEGATE": "1"])
        let run = try ProcessRunner.hubhost(["validate", plugin.path], currentDirectory: fx.root)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    /// A GNU unique symbol (a C++ inline static) is one object for the whole process, shared with every plugin that
    /// defines it, and keeps the plugin from ever unloading once bound: validate fails it, naming the symbol and the
    /// fix.
    @Test("validate fails a plugin that exports unique symbols")
    func validateFailsUniqueSymbols() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let plugin = try fx.cPlugin("libunique.so", ["FIXTURE_UNIQUE_SYMBOL": "1"])
        let run = try ProcessRunner.hubhost(["validate", plugin.path], currentDirectory: fx.root)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(
            run.stdout.contains("  fail exports unique symbols fixture_shared_counter (C++ inline"), "\(run.stdout)")
        #expect(run.stdout.contains("FAIL libunique.so") && !run.stdout.contains("  FAIL"), "the host loads it")
        // Loading it says so once (a note: the status is not changed by it).
        let listed = try ProcessRunner.hubhost(
            ["list-namespaces", "--plugins", fx.plugins.path, "--plugin-cache", fx.cache.path],
            currentDirectory: fx.root)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stderr.components(separatedBy: "libunique.so: exports GNU unique symbols (fixture_shared_counter)")
                .count == 2, "\(listed.stderr)")
    }

    @Test("an unchanged file loads from the private copy an earlier run made, without being read")
    func unchangedFilesAreNotRead() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let (file, index) = try Self.loadedByAnEarlierRun(fx)
        let line = try #require(
            try String(contentsOf: index, encoding: .utf8).split(separator: "\n").first { $0.hasSuffix(file.path) })
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)

        let host = PluginHost(cacheDirectory: fx.cache)
        let record = try #require(host.loadPlugins(in: [fx.plugins]).first)
        #expect(host.imagesRead == 0)
        #expect(record.state == .active)
        #expect(record.contentHash == String(fields[4]))
        #expect(record.privateCopy?.lastPathComponent == String(fields[10]))
        #expect(record.namespaces.map(\.namespace) == ["fixture"])
        #expect(FixtureBuilder.isMapped(try #require(record.privateCopy).path))
    }

    @Test("an unchanged cache is not written again")
    func unchangedIndexIsNotRewritten() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let (_, index) = try Self.loadedByAnEarlierRun(fx)
        let written = FileStamp.of(index)
        #expect(written != nil)
        let run = try ProcessRunner.hubhost(
            ["list-namespaces", "--plugins", fx.plugins.path, "--plugin-cache", fx.cache.path],
            environment: ["HUBHOST_PROBE": "0"])
        #expect(run.status == 0)
        // Replaced atomically when written, so a write would be a new inode.
        #expect(FileStamp.of(index) == written)
    }

    @Test("a damaged copy is noticed by its stamp: the file is read and the copy rewritten")
    func damagedCopiesAreRewritten() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let (file, _) = try Self.loadedByAnEarlierRun(fx)
        let copies = try FileManager.default.contentsOfDirectory(atPath: fx.cache.path).filter { $0.hasSuffix(".so") }
        let copy = fx.cache.appendingPathComponent(try #require(copies.first))
        var bytes = try Data(contentsOf: copy)  // same size, other bytes
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: copy)
        let host = PluginHost(cacheDirectory: fx.cache)
        let record = try #require(host.loadPlugins(in: [fx.plugins]).first)
        #expect(host.imagesRead == 1)
        #expect(record.state == .active)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: file))
    }

    @Test("a touched file is read again (ctime moves even where a tool keeps the mtime)")
    func touchedFilesAreRead() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let (file, _) = try Self.loadedByAnEarlierRun(fx)
        var info = stat()
        stat(file.path, &info)
        var keep = [timespec](repeating: info.st_mtim, count: 2)  // as `cp -p` or `touch -r` would leave it
        utimensat(AT_FDCWD, file.path, &keep, 0)
        let host = PluginHost(cacheDirectory: fx.cache)
        #expect(host.loadPlugins(in: [fx.plugins]).first?.state == .active)
        #expect(host.imagesRead == 1)
    }

    @Test("a damaged index, or one from another hubhost build, is not trusted: the file is read")
    func damagedIndexIsIgnored() throws {
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let (_, index) = try Self.loadedByAnEarlierRun(fx)
        let text = try String(contentsOf: index, encoding: .utf8)
        // A copy name pointing out of the folder, and a line cut short.
        var lines = text.split(separator: "\n").map(String.init)
        var fields = lines[1].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        fields[10] = "../../etc/passwd"
        lines[1] = fields.joined(separator: "\t")
        try (lines.joined(separator: "\n") + "\n1\t2\n").write(to: index, atomically: true, encoding: .utf8)
        let damaged = PluginHost(cacheDirectory: fx.cache)
        #expect(damaged.loadPlugins(in: [fx.plugins]).first?.state == .active)
        #expect(damaged.imagesRead == 1)

        // Another hubhost build (the header names it): its entries are not used.
        let fx2 = try FixtureBuilder()
        defer { fx2.cleanUp() }
        let (_, index2) = try Self.loadedByAnEarlierRun(fx2)
        let other = try String(contentsOf: index2, encoding: .utf8)
            .replacingOccurrences(of: "hubhost image index 1\t", with: "hubhost image index 1\tother ")
        try other.write(to: index2, atomically: true, encoding: .utf8)
        let otherBuild = PluginHost(cacheDirectory: fx2.cache)
        #expect(otherBuild.loadPlugins(in: [fx2.plugins]).first?.state == .active)
        #expect(otherBuild.imagesRead == 1)
    }
}
