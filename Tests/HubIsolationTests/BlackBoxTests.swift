import Foundation
import HubHost
import Testing

/// The black box's plugin table as the supervisor reads it after a fault off the main thread: the plugin whose
/// image holds an address, through a real shared file written as a worker writes it.
@Suite struct BlackBoxTests {
    static func plugin(_ id: String, _ version: String) -> BlackBox.PluginInfo {
        BlackBox.PluginInfo(path: "/plugins/lib\(id).so", id: "com.example.\(id)", version: version, digest: "d")
    }

    @Test func theNewestImageAtAnAddressIsTheOneNamedAndAnUnmappedOneIsKeptApart() throws {
        let fd = try BlackBox.create()
        defer { close(fd) }
        let mapped = try #require(mmap(nil, BlackBox.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
        defer { munmap(mapped, BlackBox.fileSize) }
        let table = mapped + BlackBox.tableOffset
        // A reload: version 2 is mapped where version 1 was, after it was unloaded.
        BlackBox.writeSlot(1, plugin: Self.plugin("card", "1"), image: 0x10_000..<0x20_000, table: table)
        BlackBox.writeSlot(2, plugin: Self.plugin("other", "1"), image: 0x50_000..<0x60_000, table: table)
        BlackBox.writeSlot(3, plugin: Self.plugin("card", "2"), image: 0x10_000..<0x20_000, table: table)
        BlackBox.writeSlot(4, plugin: Self.plugin("embedded", "1"), image: nil, table: table)
        let reader = try #require(BlackBox.Reader(descriptor: fd))
        #expect(reader.plugin(holding: 0x18_000) == Self.plugin("card", "2"))
        #expect(reader.plugin(holding: 0x1F_FFF) == Self.plugin("card", "2"))
        #expect(reader.plugin(holding: 0x20_000) == nil, "the range's end is outside it")
        #expect(reader.plugin(holding: 0x50_000) == Self.plugin("other", "1"))
        #expect(reader.plugin(holding: 0) == nil, "an unknown range holds nothing")
        BlackBox.retireImage(slot: 2, table: table)
        #expect(reader.plugin(holding: 0x50_000) == nil)
        #expect(reader.plugin(slot: 2) == Self.plugin("other", "1"), "the slot itself stays, for the call word")
        // Where its code was: what a thread it left running faults in.
        #expect(reader.image(holding: 0x50_010, unmapped: true)?.plugin == Self.plugin("other", "1"))
        #expect(reader.image(holding: 0x18_000, unmapped: true) == nil, "card 2 is mapped")
    }
}
