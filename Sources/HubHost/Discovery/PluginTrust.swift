import CCrypto
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Which discovered files may be loaded at all, decided before any of their code runs (before the probe too).
///
/// Plugins are code and run with the user's rights, so a file that someone else could have replaced is refused,
/// as ssh refuses a key file and sudo a sudoers file others can write: a plugin file or its folder writable by
/// group or others, or owned by a user other than the one running hubhost or root. `--trusted-hashes` narrows
/// loading to listed SHA-256 digests; safe mode loads nothing.
public struct PluginTrust: Sendable {
    /// Skip the ownership and permission checks (`--allow-unsafe-permissions`).
    public var allowUnsafePermissions = false
    /// When set, only files whose SHA-256 is listed load (`--trusted-hashes FILE`).
    public var trustedDigests: TrustedDigests?
    /// Load no plugins at all (`--safe-mode`, `HUBHOST_SAFE_MODE=1`).
    public var safeMode = false

    public init(allowUnsafePermissions: Bool = false, trustedDigests: TrustedDigests? = nil, safeMode: Bool = false) {
        self.allowUnsafePermissions = allowUnsafePermissions
        self.trustedDigests = trustedDigests
        self.safeMode = safeMode
    }

    /// Why `file` must not be loaded, or nil.
    public func refusal(of file: URL) -> String? {
        var folders: [String: String?] = [:]
        return refusal(of: file, folderProblems: &folders)
    }

    /// `refusal(of:)` for many files, each folder checked once.
    public func refusals(of files: [URL]) -> [String?] {
        var folders: [String: String?] = [:]
        return files.map { refusal(of: $0, folderProblems: &folders) }
    }

    /// `folderProblems`: what was found of folders already checked.
    private func refusal(of file: URL, folderProblems: inout [String: String?]) -> String? {
        var name: String { file.lastPathComponent }  // only for a refusal
        // A link to a device or a folder is not a plugin, whatever its mode says.
        var status = stat()
        if stat(file.path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            return "\(name): refused: not a regular file"
        }
        if !allowUnsafePermissions {
            let path = file.path
            let folder = PathText.folder(path)
            if let problem = Self.permissionProblem(path, what: "the file") {
                return "\(name): refused: \(problem), or pass --allow-unsafe-permissions"
            }
            // Through a link, the file is the target's: whoever can write the target's folder can replace it.
            if let target = Self.linkTarget(path), PathText.folder(target) != folder {
                let targetFolder = PathText.folder(target)
                if folderProblems[targetFolder] == nil {
                    folderProblems[targetFolder] = .some(
                        Self.permissionProblem(targetFolder, what: "the folder \(targetFolder) it links into"))
                }
                if let problem = folderProblems[targetFolder] ?? nil {
                    return "\(name): refused: \(problem), or pass --allow-unsafe-permissions"
                }
            }
            if folderProblems[folder] == nil {
                folderProblems[folder] = .some(Self.permissionProblem(folder, what: "its folder \(folder)"))
            }
            if let problem = folderProblems[folder] ?? nil {
                return "\(name): refused: \(problem), or pass --allow-unsafe-permissions"
            }
        }
        if let trustedDigests {
            let digest: String
            switch SHA256Digest.hex(ofFile: file.path) {
            case .success(let hex): digest = hex
            case .failure(let failure): return "\(name): refused: \(failure.reason)"
            }
            guard trustedDigests.digests.contains(digest) else {
                return "\(name): refused: SHA-256 \(digest) is not in \(trustedDigests.source)"
            }
        }
        return nil
    }

    /// Where a symbolic link at `path` leads in the end (every link resolved), or nil when `path` is no link.
    static func linkTarget(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else {
            return nil
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// "the file is writable by others (mode 0666); chmod o-w it", "… is owned by uid 1000, not by you (uid 0) or
    /// root; chown it", or nil.
    static func permissionProblem(_ path: String, what: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }  // missing: the loader reports it
        var mode: String { String(status.st_mode & 0o7777, radix: 8) }
        if status.st_mode & S_IWOTH != 0 { return "\(what) is writable by others (mode 0\(mode)); chmod o-w it" }
        if status.st_mode & S_IWGRP != 0 { return "\(what) is writable by its group (mode 0\(mode)); chmod g-w it" }
        let me = geteuid()
        if status.st_uid != me && status.st_uid != 0 {
            return "\(what) is owned by uid \(status.st_uid), not by you (uid \(me)) or root; chown it"
        }
        return nil
    }
}

/// The digests of `--trusted-hashes FILE`: `sha256sum` output, one `<64 hex digits>  <name>` a line; blank lines
/// and `#` comments are skipped; the name is for people.
public struct TrustedDigests: Sendable {
    public let source: String
    public let digests: Set<String>

    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    public init(contentsOf path: String) throws {
        let bytes: [UInt8]
        do { bytes = try readWholeFile(path) } catch {
            throw Malformed(description: "\(path): cannot read: \(ErrorText.describe(error))")
        }
        try self.init(text: String(decoding: bytes, as: UTF8.self), source: path)
    }

    public init(text: String, source: String) throws {
        var digests = Set<String>()
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let digest = String(line.prefix { !$0.isWhitespace }).lowercased()
            guard digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
                throw Malformed(
                    description: "\(source):\(offset + 1): expected a SHA-256 digest (64 hex digits) "
                        + "and a name, as sha256sum prints them")
            }
            digests.insert(digest)
        }
        self.source = source
        self.digests = digests
    }
}

/// SHA-256 through libcrypto (OpenSSL, loaded on first use), computed only when `--trusted-hashes` asks for it.
enum SHA256Digest {
    /// The digest in lowercase hex, or why there is none ("cannot be read", libcrypto missing).
    static func hex(ofFile path: String) -> Result<String, Failure> {
        guard let data = FileManager.default.contents(atPath: path) else { return .failure(Failure("cannot be read")) }
        var digest = [UInt8](repeating: 0, count: 32)
        var error = [CChar](repeating: 0, count: 256)
        let ok = data.withUnsafeBytes { bytes in hub_sha256(bytes.baseAddress, bytes.count, &digest, &error, 256) }
        guard ok == 1 else { return .failure(Failure(String(cString: error))) }
        return .success(digest.map { String(printf: "%02x", $0) }.joined())
    }

    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
