/// Which layout manager a view uses: the host default (Hub's default layout manager with a margin) or one a
/// plugin registered, chosen by id (`--layout-manager ID`). One is active per render.
public enum LayoutManagerChoice {
    public struct UnknownID: Error, CustomStringConvertible {
        public var id: String
        public var registered: [String]
        public var description: String {
            "no layout manager '\(id)'; registered: \(registered.isEmpty ? "none" : registered.joined(separator: ", "))"
        }
    }

    /// The manager registered under `id`, or the default with `margin` when `id` is nil.
    /// - Throws: `UnknownID` listing the registered ids.
    public static func resolve(
        id: String?, in registry: OwnedRegistry<LayoutManager>, defaultMargin margin: Double = 15
    )
        throws -> LayoutManager
    {
        guard let id else { return DefaultLayoutManager(margin: margin) }
        guard let manager = registry[id] else { throw UnknownID(id: id, registered: registry.allEntries.map(\.key)) }
        return manager
    }
}
