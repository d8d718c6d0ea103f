import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where plugins are looked for: `--plugins DIR` (repeatable) first, else `HUBHOST_PLUGIN_PATH` (colon-separated),
/// else `./plugins` (the environment is ignored under setuid: `HostEnvironment`). Only the first source that names anything is used, so an explicit folder is never mixed
/// with the environment's.
public enum PluginFolders {
    public static let environmentVariable = HostEnvironment.pluginPath
    public static let defaultFolder = "plugins"

    public static func resolve(explicit: [String], environment: HostEnvironment = .current) -> [URL] {
        let explicit = explicit.filter { !$0.isEmpty }
        if !explicit.isEmpty { return explicit.map(url(for:)) }
        let fromEnvironment = (environment[environmentVariable] ?? "").split(separator: ":").map(String.init)
            .filter { !$0.isEmpty }
        if !fromEnvironment.isEmpty { return fromEnvironment.map(url(for:)) }
        return [url(for: defaultFolder)]
    }

    /// Every `*.so` file (or link to one) directly inside `folders`, sorted by path within each folder and
    /// deduplicated, so loading order — and so who wins a contested namespace — is deterministic.
    /// Missing folders are reported in `missing` rather than silently ignored.
    ///
    /// With several folders, one file reached through two of them (a folder and a symlink to it, a hard link, `/lib`
    /// and `/usr/lib`) is listed once, from the first: loading it twice made every plugin of the second a rejected
    /// duplicate of itself.
    /// `notUTF8`: the paths of `*.so` files whose names are not UTF-8, as `PathText.shownBytes` shows them: Swift
    /// would replace their bytes, and the file could not be found by that name ("No such file or directory").
    public static func pluginFiles(in folders: [URL]) -> (files: [URL], missing: [URL], notUTF8: [String]) {
        var files: [URL] = []
        var missing: [URL] = []
        var notUTF8: [String] = []
        var seen = Set<String>()
        var seenFiles = Set<FileIdentity>()
        for folder in folders {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory,
                let (names, oddNames) = entries(of: folder.path)
            else {
                missing.append(folder)
                continue
            }
            // A directory entry's name has no slash, so the standardized folder and the name are joined as a
            // string: URL's appending and standardizing per file showed over hundreds of files.
            let standardized = folder.standardizedFileURL.path
            let folderPath = standardized.hasSuffix("/") ? standardized : standardized + "/"
            for name in oddNames.sorted() where name.hasSuffix(".so") && seen.insert(folderPath + name).inserted {
                notUTF8.append(folderPath + name)
            }
            for name in names.sorted() where name.hasSuffix(".so") {
                let path = folderPath + name
                guard seen.insert(path).inserted else { continue }
                if folders.count > 1, let identity = FileIdentity(path), !seenFiles.insert(identity).inserted {
                    continue
                }
                files.append(URL(fileURLWithPath: path, isDirectory: false))
            }
        }
        return (files, missing, notUTF8)
    }

    /// The names in folder `path` (not "." or ".."), and those that are not UTF-8 as `PathText.shownBytes` shows
    /// them; nil when it cannot be read.
    private static func entries(of path: String) -> (names: [String], notUTF8: [String])? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        var notUTF8: [String] = []
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if let name = String(validating: bytes, as: UTF8.self) {
                if name != "." && name != ".." { names.append(name) }
            } else {
                notUTF8.append(PathText.shownBytes(bytes))
            }
        }
        return (names, notUTF8)
    }

    private static func url(for path: String) -> URL {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
    }
}

/// A file as the kernel knows it (device and inode, links followed), whatever path reached it.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The file open as `descriptor` (nil when it is not open).
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
