import Foundation

/// Private, content-named copies of plugin images. The host never maps the discovered file itself: a rebuild
/// writing into it would corrupt the running code, and glibc's dlopen would hand back the already-loaded image
/// for the same file. A copy named by content is a new file whenever the content changes.
struct PrivateCopies {
    let directory: URL

    /// `$XDG_CACHE_HOME/hubhost/images`, else `~/.cache/hubhost/images`.
    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("hubhost/images")
    }

    /// A copy of `contents` (the validated bytes of `file`) at `<name>-<hash prefix>[-<n>].so`. An existing copy of the right size is reused unless
    /// `avoiding` lists its path (a copy still mapped, e.g. a pinned Swift image: loading that path again would
    /// return the old image). Written to a temporary name, then renamed, so no reader ever sees a partial file.
    func copy(_ file: URL, contents: Data, contentHash: String, avoiding inUse: Set<String>) throws -> URL {
        let size = contents.count
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stem = file.deletingPathExtension().lastPathComponent
        let prefix = String(contentHash.prefix(16))
        var attempt = 0
        var target: URL
        repeat {
            target = directory.appendingPathComponent(attempt == 0 ? "\(stem)-\(prefix).so" : "\(stem)-\(prefix)-\(attempt).so")
            attempt += 1
        } while inUse.contains(target.path)

        if let attributes = try? FileManager.default.attributesOfItem(atPath: target.path),
           (attributes[.size] as? NSNumber)?.intValue == size {
            return target
        }
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp")
        try? FileManager.default.removeItem(at: temporary)
        guard FileManager.default.createFile(atPath: temporary.path, contents: contents,
                                             attributes: [.posixPermissions: 0o755]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot write \(temporary.path)"])
        }
        guard rename(temporary.path, target.path) == 0 else {
            let why = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename to \(target.path): \(why)"])
        }
        return target
    }
}

/// What is mapped into this process, from `/proc/self/maps`.
enum MappedImages {
    /// True when any mapping's file is `path` (a deleted file shows as "path (deleted)").
    static func isMapped(_ path: String) -> Bool {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return false }
        for line in maps.split(separator: "\n") {
            // Format: address perms offset dev inode pathname; the path starts at the first '/'.
            guard let slash = line.firstIndex(of: "/") else { continue }
            let mapped = line[slash...]
            if mapped == path || mapped == path + " (deleted)" { return true }
        }
        return false
    }
}
