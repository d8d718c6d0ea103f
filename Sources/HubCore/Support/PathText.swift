/// Paths as strings, without Foundation's NSString (hubhost links FoundationEssentials only, which starts a
/// process faster; see ARCHITECTURE.md, "Process start"). Nothing here touches the file system.
public enum PathText {
    /// The longest start of `text` of at most `bytes` UTF-8 bytes, cut between characters' scalars (a name made
    /// from a file name must fit the 255 bytes a name may have).
    public static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var cut = ""
        var count = 0
        for scalar in text.unicodeScalars {
            count += UTF8.width(scalar)
            if count > bytes { break }
            cut.unicodeScalars.append(scalar)
        }
        return cut
    }

    /// A name's bytes as the file system has them, for a message: printable ASCII as it is (but `"` and `\`),
    /// every other byte as `\xNN`, at most about 200 characters. For names that are not UTF-8, which Swift would
    /// show with their bytes replaced.
    public static func shownBytes<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var shown = ""
        for b in bytes {
            guard shown.utf8.count < 200 else { break }
            shown +=
                b >= 0x20 && b < 0x7F && b != 0x22 && b != 0x5C
                ? String(UnicodeScalar(b)) : "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
        }
        return shown
    }

    /// "libx.so" for "/a/b/libx.so"; the whole path when it has no slash.
    public static func fileName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// "/a/b" for "/a/b/libx.so", "/" for "/libx.so", "." for "libx.so".
    public static func folder(_ path: String) -> String {
        path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }

    /// "png" for "/a/b.c/x.png"; "" when the file name has no dot, or only a leading one (".hidden"). Trailing
    /// slashes are not part of the name.
    public static func fileExtension(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let name = fileName(String(trimmed))
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `path` with empty and "." components dropped and ".." folded into the component before it, by the text
    /// alone (symbolic links are not followed): "/a/./b/../c/" is "/a/c". ".." at the root stays at the root; a
    /// relative path keeps its leading "..". "" stays "", and a relative path that folds to nothing is ".".
    public static func normalized(_ path: String) -> String {
        guard !path.isEmpty else { return "" }
        let absolute = path.hasPrefix("/")
        var kept: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".": continue
            case "..":
                if let last = kept.last, last != ".." {
                    kept.removeLast()
                } else if !absolute {
                    kept.append(component)
                }
            default: kept.append(component)
            }
        }
        let joined = kept.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// Whether `path` is `folder` or lies under it, by the text of both (normalized; links are not followed).
    public static func isSameOrInside(_ path: String, _ folder: String) -> Bool {
        let path = normalized(path)
        let folder = normalized(folder)
        return path == folder || path.hasPrefix(folder == "/" ? "/" : folder + "/")
    }

    /// `name` (which may hold slashes) under `folder`, with one slash between them.
    public static func appending(_ name: String, to folder: String) -> String {
        if name.isEmpty { return folder }
        if folder.isEmpty { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
