import FoundationEssentials

/// What the conformance suite found in one plugin file, as `hubhost probe` prints it (its last JSON line).
public struct ProbeReport: Codable, Sendable {
    public struct Plugin: Codable, Sendable {
        public var id: String
        public var name: String?
        public var version: String
        public var abi: String
        public var swift: Bool
    }

    public struct Namespace: Codable, Sendable {
        public var namespace: String
        public var components: [String]
    }

    /// One check of the suite. A failed `fatal` check quarantines the file (the host would misbehave with it);
    /// a failed non-fatal one fails `hubhost validate` but the plugin may still be loaded in development.
    public struct Check: Codable, Sendable, CustomStringConvertible {
        public var name: String
        public var component: String?
        public var passed: Bool
        public var fatal: Bool
        public var message: String?
        public var description: String {
            "\(passed ? "ok  " : fatal ? "FAIL" : "fail") \(name)\(component.map { " [\($0)]" } ?? "")"
                + (message.map { ": \($0)" } ?? "")
        }
    }

    public var file: String
    public var hash: String?
    public var plugin: Plugin?
    public var namespaces: [Namespace] = []
    public var checks: [Check] = []

    /// True when no fatal check failed: the host may load the file.
    public var loadable: Bool { !checks.contains { !$0.passed && $0.fatal } }
    /// True when every check passed: what `hubhost validate` requires.
    public var conforms: Bool { checks.allSatisfy(\.passed) }
    /// The first fatal failure.
    public var firstFatal: Check? { checks.first { !$0.passed && $0.fatal } }

    public init(file: String, hash: String?) {
        self.file = file
        self.hash = hash
    }
}

/// A progress line of the probe child, printed (and flushed) before each phase, so that when the child dies the
/// parent knows where: `{"phase":"configure","component":"demo:row"}`.
public struct ProbePhase: Codable, Sendable {
    public var phase: String
    public var component: String?
    /// The sample model the call was given ("full"), when there was one.
    public var model: String?

    public init(phase: String, component: String? = nil, model: String? = nil) {
        self.phase = phase
        self.component = component
        self.model = model
    }
}

/// Why a file version may not be loaded: its probe crashed, hung or failed. Keyed by the file's stamp and hash,
/// so it clears as soon as the file changes.
public struct QuarantineRecord: Codable, Sendable, CustomStringConvertible {
    /// `exit`: plugin code ended the process (`exit()`), seen by a worker's supervisor.
    public enum Kind: String, Codable, Sendable { case crash, hang, failure, exit }

    public var file: String
    public var size: Int64
    public var mtimeNanos: Int64
    public var hash: String
    public var kind: Kind
    /// The phase the probe was in ("init", "configure", …) and the component, when it was exercising one.
    public var phase: String
    public var component: String?
    /// The model it was called for: "body[2] (id "c")" when a worker faulted on one, "sample model "full""
    /// when a probe did.
    public var model: String?
    /// "SIGSEGV" for crashes.
    public var signal: String?
    /// The failure message, or what happened ("killed after 5 s").
    public var message: String
    /// The end of the child's stderr.
    public var stderrTail: String
    public var date: Date
    /// Set when the fault was in a function a module file binds (`"eager": true`, or an `inject`): the digest of
    /// the module files in the plugin's folder then. The binding, not only the plugin, may be what was wrong, so
    /// a change to those files clears the quarantine as a change of the plugin does.
    public var moduleFilesDigest: String?
    /// A stop signal (SIGTERM…) plugin code sent its own process (`kill(0, SIGTERM)` in init): its fault, kept as a
    /// crash is, not taken for a user's kill.
    public var sentByPlugin: Bool?
    /// A crash: where in the plugin's file the faulting code was (`addr2line -f -e FILE 0x…`), when the probe
    /// child could tell.
    public var codeOffset: UInt64?

    /// False once the module files it was recorded against have changed: the plugin gets probed and loaded again.
    public var stillApplies: Bool {
        guard let moduleFilesDigest else { return true }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        return ModuleFile.digest(ofFilesIn: folder) == moduleFilesDigest
    }

    /// "crashed with SIGSEGV in init", "hung in init (killed after 5 s)", "failed in configure [demo:row]: …".
    public var reason: String {
        let place = phase + (component.map { " [\($0)]" } ?? "") + (model.map { " for \($0)" } ?? "")
        switch kind {
        case .exit: return "exited the process in \(place)" + (message.isEmpty ? "" : " (\(message))")
        case .crash:
            let at = codeOffset.map { " at \(URL(fileURLWithPath: file).lastPathComponent)+0x\(String($0, radix: 16))" }
            return "crashed with \(signal ?? "a signal") in \(place)" + (message.isEmpty ? "" : ": \(message)")
                + (at ?? "")
        case .hang: return "hung in \(place) (\(message))"
        case .failure: return "failed in \(place): \(message)"
        }
    }

    public var description: String { "\(URL(fileURLWithPath: file).lastPathComponent): quarantined: \(reason)" }

    /// A file that is not a loadable image, or an init that returned false (no crash): loading the file in the
    /// host is safe, the loader says why it refuses it (before running any of it, or once init returned).
    public var loaderRejectsItself: Bool {
        kind == .failure && (phase == "ELF image" || phase == "descriptor and init")
    }

    /// The probe was ended by a signal that asks a process to end (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGKILL):
    /// most likely from outside (a user's kill, a closed terminal, the out-of-memory killer), seldom plugin code.
    /// Kept out of its run, never remembered: the next run probes it again.
    public var endedFromOutside: Bool {
        kind == .crash && Self.stopSignalNames.contains(signal ?? "") && sentByPlugin != true
    }

    /// The signals that ask a process to end, by name.
    static let stopSignalNames: Set<String> = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL"]
}
