import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The only place hubhost reads its environment.
///
/// Under setuid or setgid (the real and effective ids differ) every override is ignored, as glibc ignores
/// `LD_LIBRARY_PATH` there: whoever starts the process must not choose which plugins, which probe program or
/// which cache folder a privileged hubhost uses. `HUBHOST_SAFE_MODE` is honoured either way: it only restricts.
public struct HostEnvironment: Sendable {
    public static let pluginPath = "HUBHOST_PLUGIN_PATH"
    public static let executable = "HUBHOST_EXECUTABLE"
    public static let probe = "HUBHOST_PROBE"
    public static let probeChild = "HUBHOST_PROBE_CHILD"
    public static let safeMode = "HUBHOST_SAFE_MODE"

    /// nil: this process's environment, each variable read when asked (`ProcessInfo.environment` copies all of
    /// them into a dictionary, a cost every command paid several times at start-up).
    private let variables: [String: String]?
    /// True under setuid or setgid.
    public let isPrivileged: Bool

    public init(variables: [String: String], isPrivileged: Bool) {
        self.variables = variables
        self.isPrivileged = isPrivileged
    }

    private init(isPrivileged: Bool) {
        self.variables = nil
        self.isPrivileged = isPrivileged
    }

    /// This process's environment.
    public static var current: HostEnvironment {
        HostEnvironment(isPrivileged: getuid() != geteuid() || getgid() != getegid())
    }

    /// One variable of this process, as it is (no setuid rule): for what a supervisor tells its own worker.
    /// Read alone with `getenv`; `ProcessInfo.environment` copies every variable into a dictionary.
    public static func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    private func value(_ name: String) -> String? {
        guard let variables else { return Self.variable(name) }
        return variables[name]
    }

    /// An override's value; nil when unset, empty, or the process is privileged.
    public subscript(name: String) -> String? {
        guard !isPrivileged, let value = value(name), !value.isEmpty else { return nil }
        return value
    }

    /// `HUBHOST_SAFE_MODE=1`: load no plugins.
    public var safeModeRequested: Bool { value(Self.safeMode) == "1" }

    /// The user's cache folder: `$XDG_CACHE_HOME`, else `$HOME/.cache`; privileged, the effective user's home
    /// from the password database.
    public var cacheHome: URL {
        // A relative value is ignored, as the XDG spec says (it was resolved against the working directory).
        if let xdg = self["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg) }
        if let home = self["HOME"] { return URL(fileURLWithPath: home).appendingPathComponent(".cache") }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            return URL(fileURLWithPath: String(cString: directory)).appendingPathComponent(".cache")
        }
        return URL(fileURLWithPath: "/nonexistent/.cache")
    }
}
