import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// What `hubhost dev` decided from its command line, handed to the live preview front end.
public struct DevLaunch {
    public var options: DevLoop.Options
    public var bindAddress: String
    public var port: UInt16
    /// Plugins run in a worker this process supervises (false: `--in-process`, or this is the worker).
    public var supervises: Bool
    public var callTimeout: Double
    /// Where the supervisor records the versions it quarantines.
    public var probeCacheDirectory: URL
    /// The page's drawing of a frame.
    public var html: ViewDrawing
    /// Gallery mode's sheet of every shot: the SVG, its size and where each shot is on it.
    public var gallery: ([Showcase.Shot]) -> (svg: String, size: Size, places: [Rect])
    public var makeLogger: () -> Logger
    /// Writes the loaded host's problems to stderr, as every command does.
    public var reportProblems: (PluginHost) -> Void
    /// The line printed once the server listens on a port.
    public var servingLine: @Sendable (UInt16) -> String
    /// Says that the server cannot listen, and exits.
    public var cannotServe: @Sendable (Error) -> Never
}

/// The live preview's HTTP server is linked into `hubhost-dev` only: the server (Hummingbird, on SwiftNIO) is most
/// of that executable's code, and the preview's page needs the whole of Foundation, whose libraries and ICU data
/// would cost every `hubhost` start several milliseconds. `hubhost dev` in the `hubhost` executable therefore
/// replaces itself with `hubhost-dev` (same arguments; it sits beside `hubhost` in every build and install), where
/// `serve` is set.
public enum DevFrontEnd {
    /// Set by `hubhost-dev` before it parses the command line: runs the preview until the process ends.
    nonisolated(unsafe) public static var serve: ((DevLaunch) throws -> Never)?

    /// The executable name of the front end, beside `hubhost`.
    public static let executableName = "hubhost-dev"

    static func run(_ launch: DevLaunch) throws -> Never {
        if let serve { try serve(launch) }
        replaceProcess()
    }

    /// Replaces this process with `hubhost-dev` beside it, with the same arguments and environment; when that
    /// cannot be done, says why and exits 2.
    static func replaceProcess() -> Never {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let frontEnd = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(executableName).path
        let arguments = [frontEnd] + CommandLine.arguments.dropFirst()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(frontEnd, &argv)
        // Only reached when the exec failed.
        Diagnostics.print(
            "hubhost dev: the live preview runs in \(frontEnd), which cannot be started: \(String(cString: strerror(errno))) (build or install it beside hubhost)"
        )
        exit(ExitStatus.failed.rawValue)
    }
}
