/// A path's last component and its folder, as strings: Foundation's URL and NSString versions parse and allocate
/// enough to show when hundreds of plugin files are handled at each start.
public enum PathText {
    /// "libx.so" for "/a/b/libx.so"; the whole path when it has no slash.
    public static func fileName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// "/a/b" for "/a/b/libx.so", "/" for "/libx.so", "." for "libx.so".
    public static func folder(_ path: String) -> String {
        path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }
}
