import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What the host learned about a plugin file by reading it, before anything in it can run.
public struct PluginImageInfo: Sendable {
    /// The 128-bit content digest of the file's bytes (`ContentDigest`), 32 hex digits.
    public let contentHash: String
    public let size: Int
    /// The image carries Swift metadata sections (`swift5_*`): the Swift runtime registers them for good when
    /// the image loads, so it must be loaded `RTLD_NODELETE` and never unmapped.
    public let isSwiftImage: Bool
    /// The GNU unique symbols it defines (C++ inline and template statics), at most 5 (see `ExportedSymbols`).
    public var uniqueSymbols: [String] = []
    /// The bytes that were checked and hashed: the private copy is written from these, so what is loaded is
    /// exactly what was validated even if the file changes meanwhile.
    let contents: Data
}

/// Checks that a file is a shared object this host could load, by parsing its ELF header, section headers and
/// dynamic symbol table — never by `dlopen`, because loading runs the file's constructors.
///
/// Every failure is one line that names the file: "libfoo.so: ELF32, this host needs ELF64".
public enum ELFInspector {
    /// The ELF machine of this host (EM_X86_64 / EM_AARCH64).
    #if arch(x86_64)
        static let hostMachine: UInt16 = 62
        static let hostMachineName = "x86-64"
    #elseif arch(arm64)
        static let hostMachine: UInt16 = 183
        static let hostMachineName = "aarch64"
    #else
        static let hostMachine: UInt16 = 0
        static let hostMachineName = "unknown"
    #endif

    public static let entrySymbol = "hub_plugin_entry"

    public struct Rejection: Error, CustomStringConvertible, Equatable {
        public let reason: String
        public var description: String { reason }
    }

    /// Whether `file` was modified in the last 10 seconds.
    static func writtenLately(_ file: URL) -> Bool {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return false }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec - info.st_mtim.tv_sec < 10
    }

    /// Validates `file` and returns what was learned, or throws a `Rejection` with the one-line reason.
    public static func inspect(_ file: URL) throws -> PluginImageInfo {
        let name = file.lastPathComponent
        func reject(_ why: String) -> Rejection {
            // A file cut short that was written seconds ago is most likely a build still writing it.
            let cutShort = why.hasPrefix("empty file") || why.hasPrefix("truncated")
            let hint =
                cutShort && Self.writtenLately(file) ? " (still being written? run again once the build is done)" : ""
            return Rejection(reason: "\(name): \(why)\(hint)")
        }

        // Regular file (after following links), readable, non-empty; read whole, never mapped (`RegularFile`).
        let data: Data
        switch RegularFile.read(file) {
        case .success(let bytes): data = bytes
        case .failure(.unreadable(let why)): throw reject("cannot read the file (\(why))")
        case .failure(.notRegular): throw reject("not a regular file")
        }
        guard !data.isEmpty else { throw reject("empty file (0 bytes)") }
        return try data.withUnsafeBytes { bytes -> PluginImageInfo in
            let reader = Reader(bytes: bytes)
            try check(reader, reject)
            let sections = try sectionFacts(reader, reject)
            guard sections.hasDynsym else { throw reject("no dynamic symbol table (.dynsym): not a shared library") }
            guard sections.exportsEntry else {
                // The message names the file itself, in the form plugin authors search for.
                throw Rejection(reason: "\(name): no entry point \(entrySymbol) (not exported in its .dynsym)")
            }
            var info = PluginImageInfo(
                contentHash: ContentDigest.hex(bytes), size: bytes.count,
                isSwiftImage: sections.hasSwiftMetadata, contents: data)
            info.uniqueSymbols = sections.uniqueSymbols
            return info
        }
    }

    /// The ELF header checks, in the order that gives the most useful message first.
    private static func check(_ r: Reader, _ reject: (String) -> Rejection) throws {
        let magic: [UInt8] = [0x7F, 0x45, 0x4C, 0x46]
        guard r.count >= 4, (0..<4).allSatisfy({ r.bytes[$0] == magic[$0] }) else {
            throw reject("not an ELF file (\(describeNonELF(r)))")
        }
        guard r.count >= 6 else { throw reject("truncated ELF header (\(r.count) bytes)") }
        switch r.bytes[4] {
        case 2: break
        case 1: throw reject("ELF32, this host needs ELF64")
        default: throw reject("unknown ELF class \(r.bytes[4]), this host needs ELF64")
        }
        guard r.bytes[5] == 1 else { throw reject("big-endian ELF, this host needs little-endian") }
        guard r.count >= 64 else { throw reject("truncated ELF header (\(r.count) of 64 bytes)") }
        let type = r.u16(16)
        let machine = r.u16(18)
        guard machine == hostMachine else {
            throw reject("built for ELF machine \(machineName(machine)), this host is \(hostMachineName)")
        }
        switch type {
        case 3: break  // ET_DYN
        case 1: throw reject("a relocatable object (.o), not a shared library")
        case 2: throw reject("an executable, not a shared library")
        case 4: throw reject("a core dump, not a shared library")
        default: throw reject("ELF type \(type), not a shared library")
        }
    }

    private struct SectionFacts {
        var hasDynsym = false
        var exportsEntry = false
        var hasSwiftMetadata = false
        /// The first few GNU unique symbols (always looked for: they are few, and rarely any).
        var uniqueSymbols: [String] = []
        /// Every exported symbol, when asked for.
        var exports: ExportedSymbols?
    }

    /// What a file exports in `.dynsym` (what `dlsym` can find and other libraries can bind to).
    public struct ExportedSymbols: Equatable, Sendable {
        /// Defined global or weak functions.
        public var functions: Set<String> = []
        /// Defined global or weak data objects.
        public var data: Set<String> = []
        /// Defined `STB_GNU_UNIQUE` symbols (C++ inline and template statics, with GCC's default): the loader
        /// gives each one object for the whole process, shared with every library that defines it, and never
        /// unloads a library that has any.
        public var unique: Set<String> = []
        public init() {}
    }

    /// `symbol` demangled as C++ (`_ZN6Shared7counterE` → `Shared::counter`) with the C++ runtime's demangler when
    /// the process has one; else as it is.
    public static func demangled(_ symbol: String) -> String {
        typealias Demangle =
            @convention(c) (
                UnsafePointer<CChar>, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?,
                UnsafeMutablePointer<Int32>?
            ) -> UnsafeMutablePointer<CChar>?
        guard symbol.hasPrefix("_Z"), let found = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__cxa_demangle")
        else { return symbol }
        let demangle = unsafeBitCast(found, to: Demangle.self)
        var status: Int32 = -1
        guard let text = symbol.withCString({ demangle($0, nil, nil, &status) }) else { return symbol }
        defer { free(text) }
        return status == 0 ? String(cString: text) : symbol
    }

    /// The functions `file` exports in `.dynsym` (what `dlsym` can find), read without loading it: what
    /// `validate` checks module-file bindings against.
    public static func exportedFunctions(of file: URL) throws -> Set<String> { try exportedSymbols(of: file).functions }

    /// Every symbol `file` exports in `.dynsym`, read without loading it.
    public static func exportedSymbols(of file: URL) throws -> ExportedSymbols {
        let name = file.lastPathComponent
        let data = try Data(contentsOf: file)
        return try data.withUnsafeBytes { bytes in
            let reader = Reader(bytes: bytes)
            try check(reader) { Rejection(reason: "\(name): \($0)") }
            let facts = try sectionFacts(reader, { Rejection(reason: "\(name): \($0)") }, collectExports: true)
            return facts.exports ?? ExportedSymbols()
        }
    }

    /// Walks the section headers: finds `.dynsym` and its string table, and any `swift5_*` section.
    private static func sectionFacts(
        _ r: Reader, _ reject: (String) -> Rejection, collectExports: Bool = false
    ) throws -> SectionFacts {
        let shoff = Int(clamping: r.u64(0x28))
        let shentsize = Int(r.u16(0x3A))
        let shnum = Int(r.u16(0x3C))
        let shstrndx = Int(r.u16(0x3E))
        guard shoff > 0, shnum > 0 else { throw reject("no section headers (stripped of sections?)") }
        guard shentsize >= 64, shoff <= r.count, shnum <= (r.count - shoff) / shentsize else {
            throw reject("truncated ELF: section headers run past the end of the file (\(r.count) bytes)")
        }
        func header(_ i: Int) -> (name: UInt32, type: UInt32, offset: Int, size: Int, link: Int, entsize: Int) {
            let at = shoff + i * shentsize
            return (
                r.u32(at), r.u32(at + 4), Int(clamping: r.u64(at + 0x18)), Int(clamping: r.u64(at + 0x20)),
                Int(r.u32(at + 0x28)), Int(clamping: r.u64(at + 0x38))
            )
        }
        func inFile(_ offset: Int, _ size: Int) -> Bool {
            offset >= 0 && size >= 0 && offset <= r.count && size <= r.count - offset
        }

        var facts = SectionFacts()
        if collectExports { facts.exports = ExportedSymbols() }
        if shstrndx < shnum {
            let names = header(shstrndx)
            if inFile(names.offset, names.size) {
                for i in 0..<shnum {
                    let h = header(i)
                    if let sectionName = r.cString(at: names.offset + Int(h.name), limit: names.offset + names.size),
                        sectionName.hasPrefix("swift5_")
                    {
                        facts.hasSwiftMetadata = true
                    }
                }
            }
        }
        for i in 0..<shnum {
            let dynsym = header(i)
            guard dynsym.type == 11 else { continue }  // SHT_DYNSYM
            facts.hasDynsym = true
            guard inFile(dynsym.offset, dynsym.size), dynsym.link < shnum else {
                throw reject("truncated ELF: .dynsym runs past the end of the file")
            }
            let strings = header(dynsym.link)
            guard inFile(strings.offset, strings.size) else {
                throw reject("truncated ELF: .dynstr runs past the end of the file")
            }
            let entsize = dynsym.entsize >= 24 ? dynsym.entsize : 24
            for s in 0..<(dynsym.size / entsize) {
                let at = dynsym.offset + s * entsize
                let info = r.bytes[at + 4]
                let shndx = r.u16(at + 6)
                let binding = info >> 4
                let symbolType = info & 0xF
                // Defined (shndx != 0): global or weak (1, 2) or GNU unique (10) functions (2) and objects (1).
                guard shndx != 0, binding == 1 || binding == 2 || binding == 10, symbolType == 1 || symbolType == 2
                else { continue }
                // A loader's inspection reads the names of functions (for the entry point) and unique symbols only: a
                // Swift image exports thousands of data symbols.
                guard symbolType == 2 || binding == 10 || facts.exports != nil else { continue }
                let symbol = r.cString(at: strings.offset + Int(r.u32(at)), limit: strings.offset + strings.size)
                if symbol == entrySymbol && binding != 10 && symbolType == 2 { facts.exportsEntry = true }
                if binding == 10, facts.uniqueSymbols.count < 5, let symbol { facts.uniqueSymbols.append(symbol) }
                guard let symbol, facts.exports != nil else { continue }
                if binding == 10 {
                    facts.exports?.unique.insert(symbol)
                } else if symbolType == 2 {
                    facts.exports?.functions.insert(symbol)
                } else {
                    facts.exports?.data.insert(symbol)
                }
            }
        }
        return facts
    }

    /// A short guess at what a non-ELF file is, for the message.
    private static func describeNonELF(_ r: Reader) -> String {
        let prefix = (0..<min(r.count, 512)).map { r.bytes[$0] }
        if prefix.starts(with: [0x21, 0x3C, 0x61, 0x72, 0x63, 0x68, 0x3E]) { return "an ar archive (static library)" }
        if prefix.starts(with: [0x23, 0x21]) { return "a script" }
        let isText = prefix.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || ($0 >= 0x20 && $0 != 0x7F) }
        return isText ? "text" : "unknown binary format"
    }

    private static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: return "i386"
        case 40: return "ARM"
        case 62: return "x86-64"
        case 183: return "aarch64"
        case 243: return "RISC-V"
        default: return "#\(machine)"
        }
    }

    /// Little-endian reads; callers have checked the bounds they rely on, and reads past the end give 0.
    /// Little-endian reads that return 0 past the end instead of trapping (the bytes are untrusted).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var count: Int { bytes.count }
        func u16(_ at: Int) -> UInt16 { at + 2 <= count ? UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 : 0 }
        func u32(_ at: Int) -> UInt32 { at + 4 <= count ? UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 : 0 }
        func u64(_ at: Int) -> UInt64 { at + 8 <= count ? UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 : 0 }
        func cString(at start: Int, limit: Int) -> String? {
            guard start >= 0, start < min(limit, count) else { return nil }
            var end = start
            while end < min(limit, count), bytes[end] != 0 { end += 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }
}
