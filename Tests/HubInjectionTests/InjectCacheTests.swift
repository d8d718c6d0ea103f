import Foundation
import HubCore
import HubHost
import HubInjection
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `hub_host.inject` keeps what a plugin resolved to a singleton or a bound instance, and never serves it past a
/// change of the injector (a revocation, a new binding) or to a buffer that now holds another key.
@Suite("inject cache", .serialized, .pluginCode)
struct InjectCacheTests {
    static let resolver = #"""
        #include <hub_plugin.h>
        #include <string.h>
        static const hub_host *host;
        /* Resolves `key` (copied into one static buffer, so every key arrives at the same address); returns the
           integer, or -1 with the error in `error`. */
        HUB_EXPORT long long resolve_key(const char *key, const char *arguments, char *error, size_t capacity) {
            static char buffer[64];
            strncpy(buffer, key, sizeof buffer - 1);
            hub_value out = {sizeof out};
            if (!host->inject(host, buffer, NULL, arguments, &out, error, capacity)) return -1;
            return out.type == HUB_VALUE_INT ? out.i : -2;
        }
        static bool init(const hub_host *h, char *e, size_t n) { (void)e; (void)n; host = h; return true; }
        static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.test.resolver", "Resolver", "1.0.0", "", "", init, NULL};
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
        """#

    @Test func cachedSingletonsAreServedUntilTheInjectorChanges() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let library = try dir.compile(Self.resolver, as: "libresolver.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        defer { host.unloadAll() }
        let record = host.load(file: library)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        let handle = try #require(dlopen(record.privateCopy!.path, RTLD_NOW | RTLD_NOLOAD))
        defer { dlclose(handle) }
        typealias Resolve =
            @convention(c) (
                UnsafePointer<CChar>, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>, Int
            ) -> Int64
        let resolve = unsafeBitCast(try #require(dlsym(handle, "resolve_key")), to: Resolve.self)
        func ask(_ key: String, _ arguments: String? = nil) -> (Int64, String) {
            var error = [CChar](repeating: 0, count: 256)
            let value = key.withCString { k in
                withOptionalCString(arguments) { a in resolve(k, a, &error, error.count) }
            }
            return (value, String(cString: error))
        }

        var made = 0
        let first = Owner(id: "first")
        try host.services.injector.install(
            Module(owner: first) { binder in
                binder.bindProvider(toKey: ServiceKey(id: "one"), scope: .singleton) { _, _ in
                    made += 1
                    return Int64(100 + made)
                }
                binder.bindProvider(toKey: ServiceKey(id: "two"), scope: .normal) { _, arguments in
                    made += 1
                    return (arguments.first as? Int64 ?? 0) + 2
                }
            })
        #expect(ask("one").0 == 101)
        #expect(ask("one").0 == 101)
        #expect(ask("one", "[]").0 == 101)
        #expect(made == 1, "a singleton is made once")
        // Same buffer, other text: the other key, not the cached one.
        #expect(ask("two").0 == 2)
        #expect(ask("two", "[40]").0 == 42)
        #expect(made == 3, "a normal binding is made on every ask")
        #expect(ask("one").0 == 101)

        // Revoked: the cached value is not served; the caller reads why.
        host.services.injector.revokeAll(ownedBy: first)
        let revoked = ask("one")
        #expect(revoked.0 == -1)
        #expect(revoked.1.contains("one") && revoked.1.contains("first"), "\(revoked.1)")

        // Bound again: the new binding's value.
        try host.services.injector.install(
            Module(owner: Owner(id: "second")) { binder in
                binder.bind(Int64(7), toKey: ServiceKey(id: "one"))
            })
        #expect(ask("one").0 == 7)
        #expect(ask("one").0 == 7)
    }
}

private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString(body)
}
