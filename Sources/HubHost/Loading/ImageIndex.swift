import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// What the host learnt about plugin files it validated and copied, so a warm start loads an unchanged file
/// without reading it again: `images-index.tsv` in the copies folder maps a file's stamp to its content hash,
/// whether it is a Swift image, and the private copy made from it (with that copy's own stamp).
///
/// A file is "unchanged" when size, mtime, ctime and inode all match, as git's index decides; ctime is there
/// because tools that keep mtimes (`cp -p`, `rsync -a`, `touch -r`) cannot set it. A stamp is only recorded when
/// the file did not change while it was read and is older than `racyWindow` (git's "racily clean" rule): a
/// rewrite within the file system's timestamp granularity of the read could otherwise keep the stamp. The copy
/// is trusted by its stamp too; it is written once under its final name (temp + rename) in the user's own cache.
///
/// # Thread safety
/// Not thread-safe; owned by one `PluginHost`. Several processes may share the file: it is replaced atomically,
/// the last writer wins, and a lost line only means that file is read and hashed again.
final class ImageIndex {
    /// The part of `stat` that identifies a file version: the probe cache's stamp, plus ctime.
    struct Stamp: Equatable {
        var file: FileStamp
        var ctimeNanos: Int64

        /// nil unless `path` is a regular file (after following links).
        static func of(_ path: String) -> Stamp? {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return Stamp(file: FileStamp(info), ctimeNanos: FileStamp.nanoseconds(info.st_ctim))
        }

        var fields: String { "\(file.size)\t\(file.mtimeNanos)\t\(ctimeNanos)\t\(file.inode)" }
    }

    /// One validated file version and its private copy.
    struct Entry: Equatable {
        var file: Stamp
        var hash: String
        var isSwiftImage: Bool
        /// The copy's file name in the copies folder, and its stamp when it was made or last checked.
        var copyName: String
        var copy: Stamp
    }

    /// What a hit gives the loader instead of reading the file.
    struct Known {
        var hash: String
        var isSwiftImage: Bool
        var copy: URL
    }

    /// Stamps younger than this are not recorded (FAT's mtime granularity is 2 s; ext4's a few milliseconds).
    static let racyWindow: Int64 = 2_000_000_000
    /// A copy reused through the index is touched at most this often, so `PrivateCopies.prune` keeps it.
    static let touchInterval: Int64 = 24 * 3600 * 1_000_000_000

    /// Paths kept as strings: URL's path and appending are slow enough to show over hundreds of plugins.
    private let directoryPath: String
    private let filePath: String
    let identity: String
    private var entries: [String: Entry]
    private var changed = false

    /// - Parameter identity: the host build whose checks the entries passed; another build starts afresh.
    init(directory: URL, identity: String) {
        directoryPath = directory.path
        filePath = directoryPath + "/images-index.tsv"
        self.identity = identity.replacing("\t", with: " ").replacing("\n", with: " ")
        entries = Self.read(filePath, identity: self.identity) ?? [:]
    }

    /// The recorded facts of `file` when its stamp and its copy's stamp are unchanged and the copy's path is not
    /// in `inUse` (mapped already: loading it again would return that image).
    func known(_ file: String, stamp: Stamp?, avoiding inUse: Set<String>) -> Known? {
        guard let stamp, var entry = entries[file], entry.file == stamp else { return nil }
        let copy = directoryPath + "/" + entry.copyName
        guard !inUse.contains(copy), let copyStamp = Stamp.of(copy), copyStamp == entry.copy else { return nil }
        if Self.now() - copyStamp.file.mtimeNanos > Self.touchInterval {
            utimes(copy, nil)
            if let touched = Stamp.of(copy) {
                entry.copy = touched
                entries[file] = entry
                changed = true
            }
        }
        return Known(
            hash: entry.hash, isSwiftImage: entry.isSwiftImage, copy: URL(fileURLWithPath: copy, isDirectory: false))
    }

    /// Records that `file`, stamped `before` it was read, validated as `image` and was copied to `copy`, unless
    /// it changed meanwhile or is too young to be told apart from a rewrite by its stamp.
    func remember(_ file: URL, before: Stamp?, image: PluginImageInfo, copy: URL) {
        let copyPath = copy.path
        let filePath = file.path
        guard let before, copyPath.hasPrefix(directoryPath + "/"), Stamp.of(filePath) == before,
            case let copyName = String(copyPath.dropFirst(directoryPath.count + 1)),
            !copyName.utf8.contains(UInt8(ascii: "/")),
            !Self.unlisted(filePath), !Self.unlisted(copyName),
            Self.now() - max(before.file.mtimeNanos, before.ctimeNanos) > Self.racyWindow,
            let copyStamp = Stamp.of(copyPath)
        else { return }
        let entry = Entry(
            file: before, hash: image.contentHash, isSwiftImage: image.isSwiftImage, copyName: copyName,
            copy: copyStamp)
        if entries[filePath] != entry {
            entries[filePath] = entry
            changed = true
        }
    }

    /// Writes the index when something changed (atomically).
    func save() {
        guard changed else { return }
        changed = false
        var text = Self.header + identity + "\n"
        for (path, entry) in entries.sorted(by: { $0.key < $1.key }) {
            text += "\(entry.file.fields)\t\(entry.hash)\t\(entry.isSwiftImage ? "s" : "c")\t"
            text += "\(entry.copy.fields)\t\(entry.copyName)\t\(path)\n"
        }
        guard let output = try? OutputFile(path: filePath) else { return }
        output.write(Data(text.utf8))
        try? output.commit()
    }

    private static let header = "hubhost image index 1\t"

    /// Paths the line format cannot hold; such files are simply read every time.
    private static func unlisted(_ path: String) -> Bool { path.utf8.contains { $0 == 0x09 || $0 == 0x0A } }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// The entries of an index from the same host build; nil when missing or from another build. Damaged lines
    /// are skipped (those files are read again).
    private static func read(_ path: String, identity: String) -> [String: Entry]? {
        guard case .success(let data) = RegularFile.read(path) else { return nil }
        let lines = TabSeparatedLines(data: data)
        guard lines.header == header + identity else { return nil }
        var entries: [String: Entry] = [:]
        lines.forEachRecord(fieldCount: 12) { f in
            guard f.count == 12, f.isCharacter(5, UInt8(ascii: "s")) || f.isCharacter(5, UInt8(ascii: "c")),
                let file = stamp(f, at: 0), let copy = stamp(f, at: 6)
            else { return }
            // A copy name is a plain file name in this folder, never a path to elsewhere.
            let copyName = f.string(10)
            guard !copyName.isEmpty, !copyName.utf8.contains(UInt8(ascii: "/")), !copyName.hasPrefix(".") else {
                return
            }
            entries[f.string(11)] = Entry(
                file: file, hash: f.string(4), isSwiftImage: f.isCharacter(5, UInt8(ascii: "s")), copyName: copyName,
                copy: copy)
        }
        return entries
    }

    private static func stamp(_ f: TabSeparatedLines.Fields, at i: Int) -> Stamp? {
        guard let size = f.int64(i), let mtime = f.int64(i + 1), let ctime = f.int64(i + 2), let inode = f.uint64(i + 3)
        else { return nil }
        return Stamp(file: FileStamp(size: size, mtimeNanos: mtime, inode: inode), ctimeNanos: ctime)
    }
}
