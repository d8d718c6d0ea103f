import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Private, content-named copies of plugin images. The host never maps the discovered file itself: a rebuild
/// writing into it would corrupt the running code, and glibc's dlopen would hand back the already-loaded image
/// for the same file. A copy named by content is a new file whenever the content changes.
final class PrivateCopies {
    let directory: URL
    private let directoryPath: String
    /// Created once per host rather than checked on every copy.
    private var directoryReady = false

    /// Copies held in memory (a memfd each, loaded as `/proc/self/fd/N`) instead of files: for probe children,
    /// which load each plugin once and exit. The loaded bytes are still exactly the checked ones, and a scan of a
    /// folder creates and deletes no files (on ext4, creating files where many were just deleted is the
    /// slowest part of a scan). Falls back to a file when the kernel has no memfd.
    let inMemory: Bool

    init(directory: URL, inMemory: Bool = false) {
        self.directory = directory
        self.directoryPath = directory.path
        self.inMemory = inMemory
    }

    /// `$XDG_CACHE_HOME/hubhost/images`, else `~/.cache/hubhost/images`.
    static func defaultDirectory(environment: HostEnvironment = .current) -> URL {
        environment.cacheHome.appendingPathComponent("hubhost/images")
    }

    /// A copy of `contents` (the validated bytes of `file`) at `<name>-<hash prefix>[-<n>].so`. An existing copy with
    /// exactly these bytes is reused unless `avoiding` lists its path (a copy still mapped, e.g. a pinned Swift image: loading that path again would
    /// return the old image). Written to a temporary name, then renamed, so no reader ever sees a partial file.
    func copy(_ file: URL, contents: Data, contentHash: String, avoiding inUse: Set<String>) throws -> URL {
        try place(file, contents: contents, contentHash: contentHash, avoiding: inUse).copy
    }

    /// `copy`, also saying whether this call wrote the copy (false: an earlier run's copy with these bytes).
    func place(_ file: URL, contents: Data, contentHash: String, avoiding inUse: Set<String>) throws -> (
        copy: URL, written: Bool
    ) {
        if inMemory, let copy = Self.memoryCopy(named: file.lastPathComponent, contents: contents) {
            return (copy, true)
        }
        if !directoryReady {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            directoryReady = true
        }
        // Paths as strings: URL's appending and splitting cost more than the copy's write for a small plugin.
        let name = file.lastPathComponent
        // Cut so that the copy's temporary name (".STEM-<16>-<n>.so.<pid>.tmp") stays within 255 bytes.
        let stem = PathText.prefix(
            name.hasSuffix(".so") ? String(name.dropLast(3)) : URL(fileURLWithPath: name).deletingPathExtension().path,
            bytes: 200)
        let prefix = String(contentHash.prefix(16))  // 64 bits name it; reuse is checked byte for byte
        let folder = directoryPath
        var attempt = 0
        var targetName: String
        var target: String
        repeat {
            targetName = attempt == 0 ? "\(stem)-\(prefix).so" : "\(stem)-\(prefix)-\(attempt).so"
            target = folder + "/" + targetName
            attempt += 1
        } while inUse.contains(target)

        if Self.holds(target, exactly: contents) {
            utimes(target, nil)  // fresh again: `prune` keeps what is still used
            return (URL(fileURLWithPath: target, isDirectory: false), false)
        }
        let temporary = folder + "/.\(targetName).\(getpid()).tmp"
        do { try Self.write(contents, to: temporary) } catch {
            unlink(temporary)  // a part written before the disk filled
            throw error
        }
        guard rename(temporary, target) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw PrivateCopyError(description: "rename to \(target): \(why)")
        }
        return (URL(fileURLWithPath: target, isDirectory: false), true)
    }
}

extension PrivateCopies {
    /// Lets go of a copy this process no longer maps: a memory copy's memfd is closed. A copy in the cache folder
    /// stays: it is named by its content and shared by every hubhost run on this cache, one of which may be
    /// about to load it (a run that deleted the copy of a plugin it refused made concurrent renders fail to load
    /// that plugin). The daily prune deletes copies no run has used for a week.
    static func discard(_ copy: URL) {
        if let fd = memoryDescriptor(copy) { close(fd) }
    }

    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    /// glibc's memfd_create (the Swift Glibc module does not export it).
    private static let memfdCreate = dlsym(nil, "memfd_create").map { unsafeBitCast($0, to: MemfdCreate.self) }
    private static let descriptorPrefix = "/proc/self/fd/"

    /// A memfd holding `contents`, as the path dlopen can load; nil when memfds are unavailable.
    static func memoryCopy(named name: String, contents: Data) -> URL? {
        guard let create = memfdCreate else { return nil }
        let closeOnExec: UInt32 = 0x1
        let executable: UInt32 = 0x10  // MFD_EXEC: needed where vm.memfd_noexec is set; older kernels refuse it
        var fd = create(name, closeOnExec | executable)
        if fd < 0, errno == EINVAL { fd = create(name, closeOnExec) }
        guard fd >= 0 else { return nil }
        guard contents.withUnsafeBytes({ writeAll(fd, $0) }) else {
            close(fd)
            return nil
        }
        return URL(fileURLWithPath: descriptorPrefix + String(fd))
    }

    /// The memfd behind a memory copy's path.
    static func memoryDescriptor(_ copy: URL) -> Int32? {
        guard copy.path.hasPrefix(descriptorPrefix) else { return nil }
        return Int32(copy.path.dropFirst(descriptorPrefix.count))
    }

    /// Deletes copies not used for `age` seconds (and temporary files left by interrupted writes), except
    /// `inUse`. Every build of a plugin leaves a copy, so without this the cache only grows. Deleting a file
    /// another process has mapped is safe on Linux: its mapping keeps the inode. Returns what was deleted.
    ///
    /// Only this cache's own files: a copy's name (`<name>-<16 hex digits>[-<n>].so`) and bytes whose hash starts
    /// with those digits, or the temporary name of one (`.<copy name>.<pid>.tmp`). `--plugin-cache` may name a
    /// folder that holds the user's own libraries, even the plugins themselves.
    @discardableResult
    func prune(olderThan age: Double, keeping inUse: Set<String>, now: Double = Date().timeIntervalSince1970)
        -> [String]
    {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var deleted: [String] = []
        for name in names {
            // The cache check's file (`.hubhost-write-XXXXXX`) is the cache's own too: a run killed during the
            // check leaves it.
            let temporary = Self.temporaryCopyName(name) || Self.isWriteCheckName(name)
            let hashPrefix = Self.copyHashPrefix(name)
            guard temporary || hashPrefix != nil else { continue }
            let path = directory.appendingPathComponent(name).path
            var info = stat()
            guard !inUse.contains(path), lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                now - Double(info.st_mtim.tv_sec) > age
            else { continue }
            if let hashPrefix, ContentDigest.of(file: URL(fileURLWithPath: path))?.hasPrefix(hashPrefix) != true {
                continue
            }
            if unlink(path) == 0 { deleted.append(name) }
        }
        return deleted.sorted()
    }

    /// Deletes the copies of the plugin file name `copyName` is a copy of (`<name>-<hash>[-<n>].so`) beyond the
    /// `newest` most recently used, none in `inUse`, and only this cache's own (as `prune` checks them). Returns
    /// the names deleted.
    @discardableResult
    func pruneVersions(like copyName: String, keepingNewest newest: Int, keeping inUse: Set<String>) -> [String] {
        guard let stem = Self.copyStem(copyName),
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        var versions: [(path: String, name: String, hashPrefix: String, used: Double)] = []
        for name in names where name.hasPrefix(stem) && Self.copyStem(name) == stem {
            let path = directory.appendingPathComponent(name).path
            var info = stat()
            guard let hashPrefix = Self.copyHashPrefix(name), lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG
            else { continue }
            versions.append((path, name, hashPrefix, Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9))
        }
        guard versions.count > newest else { return [] }
        var deleted: [String] = []
        for version in versions.sorted(by: { $0.used > $1.used }).dropFirst(newest) where !inUse.contains(version.path)
        {
            guard ContentDigest.of(file: URL(fileURLWithPath: version.path))?.hasPrefix(version.hashPrefix) == true
            else { continue }
            if unlink(version.path) == 0 { deleted.append(version.name) }
        }
        return deleted.sorted()
    }

    /// The plugin file name's stem of a copy's name (`libx` of `libx-<16 hex digits>[-<n>].so`), else nil.
    static func copyStem(_ name: String) -> String? {
        guard let hashPrefix = copyHashPrefix(name) else { return nil }
        let parts = name.dropLast(3).split(separator: "-", omittingEmptySubsequences: false)
        let kept = parts.last.map(String.init) == hashPrefix ? parts.dropLast(1) : parts.dropLast(2)
        return kept.joined(separator: "-")
    }

    /// The 16 hex digits of a copy's name (`<name>-<digits>.so` or `<name>-<digits>-<n>.so`), else nil.
    static func copyHashPrefix(_ name: String) -> String? {
        guard name.hasSuffix(".so") else { return nil }
        let parts = name.dropLast(3).split(separator: "-", omittingEmptySubsequences: false)
        let isHash = { (part: Substring) in part.count == 16 && part.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        if parts.count >= 2, isHash(parts[parts.count - 1]) { return String(parts[parts.count - 1]) }
        if parts.count >= 3, isNumber(parts[parts.count - 1]), isHash(parts[parts.count - 2]) {
            return String(parts[parts.count - 2])
        }
        return nil
    }

    private static func isNumber(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// True for `.hubhost-write-` and six characters of `mkstemp`: the file `CacheFolder` writes to check the folder.
    static func isWriteCheckName(_ name: String) -> Bool {
        name.hasPrefix(".hubhost-write-") && name.utf8.count == ".hubhost-write-".utf8.count + 6
    }

    /// True for `.<copy name>.<pid>.tmp`, what an interrupted write of a copy leaves.
    static func temporaryCopyName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return false }
        let inner = name.dropFirst().dropLast(4)
        guard let dot = inner.lastIndex(of: "."), isNumber(inner[inner.index(after: dot)...]) else { return false }
        return copyHashPrefix(String(inner[..<dot])) != nil
    }

    /// `prune`, at most once a day (a `.pruned` file's mtime says when it last ran): a start-up that loads
    /// hundreds of plugins need not list and stat every copy in the folder each time.
    func pruneDaily(olderThan age: Double, keeping inUse: Set<String>) -> [String] {
        let marker = directory.appendingPathComponent(".pruned", isDirectory: false).path
        let now = Date().timeIntervalSince1970
        var info = stat()
        if stat(marker, &info) == 0, now - Double(info.st_mtim.tv_sec) < 24 * 3600 { return [] }
        let deleted = prune(olderThan: age, keeping: inUse, now: now)
        let fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd >= 0 {
            futimens(fd, nil)
            close(fd)
        }
        return deleted
    }

    /// True when `path` is a regular file with exactly `contents` (a cached copy from an earlier run).
    static func holds(_ path: String, exactly contents: Data) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == contents.count else {
            return false
        }
        var existing = Data(count: contents.count)
        let complete = existing.withUnsafeMutableBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = read(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        return complete && existing == contents
    }

    /// Writes `contents` to a new file with plain POSIX calls (Foundation's writers add an extra temporary file
    /// and attribute calls, which dominate the load time of small plugins).
    static func write(_ contents: Data, to path: String) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw failure("cannot create \(path)") }
        defer { close(fd) }
        guard contents.withUnsafeBytes({ writeAll(fd, $0) }) else { throw failure("cannot write \(path)") }
    }

    private static func failure(_ what: String) -> Error {
        PrivateCopyError(description: "\(what): \(String(cString: strerror(errno)))")
    }
}

/// A private copy that could not be made, and why.
struct PrivateCopyError: Error, CustomStringConvertible {
    var description: String
}

/// What is mapped into this process: the dynamic loader's images, and `/proc/self/maps`.
enum MappedImages {
    /// True while the dynamic loader still has the image at `path` (a second `dlopen` of it, or NODELETE): asked
    /// with `RTLD_NOLOAD`, which never loads anything. The loader unmaps an image when its last reference goes,
    /// so this answers what /proc/self/maps would, without the kernel formatting every mapping of the process
    /// (a scan of hundreds of plugins unloads each one).
    static func loaderHolds(_ path: String) -> Bool {
        guard let handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD) else { return false }
        dlclose(handle)  // drops the reference the question took
        return true
    }

    /// The whole of /proc/self/maps. Read to EOF with read(2): procfs files report size 0, and readers that
    /// trust the size (or read one chunk) silently drop the later mappings.
    static func readMaps() -> [UInt8] {
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }
}
