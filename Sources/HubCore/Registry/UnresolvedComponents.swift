/// The components of a view that no plugin provides, as problems naming a JSON path, so a typo in a component id
/// is seen instead of silently drawing a fallback. Hub falls back by design (a server may name components a
/// client does not have yet), so the view still renders; the problem says which fallback it got.
///
/// One problem per distinct component id, at its first model, with the number of models that name it and the
/// nearest id the loaded plugins do provide. Models that name no component (Hub's defaults) are not reported.
public enum UnresolvedComponents {
    /// `detailed`: how many problems get the full message (the plugin that has the namespace, its components, the
    /// nearest id); the rest, which callers count rather than print, say only that the id falls back. Working out a
    /// hint compares with every namespace: for 100k distinct unknown ids and 300 plugins that took minutes.
    /// `unavailable`: namespaces whose plugin is there but did not load, with why ("libx.so, which is quarantined").
    /// `servedNamespacesOnly`: only ids of namespaces the registry has (a plugin checked alone, whose models may
    /// name other plugins' components).
    public static func problems(
        in view: ViewModel, registry: ComponentRegistry, file: String?, detailed: Int = 100,
        unavailable: [String: String] = [:], servedNamespacesOnly: Bool = false
    ) -> [DecodeIssue] {
        var verdicts: [ComponentIdentifier: Bool] = [:]
        var found: [(identifier: ComponentIdentifier, path: String, count: Int)] = []
        var positions: [ComponentIdentifier: Int] = [:]
        // A view names the same few ids many times: the last one is compared before any hashing.
        var last: (identifier: ComponentIdentifier, unresolved: Bool)?

        func visit(_ model: ComponentModel, path: @autoclosure () -> String) {
            let identifier = model.componentIdentifier
            let unresolved: Bool
            if let last, last.identifier == identifier {
                unresolved = last.unresolved
            } else if let known = verdicts[identifier] {
                unresolved = known
            } else {
                // A factory may be asked to make one: a fault there names this model, and so its component.
                ModelInProgress.location = model.locationCode
                defer { ModelInProgress.location = 0 }
                unresolved =
                    Self.fallsBack(identifier, registry: registry)
                    && (!servedNamespacesOnly || registry.entry(forNamespace: identifier.namespace) != nil)
                verdicts[identifier] = unresolved
            }
            last = (identifier, unresolved)
            if unresolved {
                if let position = positions[identifier] {
                    found[position].count += 1
                } else {
                    positions[identifier] = found.count
                    found.append((identifier, path() + ".component.id", 1))
                }
            }
            guard !model.children.isEmpty else { return }
            let path = path()
            for (index, child) in model.children.enumerated() { visit(child, path: "\(path).children[\(index)]") }
        }
        if let header = view.header { visit(header, path: "$.header") }
        for (index, model) in view.body.enumerated() { visit(model, path: "$.body[\(index)]") }
        for (index, model) in view.overlays.enumerated() { visit(model, path: "$.overlays[\(index)]") }

        return found.enumerated().map { position, entry in
            let others = entry.count > 1 ? " (and \(entry.count - 1) more model(s) naming it)" : ""
            let reason =
                position < detailed
                ? Self.message(entry.identifier, registry: registry, unavailable: unavailable)
                : "\(TerminalText.quoted(entry.identifier.description)): drawn as a fallback"
            return DecodeIssue(file: file, path: entry.path, message: reason + others)
        }
    }

    /// Whether `identifier` falls back: no plugin provides it, and it is not Hub's default named by no one.
    static func fallsBack(_ identifier: ComponentIdentifier, registry: ComponentRegistry) -> Bool {
        guard let entry = registry.entry(forNamespace: identifier.namespace) else {
            return identifier.namespace != ComponentDefaults.namespace
        }
        if entry.factory.componentNames.contains(identifier.name) { return false }
        // A factory may make more than it lists: only a name it refuses is a problem.
        if let made = entry.factory.createComponent(forName: identifier.name) {
            made.destroy()
            return false
        }
        return true
    }

    /// Why `identifier`, which `fallsBack`, falls back: the plugin that has its namespace, its components and the
    /// nearest id (no plugin is asked again).
    static func message(
        _ identifier: ComponentIdentifier, registry: ComponentRegistry, unavailable: [String: String] = [:]
    ) -> String {
        let quoted = TerminalText.quoted(identifier.description)
        guard let entry = registry.entry(forNamespace: identifier.namespace) else {
            if let why = unavailable[identifier.namespace] {
                // Not a typo: its plugin did not load. A similar namespace would be the wrong hint.
                return
                    "\(quoted): namespace \(TerminalText.quoted(identifier.namespace)) is served by \(why); drawn as "
                    + "a fallback"
            }
            let namespaces = registry.allEntries.map(\.namespace)
            let hint = Spelling.nearest(identifier.namespace, in: namespaces).map {
                " (did you mean \(TerminalText.quoted($0))?)"
            }
            return "\(quoted): no loaded plugin serves namespace \(TerminalText.quoted(identifier.namespace))"
                + (hint ?? "") + "; drawn as a fallback"
        }
        let names = entry.factory.componentNames
        let hint = Spelling.nearest(identifier.name, in: names).map { " (did you mean \(TerminalText.quoted($0))?)" }
        let offered = names.isEmpty ? "" : "; it has " + names.sorted().prefix(12).joined(separator: ", ")
        return "\(quoted): namespace \(TerminalText.quoted(identifier.namespace)) of \(entry.owner) has no component "
            + "\(TerminalText.quoted(identifier.name))\(hint ?? "")\(offered); drawn as a fallback"
    }
}
