import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// An error in words for the user: the system's reason for file errors ("No such file or directory"), not a
/// Foundation error domain and code.
public enum ErrorText {
    public static func describe(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError {
            let reason =
                (cocoa.underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) }
                ?? "error \(cocoa.code.rawValue)"
            return cocoa.filePath.map { "\($0): \(reason)" } ?? reason
        }
        return "\(error)"
    }

    /// `describe` without the file a Foundation error names, for a message that names the place itself (a
    /// scratch file inside the folder the user named means nothing to them).
    public static func reason(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return describe(error)
    }
}
