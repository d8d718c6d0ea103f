import Foundation

/// Tells whether an ELF file looks completely written: a linker writes the header first and the section headers
/// last, so a file whose program segments or section header table reach past its end is still being written
/// (or was cut short). The watcher waits for such a file instead of loading or quarantining it.
///
/// This is not the loader's validation (which rejects bad files); it only answers "is it finished?".
public enum ELFCompleteness {
    public enum Verdict: Equatable, Sendable {
        case complete
        /// Still being written or truncated, with what is missing.
        case incomplete(String)
        /// Not an ELF file at all; the loader's validation will say why.
        case notELF
    }

    public static func check(_ url: URL) -> Verdict {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return .incomplete("cannot be opened") }
        defer { try? handle.close() }
        guard let fileSize = try? handle.seekToEnd() else { return .incomplete("cannot be read") }
        try? handle.seek(toOffset: 0)
        guard let header = try? handle.read(upToCount: 64), header.count >= 4 else {
            return fileSize == 0 ? .incomplete("empty") : .notELF
        }
        guard header.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46]) else { return .notELF }
        guard header.count == 64, header[4] == 2, header[5] == 1 else {
            // Only ELF64 little-endian is loadable here; shorter headers mean the header itself is unfinished.
            return header.count < 64 ? .incomplete("ELF header is cut short") : .notELF
        }
        func u16(_ o: Int) -> UInt64 { UInt64(header[o]) | UInt64(header[o + 1]) << 8 }
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(header[o + $1]) << (8 * UInt64($1)) } }
        let phoff = u64(32)
        let shoff = u64(40)
        let phentsize = u16(54)
        let phnum = u16(56)
        let shentsize = u16(58)
        let shnum = u16(60)
        if shoff > 0, shoff + shentsize * shnum > fileSize {
            return .incomplete("section headers end at byte \(shoff + shentsize * shnum), file has \(fileSize)")
        }
        guard phoff + phentsize * phnum <= fileSize else {
            return .incomplete("program headers end past the end of the file")
        }
        try? handle.seek(toOffset: phoff)
        guard phentsize >= 56, let table = try? handle.read(upToCount: Int(phentsize * phnum)) else {
            return .complete
        }
        for i in 0..<Int(phnum) {
            let base = i * Int(phentsize)
            func f64(_ o: Int) -> UInt64 {
                (0..<8).reduce(UInt64(0)) { $0 | UInt64(table[base + o + $1]) << (8 * UInt64($1)) }
            }
            let offset = f64(8)
            let fileBytes = f64(32)
            if offset + fileBytes > fileSize {
                return .incomplete("segment \(i) ends at byte \(offset + fileBytes), file has \(fileSize)")
            }
        }
        return .complete
    }
}
