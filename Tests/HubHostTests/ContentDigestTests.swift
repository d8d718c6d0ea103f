import Foundation
import HubHost
import Testing

/// The one content digest (private copy names, probe cache keys, the watcher's "did it change"). It must stay
/// the same across builds and machines (caches outlive a hubhost build) and tell near-identical builds apart.
@Suite struct ContentDigestTests {
    @Test func knownAnswersStayTheSame() {
        #expect(ContentDigest.of(data: Data()) == "22371739fc7fc3cbce90eb415a9b6f20")
        #expect(ContentDigest.of(data: Data("hubhost".utf8)) == "e6ab0ff2049bed413e584a1ddc5bb18c")
        #expect(ContentDigest.of(data: Data((0..<1000).map { UInt8($0 % 251) })) == "c0bb2eb771f1ae70778038b1ea620574")
    }

    @Test func everySingleBitFlipAndTrailingZeroChangesTheDigest() {
        let base = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        var seen: Set<String> = [ContentDigest.of(data: base)]
        for byte in 0..<base.count {
            for bit in 0..<8 {
                var flipped = base
                flipped[byte] ^= UInt8(1 << bit)
                seen.insert(ContentDigest.of(data: flipped))
            }
        }
        for zeros in 1...16 { seen.insert(ContentDigest.of(data: base + Data(count: zeros))) }
        #expect(seen.count == 1 + 64 * 8 + 16)
    }
}
