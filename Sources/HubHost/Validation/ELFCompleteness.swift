import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Tells whether an ELF file looks completely written: a linker writes the header first and the section headers
/// last, so a file whose program segments or section header table reach past its end is still being written
/// (or was cut short). The watcher waits for such a file instead of loading or quarantining it.
///
/// This is not the loader's validation (which rejects bad files); it only answers "is it finished?", reading the
/// headers only, with `ELFInspector`'s reader.
public enum ELFCompleteness {
    public enum Verdict: Equatable, Sendable {
        case complete
        /// Still being written or truncated, with what is missing.
        case incomplete(String)
        /// Not an ELF file at all; the loader's validation will say why.
        case notELF
    }

    public static func check(_ url: URL) -> Verdict {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .incomplete("cannot be opened") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .incomplete("cannot be read") }
        let fileSize = UInt64(max(0, status.st_size))
        guard let header = readBytes(fd, count: 64, at: 0), header.count >= 4 else {
            return fileSize == 0 ? .incomplete("empty") : .notELF
        }
        guard header.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46]) else { return .notELF }
        guard header.count == 64, header[4] == 2, header[5] == 1 else {
            // Only ELF64 little-endian is loadable here; shorter headers mean the header itself is unfinished.
            return header.count < 64 ? .incomplete("ELF header is cut short") : .notELF
        }
        let (phoff, shoff, phentsize, phnum, shentsize, shnum) = header.withUnsafeBytes { bytes in
            let r = ELFInspector.Reader(bytes: bytes)
            return (r.u64(32), r.u64(40), UInt64(r.u16(54)), UInt64(r.u16(56)), UInt64(r.u16(58)), UInt64(r.u16(60)))
        }
        // Offsets come from the file: sums saturate instead of trapping on overflow.
        func end(_ start: UInt64, _ size: UInt64, _ count: UInt64 = 1) -> UInt64 {
            let (bytes, o1) = size.multipliedReportingOverflow(by: count)
            let (sum, o2) = start.addingReportingOverflow(bytes)
            return o1 || o2 ? .max : sum
        }
        if shoff > 0, end(shoff, shentsize, shnum) > fileSize {
            return .incomplete("section headers end at byte \(end(shoff, shentsize, shnum)), file has \(fileSize)")
        }
        guard end(phoff, phentsize, phnum) <= fileSize else {
            return .incomplete("program headers end past the end of the file")
        }
        // Both within the file size (checked above), so they fit an Int.
        guard phentsize >= 56, let table = readBytes(fd, count: Int(phentsize * phnum), at: Int(phoff)) else {
            return .complete
        }
        let incomplete: String? = table.withUnsafeBytes { bytes in
            let r = ELFInspector.Reader(bytes: bytes)
            for i in 0..<Int(phnum) {
                let base = i * Int(phentsize)
                let (offset, fileBytes) = (r.u64(base + 8), r.u64(base + 32))
                if end(offset, fileBytes) > fileSize {
                    return "segment \(i) ends at byte \(end(offset, fileBytes)), file has \(fileSize)"
                }
            }
            return nil
        }
        if let incomplete { return .incomplete(incomplete) }
        return .complete
    }
}
