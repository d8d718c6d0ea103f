import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The working directory and umask the user started hubhost with, taken before any plugin code runs.
///
/// Plugin code shares the process, and a plugin can `chdir` or `umask(0)` in any call. The files the user names
/// (`-o`, `--out`, `--junit`) are therefore found from the directory the user was in, and made with the user's
/// umask, whatever the process's are by the time they are written.
public enum ProcessStart {
    nonisolated(unsafe) private static var directory: String?
    nonisolated(unsafe) private static var mask: mode_t?

    /// Takes the working directory and umask now (first thing in `main`). Returns why relative paths cannot be
    /// trusted to mean the user's folder, when the working directory has no name (deleted, or a path longer than
    /// the system allows): Foundation then takes relative paths from `/`, which wrote `-o g.html` to `/g.html`.
    public static func capture() -> String? {
        mask = currentMask()
        for fd in Int32(0)...2 { standardFlags[Int(fd)] = fcntl(fd, F_GETFL) }
        atexit { ProcessStart.restoreStandardDescriptors() }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else {
            let why = errno == ENOENT ? "it was deleted" : String(cString: strerror(errno))
            return "the working directory cannot be named (\(why)), so relative paths would not mean it; run "
                + "hubhost from an existing folder with a shorter path"
        }
        directory = String(cString: buffer)
        return nil
    }

    /// The file status flags of descriptors 0–2 at start (-1: closed): they are the user's terminal or pipes, shared
    /// with the shell, and plugin code may set O_NONBLOCK on them.
    nonisolated(unsafe) private static var standardFlags: [Int32] = [-1, -1, -1]

    /// Puts O_NONBLOCK of descriptors 0–2 back as hubhost found it (a shell left with a non-blocking terminal gets
    /// EAGAIN from the next program). Run at exit, also by the exits that skip `atexit`.
    public static func restoreStandardDescriptors() {
        for fd in Int32(0)...2 where standardFlags[Int(fd)] >= 0 {
            let now = fcntl(fd, F_GETFL)
            guard now >= 0, (now ^ standardFlags[Int(fd)]) & O_NONBLOCK != 0 else { continue }
            _ = fcntl(fd, F_SETFL, (now & ~O_NONBLOCK) | (standardFlags[Int(fd)] & O_NONBLOCK))
        }
    }

    /// The process's umask now (reading it means setting it: it is put straight back).
    public static func currentMask() -> mode_t {
        let current = umask(0o022)
        umask(current)
        return current
    }

    /// `path` as the user meant it: a relative path joined to the directory hubhost started in (the current one
    /// when nothing was captured, as in tests that call the library directly).
    public static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), path != "-" else { return path }
        let base = directory ?? FileManager.default.currentDirectoryPath
        return path.isEmpty ? base : (base.hasSuffix("/") ? base + path : base + "/" + path)
    }

    /// The umask hubhost started with (the current one when nothing was captured).
    public static var userMask: mode_t { mask ?? currentMask() }

    /// Makes `folder` and its missing parents with the user's umask, as `mkdir -p` run by the user would.
    public static func makeFolders(_ folder: String) throws {
        let path = absolute(folder)
        var status = stat()
        if stat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFDIR else {
                throw FolderFailure(path: folder, reason: "not a folder")
            }
            return
        }
        let parent = PathText.folder(path)
        if parent != path && parent != "." { try makeFolders(parent) }
        if mkdir(path, 0o777 & ~userMask) != 0 && errno != EEXIST {
            throw FolderFailure(path: folder, reason: String(cString: strerror(errno)))
        }
    }

    public struct FolderFailure: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot make folder \(path): \(reason)" }
    }
}
