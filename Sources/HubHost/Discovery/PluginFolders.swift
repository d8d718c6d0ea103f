import FoundationEssentials

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
    public static func pluginFiles(in folders: [URL]) -> (files: [URL], missing: [URL]) {
        var files: [URL] = []
        var missing: [URL] = []
        var seen = Set<String>()
        for folder in folders {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory,
                let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
            else {
                missing.append(folder)
                continue
            }
            // A directory entry's name has no slash, so the standardized folder and the name are joined as a
            // string: URL's appending and standardizing per file showed over hundreds of files.
            let standardized = folder.standardizedFileURL.path
            let folderPath = standardized.hasSuffix("/") ? standardized : standardized + "/"
            for name in names.sorted() where name.hasSuffix(".so") {
                let path = folderPath + name
                if seen.insert(path).inserted { files.append(URL(fileURLWithPath: path, isDirectory: false)) }
            }
        }
        return (files, missing)
    }

    private static func url(for path: String) -> URL {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
    }
}
