/// Creates components by name for one namespace (Hub's HUBComponentFactory). Register it with
/// ``HubRegistrar/registerComponentFactory(_:forNamespace:)``.
///
/// # Implementation requirements
/// - ``createComponent(forName:)`` returns a new instance each time (the host reuses instances itself), or nil
///   for a name it does not offer; the host then uses its fallback for the model's category.
/// - ``componentNames`` lists every name ``createComponent(forName:)`` accepts; it is read once, at registration,
///   for listings and validation.
///
/// - Important: Called on the host's main thread.
public protocol HubComponentFactory: AnyObject {
    /// The names this factory offers, in display order.
    var componentNames: [String] { get }
    /// A new component for `name`, or nil when the factory has no such component.
    func createComponent(forName name: String) -> HubComponent?
}

/// A factory from a fixed list of names and constructors, the usual case:
///
/// ```swift
/// let factory = HubComponentCatalog([
///     "row": { RowComponent() },
///     "card": { CardComponent() },
/// ])
/// ```
public final class HubComponentCatalog: HubComponentFactory {
    private let entries: [(name: String, make: () -> HubComponent)]

    /// A catalog of `entries`, listed in the order given.
    public init(_ entries: KeyValuePairs<String, () -> HubComponent>) {
        self.entries = entries.map { (name: $0.key, make: $0.value) }
    }

    public var componentNames: [String] { entries.map(\.name) }

    public func createComponent(forName name: String) -> HubComponent? {
        entries.first { $0.name == name }?.make()
    }
}
