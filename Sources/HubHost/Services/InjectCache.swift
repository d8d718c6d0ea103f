import CHubPlugin
import FoundationEssentials
import HubInjection

#if canImport(Glibc)
    import Glibc
#endif

/// One plugin's resolved singletons and bound instances, so that `hub_host.inject` of a cached key costs a pointer
/// compare, a `strcmp` and an atomic load instead of a trip through the injector (issue 15: ≤ 3× a dictionary
/// lookup).
///
/// Entries are found by the key and name pointers the plugin passed (string literals, in practice), confirmed with
/// `strcmp` because a plugin may pass the same buffer with other text. They are dropped at once when the injector's
/// `generation` moves (a module installed, an owner revoked, a singleton invalidated) and when the plugin unloads.
/// Only the main thread reads or writes them, as the host table promises.
final class InjectCache {
    private struct Entry {
        let keyPointer: UnsafePointer<CChar>
        let namePointer: UnsafePointer<CChar>?
        /// Copies of the text, to confirm a pointer still holds what it held.
        let key: UnsafeMutablePointer<CChar>
        let name: UnsafeMutablePointer<CChar>?
        /// The resolved value; a string result points at `ownedString`.
        let value: hub_value
        let ownedString: UnsafeMutablePointer<CChar>?
    }

    /// A plugin resolving more keys than this in a loop goes through the injector for the rest.
    static let capacity = 32
    private var entries: [Entry] = []
    private var generation: Injector.Generation?
    private var seenGeneration = -1
    /// The host's main thread when the entries were made; a call from any other thread takes the checked path.
    private var thread: pthread_t?

    deinit { clear() }

    /// The cached value for `key` and `name`, when it is still valid on this thread.
    @inline(__always)
    func lookup(_ key: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>?) -> hub_value? {
        guard !entries.isEmpty, let thread, pthread_equal(pthread_self(), thread) != 0,
            let generation, generation.value == seenGeneration
        else { return nil }
        for entry in entries where entry.keyPointer == key && entry.namePointer == name {
            guard strcmp(entry.key, key) == 0 else { continue }
            if let name, strcmp(entry.name!, name) != 0 { continue }
            return entry.value
        }
        return nil
    }

    /// Keeps `value` (resolved on the host's main thread at `generation`'s current value) for `key` and `name`.
    /// A string is copied; the returned value points at the copy, valid until the entry is dropped (when the cache
    /// is full, `value` itself is returned).
    func store(
        _ value: hub_value, key: UnsafePointer<CChar>, name: UnsafePointer<CChar>?, generation: Injector.Generation,
        thread: pthread_t, at seen: Int
    ) -> hub_value {
        if self.generation !== generation || seenGeneration != seen
            || self.thread.map({ pthread_equal($0, thread) })
                == 0
        {
            clear()
            self.generation = generation
            seenGeneration = seen
            self.thread = thread
        }
        guard entries.count < Self.capacity else { return value }
        var kept = value
        let ownedString = value.type == HUB_VALUE_STRING ? value.s.map { strdup($0)! } : nil
        if let ownedString { kept.s = UnsafePointer(ownedString) }
        entries.append(
            Entry(
                keyPointer: key, namePointer: name, key: strdup(key)!, name: name.map { strdup($0)! }, value: kept,
                ownedString: ownedString))
        return kept
    }

    /// Drops every entry (the plugin unloads, or the host changes threads).
    func clear() {
        for entry in entries {
            free(entry.key)
            free(entry.name)
            free(entry.ownedString)
        }
        entries.removeAll()
        thread = nil
    }
}
