import FoundationEssentials

/// The 128-bit content digest of a plugin file (32 hex digits): it names private copies, keys the probe cache and
/// tells the watcher whether a rebuild changed anything. One digest for all three, so a file is hashed once.
///
/// Not cryptographic, and it need not be: it only has to give different builds different names, quickly (a
/// SHA-256 in Swift cost more than the dlopen it precedes). A cached copy is reused only after a byte-for-byte
/// comparison, so even a collision can never load the wrong code.
public enum ContentDigest {
    /// The digest of the file's bytes, or nil when it cannot be read (read whole, never mapped: `RegularFile`).
    public static func of(file url: URL) -> String? {
        guard case .success(let data) = RegularFile.read(url) else { return nil }
        return of(data: data)
    }

    public static func of(data: Data) -> String { data.withUnsafeBytes { hex($0) } }

    public static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = UInt64(bytes.count)
        // Two lanes over 16-byte blocks, each a multiply-xorshift of its own 8 bytes; the length seeds both.
        var a: UInt64 = 0x243F_6A88_85A3_08D3 ^ length
        var b: UInt64 = 0x1319_8A2E_0370_7344 ^ (length &* 0x9E37_79B9_7F4A_7C15)
        func absorb(_ x: UInt64, _ y: UInt64) {
            a = (a ^ x) &* 0x9FB2_1C65_1E98_DF25
            a ^= a >> 31
            b = (b ^ y) &* 0xD6E8_FEB8_6659_FD93
            b ^= b >> 29
        }
        let blocks = bytes.count / 16
        if let base = bytes.baseAddress {
            for i in 0..<blocks {
                absorb(
                    base.loadUnaligned(fromByteOffset: i * 16, as: UInt64.self),
                    base.loadUnaligned(fromByteOffset: i * 16 + 8, as: UInt64.self))
            }
        }
        // The last partial block, zero-padded (the length is already mixed in).
        var tail = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &tail) { out in
            for (i, byte) in bytes[(blocks * 16)...].enumerated() { out[i] = byte }
        }
        absorb(tail.0, tail.1)
        // Cross the lanes and finish each with a full-avalanche mix.
        func finish(_ x: UInt64) -> UInt64 {
            var x = x
            x ^= x >> 33
            x = x &* 0xFF51_AFD7_ED55_8CCD
            x ^= x >> 33
            x = x &* 0xC4CE_B9FE_1A85_EC53
            x ^= x >> 33
            return x
        }
        let high = finish(a ^ (b << 23 | b >> 41))
        let low = finish(b ^ (high << 17 | high >> 47) ^ a)
        return hex64(high) + hex64(low)
    }

    private static func hex64(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
