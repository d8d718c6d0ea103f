import Foundation
import Testing

@testable import HubHost

/// The file watcher with real files in a temp folder, written the ways builds write them.
@Suite("FileWatcher", .serialized)
struct WatcherTests {
    let folder = TestSupport.temporaryDirectory("watch")

    private func startWatcher(_ collector: Collector<FileChange>, quietPeriod: Double = 0.1) throws -> FileWatcher {
        let watcher = FileWatcher(
            directories: [folder], quietPeriod: quietPeriod, accepts: { $0.pathExtension == "so" },
            onChange: { collector.append($0) })
        try watcher.start()
        return watcher
    }

    private func changes(_ collector: Collector<FileChange>, named name: String) -> [FileChange] {
        collector.items.filter { $0.url.lastPathComponent == name }
    }

    /// Installs inotify alone does not see: a watched symlink to a folder repointed, the folder deleted and made
    /// again, and a file that is a symlink whose target is rebuilt in another folder.
    @Test func repointedFoldersRecreatedFoldersAndRebuiltLinkTargetsAreSeen() throws {
        let fm = FileManager.default
        for name in ["a", "b", "c"] {
            try fm.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        func write(_ text: String, _ path: String) throws {
            let staged = folder.appendingPathComponent(".staged")
            try Data(text.utf8).write(to: staged)
            #expect(rename(staged.path, folder.appendingPathComponent(path).path) == 0)
        }
        try write("one", "a/x.txt")
        try write("two", "b/x.txt")
        try write("target", "c/y.txt")
        let current = folder.appendingPathComponent("current")
        try fm.createSymbolicLink(atPath: current.path, withDestinationPath: "a")
        let collector = Collector<FileChange>()
        let watcher = FileWatcher(
            directories: [current], quietPeriod: 0.1, accepts: { $0.pathExtension == "txt" },
            isReady: { _ in .complete }, onChange: { collector.append($0) })
        watcher.seed([current.appendingPathComponent("x.txt")])
        try watcher.start()
        defer { watcher.stop() }
        func reported(_ name: String, _ text: String) -> Bool {
            collector.items.contains {
                $0.url.lastPathComponent == name && $0.hash == ContentDigest.of(data: Data(text.utf8))
            }
        }
        // The link repointed (as `ln -sfn b current.new && mv -T current.new current` does).
        try fm.createSymbolicLink(atPath: folder.appendingPathComponent("next").path, withDestinationPath: "b")
        #expect(rename(folder.appendingPathComponent("next").path, current.path) == 0)
        #expect(TestSupport.waitUntil(timeout: 10) { reported("x.txt", "two") }, "\(collector.items)")
        // The folder it names deleted and made again, with a new build in it.
        try fm.removeItem(at: folder.appendingPathComponent("b"))
        try fm.createDirectory(at: folder.appendingPathComponent("b"), withIntermediateDirectories: true)
        try write("three", "b/x.txt")
        #expect(TestSupport.waitUntil(timeout: 10) { reported("x.txt", "three") }, "\(collector.items)")
        // A file that is a symlink: its target rebuilt in its own folder.
        try fm.createSymbolicLink(
            atPath: folder.appendingPathComponent("b/y.txt").path, withDestinationPath: "../c/y.txt")
        #expect(TestSupport.waitUntil(timeout: 10) { reported("y.txt", "target") }, "\(collector.items)")
        try write("rebuilt", "c/y.txt")
        #expect(TestSupport.waitUntil(timeout: 10) { reported("y.txt", "rebuilt") }, "\(collector.items)")
    }

    @Test func aRenamedInBuildIsReportedOnceWithItsHashWithoutWaitingAQuietPeriod() throws {
        let collector = Collector<FileChange>()
        let watcher = try startWatcher(collector, quietPeriod: 2)
        defer { watcher.stop() }
        let plugin = folder.appendingPathComponent("libswatch.so")
        try TestSupport.installPlugin("swatch.c", at: plugin)
        #expect(TestSupport.waitUntil { !changes(collector, named: "libswatch.so").isEmpty })
        let change = try #require(changes(collector, named: "libswatch.so").first)
        #expect(change.kind == .changed)
        #expect(change.hash == ContentDigest.of(file: plugin))
        // Renamed into place and a complete ELF: the write is known to be over, no quiet period is waited.
        #expect(change.settledAt - change.lastEventAt < 1)
        usleep(100_000)
        #expect(changes(collector, named: "libswatch.so").count == 1)
    }

    @Test func aBurstOfCompleteWritesEndsWithTheLastAndANoOpRebuildIsSkipped() throws {
        let collector = Collector<FileChange>()
        // The builds are compiled first, so the burst is five plain writes; a quiet period far longer than they
        // take keeps the test independent of machine load.
        let watcher = try startWatcher(collector, quietPeriod: 1.5)
        defer { watcher.stop() }
        let plugin = folder.appendingPathComponent("libburst.so")
        // Five writes in quick succession (an in-place writer), then the same content again after it settled.
        let builds = try (1...5).map { i -> Data in
            let out = folder.appendingPathComponent("build\(i).bin")
            try TestSupport.compilePlugin("swatch.c", to: out, defines: ["SWATCH_COLOR=0x\(i)0000FFu"])
            return try Data(contentsOf: out)
        }
        for data in builds { try data.write(to: plugin) }
        #expect(TestSupport.waitUntil { !changes(collector, named: "libburst.so").isEmpty })
        try builds[4].write(to: plugin)  // same bytes: must be skipped
        // A second file written afterwards proves the watcher went past the no-op without reporting it.
        try TestSupport.installPlugin("swatch.c", at: folder.appendingPathComponent("libmarker.so"))
        #expect(TestSupport.waitUntil { !changes(collector, named: "libmarker.so").isEmpty })
        // Each write is closed and complete, so each may settle on its own (a build finished is a build), but the
        // last report is the last content, none is reported twice in a row, and the no-op rebuild is not.
        let burst = changes(collector, named: "libburst.so")
        #expect((1...5).contains(burst.count))
        #expect(burst.last?.hash == ContentDigest.of(data: builds[4]))
        #expect(zip(burst, burst.dropFirst()).allSatisfy { $0.hash != $1.hash })
    }

    @Test func aHalfWrittenPluginWaitsUntilItIsComplete() throws {
        let collector = Collector<FileChange>()
        let watcher = try startWatcher(collector)
        defer { watcher.stop() }
        let full = try Data(
            contentsOf: TestSupport.compilePlugin("swatch.c", to: folder.appendingPathComponent("full.bin")))
        let plugin = folder.appendingPathComponent("libhalf.so")
        try full.prefix(full.count / 2).write(to: plugin)  // written and closed, but cut short
        #expect(ELFCompleteness.check(plugin) != .complete)
        usleep(400_000)  // several quiet periods: the half file must keep waiting
        try TestSupport.installPlugin("swatch.c", at: folder.appendingPathComponent("libmarker.so"))
        #expect(TestSupport.waitUntil { !changes(collector, named: "libmarker.so").isEmpty })
        #expect(changes(collector, named: "libhalf.so").isEmpty)

        let handle = try FileHandle(forWritingTo: plugin)
        try handle.seekToEnd()
        try handle.write(contentsOf: full.suffix(from: full.count / 2))
        try handle.close()
        #expect(TestSupport.waitUntil { !changes(collector, named: "libhalf.so").isEmpty })
        #expect(changes(collector, named: "libhalf.so").first?.hash == ContentDigest.of(data: full))
    }

    @Test func aDeletedPluginIsReportedAndOtherFilesAreIgnored() throws {
        let plugin = folder.appendingPathComponent("libgone.so")
        try TestSupport.installPlugin("swatch.c", at: plugin)
        let collector = Collector<FileChange>()
        let watcher = try startWatcher(collector)
        watcher.seed([plugin])
        defer { watcher.stop() }
        try "notes".write(to: folder.appendingPathComponent("README.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: plugin)
        #expect(TestSupport.waitUntil { !changes(collector, named: "libgone.so").isEmpty })
        #expect(changes(collector, named: "libgone.so").map(\.kind) == [.deleted])
        #expect(changes(collector, named: "README.txt").isEmpty)
    }

    /// GNU ld unlinks its output, then creates it. Under a parallel build the gap passed the quiet period, and a
    /// rebuild was reported as a deletion (an unload), then a new file: it is one change.
    @Test func aFileUnlinkedThenCreatedByALinkerIsOneChange() throws {
        let plugin = folder.appendingPathComponent("libld.so")
        try TestSupport.installPlugin("swatch.c", at: plugin)
        let collector = Collector<FileChange>()
        let watcher = try startWatcher(collector)
        watcher.seed([plugin])
        defer { watcher.stop() }
        try FileManager.default.removeItem(at: plugin)
        usleep(400_000)  // four quiet periods with no file
        _ = try TestSupport.compilePlugin("swatch.c", to: plugin, defines: ["PLUGIN_VERSION=\"2\""])
        #expect(TestSupport.waitUntil { !changes(collector, named: "libld.so").isEmpty })
        usleep(1_200_000)  // past the deletion grace
        // (A chmod after the write may follow as an attributes-only change of the same content.)
        let kinds = changes(collector, named: "libld.so").filter { !$0.sameContent }.map(\.kind)
        #expect(kinds == [.changed], "\(changes(collector, named: "libld.so"))")
    }
}
