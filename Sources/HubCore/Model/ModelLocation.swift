/// Where a model sits in its view, packed into one 64-bit word so that a process can note it before every plugin
/// call at the cost of a store, and another process can read it after the first one died (`hubhost`'s black
/// box). Bits: 2 for the section (0: none), 3 for the depth, 27 for the root index, 16 for each of the next two
/// indexes. Deeper paths keep their first three indexes; larger indexes saturate.
public struct ModelLocation: Equatable, Sendable, CustomStringConvertible {
    public var type: ComponentType
    public var indexPath: [Int]
    /// True when the path was longer than the code holds (only its first three indexes are known).
    public var truncated: Bool

    public init(type: ComponentType, indexPath: [Int], truncated: Bool = false) {
        self.type = type
        self.indexPath = indexPath
        self.truncated = truncated
    }

    /// Packs a root model's place (the common case: no array is touched).
    @inline(__always)
    static func code(type: ComponentType, rootIndex: Int) -> UInt64 {
        sectionBits(type) | 1 << 2 | UInt64(clamping: min(max(rootIndex, 0), rootLimit)) << 5
    }

    static func code(type: ComponentType, indexPath: [Int]) -> UInt64 {
        guard let root = indexPath.first else { return sectionBits(type) }
        var code = sectionBits(type) | UInt64(min(indexPath.count, 7)) << 2
        code |= UInt64(min(max(root, 0), rootLimit)) << 5
        if indexPath.count > 1 { code |= UInt64(min(max(indexPath[1], 0), childLimit)) << 32 }
        if indexPath.count > 2 { code |= UInt64(min(max(indexPath[2], 0), childLimit)) << 48 }
        return code
    }

    /// The location a code describes; nil for 0 (no model).
    public init?(code: UInt64) {
        let section = code & 3
        guard section != 0 else { return nil }
        type = section == 1 ? .header : section == 2 ? .body : .overlay
        let depth = Int((code >> 2) & 7)
        var path: [Int] = []
        if depth > 0 { path.append(Int((code >> 5) & UInt64(Self.rootLimit))) }
        if depth > 1 { path.append(Int((code >> 32) & UInt64(Self.childLimit))) }
        if depth > 2 { path.append(Int((code >> 48) & UInt64(Self.childLimit))) }
        indexPath = path
        truncated = depth > 3
    }

    /// "body[2]", "body[2].children[1]", "header".
    public var description: String {
        var text = type.rawValue
        if type == .header && indexPath == [0] { return text }
        for (depth, index) in indexPath.enumerated() { text += depth == 0 ? "[\(index)]" : ".children[\(index)]" }
        return truncated ? text + ".children[…]" : text
    }

    /// The model at this location in `view`, if there is one.
    public func model(in view: ViewModel) -> ComponentModel? {
        guard let root = indexPath.first else { return nil }
        var model: ComponentModel?
        switch type {
        case .header: model = root == 0 ? view.header : nil
        case .body: model = view.body.indices.contains(root) ? view.body[root] : nil
        case .overlay: model = view.overlays.indices.contains(root) ? view.overlays[root] : nil
        }
        for index in indexPath.dropFirst() { model = model?.child(at: index) }
        return model
    }

    private static let rootLimit = (1 << 27) - 1
    private static let childLimit = (1 << 16) - 1

    @inline(__always)
    private static func sectionBits(_ type: ComponentType) -> UInt64 {
        switch type {
        case .header: return 1
        case .body: return 2
        case .overlay: return 3
        }
    }
}

extension ComponentModel {
    /// This model's place as a `ModelLocation` code.
    @inline(__always)
    public var locationCode: UInt64 {
        guard let path = explicitIndexPath else { return ModelLocation.code(type: type, rootIndex: index) }
        return ModelLocation.code(type: type, indexPath: path)
    }
}

/// The model the render pipeline is working on (its `locationCode`; 0: none), for the calls into a component that
/// are given no model (making its instance, its layout traits, loading its view, looking up its extensions): a
/// fault in one names the model and so its component, as a fault in configure does. Main thread only.
public enum ModelInProgress {
    nonisolated(unsafe) public static var location: UInt64 = 0
}
