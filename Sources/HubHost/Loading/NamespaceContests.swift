import FoundationEssentials
import HubCore

/// Two plugins claiming one namespace: the file that happens to sort first must not win (a file dropped in the
/// folder could otherwise take a namespace from the plugin that owns it). After a batch of files is loaded, every
/// claimant of a contested namespace is unloaded and refused, naming the others, unless `--prefer` names one of
/// them: that one is loaded again, alone in the namespace.
extension PluginHost {
    func settleContestedNamespaces(among batch: [PluginRecord]) {
        // namespace → every record claiming it (the holder and the refused claimants, loaded or not: a plugin
        // whose init gave up when its claim was refused is a claimant too), in load order.
        var claimants: [String: [PluginRecord]] = [:]
        for record in batch {
            for claim in record.contestedClaims {
                guard let holder = plugins.first(where: { $0.owner == claim.holder && $0.isLoaded }) else { continue }
                var list = claimants[claim.namespace] ?? [holder]
                if !list.contains(where: { $0 === record }) { list.append(record) }
                claimants[claim.namespace] = list
            }
            record.contestedClaims = []
        }
        guard !claimants.isEmpty else { return }

        var losers: [PluginRecord: String] = [:]
        var winners: [PluginRecord] = []
        for (namespace, records) in claimants.sorted(by: { $0.key < $1.key }) {
            let names = records.map(Self.describe).joined(separator: " and ")
            let preferred = records.filter { $0.id.map(preferredPluginIDs.contains) ?? false }
            if preferred.count == 1, let winner = preferred.first {
                if !winners.contains(where: { $0 === winner }) { winners.append(winner) }
                for record in records where record !== winner {
                    losers[record] =
                        "\(record.file.lastPathComponent): refused: namespace \"\(namespace)\" is also "
                        + "claimed by \(Self.describe(winner)), preferred with --prefer"
                }
            } else {
                let ids = records.compactMap(\.id)
                let advice: String
                if ids.count == records.count, Set(ids).count == 1 {
                    // Copies of one plugin (an old build left beside the new one): --prefer cannot tell them apart.
                    advice = "they are copies of one plugin, \(ids[0]); remove all but one"
                } else {
                    let choices = Set(ids).sorted().map { "--prefer \($0)" }.joined(separator: " or ")
                    advice = "choose with \(choices)"
                }
                for record in records {
                    losers[record] =
                        "\(record.file.lastPathComponent): refused: namespace \"\(namespace)\" is claimed "
                        + "by \(names); none is loaded; \(advice)"
                }
            }
        }
        // A winner of one namespace that lost another stays refused.
        winners.removeAll { losers[$0] != nil }
        let everyone = Array(losers.keys) + winners
        _ = unload(everyone.filter(\.isLoaded))
        for (record, reason) in losers {
            record.state = .rejected(reason)
            logger.warning("\(reason)")
        }
        // The preferred ones load again, now that their namespaces are free; their new record replaces the old.
        for winner in winners where load(file: winner.file).isLoaded {
            plugins.removeAll { $0 === winner }
        }
    }

    private static func describe(_ record: PluginRecord) -> String {
        "\(record.id ?? "?") (\(record.file.lastPathComponent))"
    }
}

extension PluginRecord: Hashable {
    public static func == (a: PluginRecord, b: PluginRecord) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
