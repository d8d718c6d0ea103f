import Foundation
import HubHost
import HubInjection
import HubTestKit
import Testing

/// A C plugin that resolves an injector key another plugin's module file binds (ABI 1.1's `hub_host.inject`), and
/// `hubhost inject` / `hubhost call` in a worker, as processes.
@Suite("inject across the C ABI", .serialized, .pluginCode)
struct InjectCLITests {
    /// A component "injected:sum" that draws what `inject("sum", NULL, custom.arguments)` gives, or the error.
    static let injectingConsumer = #"""
        #include <hub_plugin.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        static const hub_host *host;
        typedef struct item { const hub_model *model; } item;
        static const char *traits(void *i) { (void)i; return HUB_TRAIT_FULL_WIDTH; }
        static void load_view(void *i) { (void)i; }
        static hub_size size(void *i, const hub_model *m, hub_size c) { (void)i; (void)m; return (hub_size){c.width, 120}; }
        static void reuse(void *i) { ((item *)i)->model = NULL; }
        static void configure(void *i, const hub_model *m, hub_size c) { (void)c; ((item *)i)->model = m; }
        static void draw(void *i, const hub_view_builder *v, hub_size s) {
            item *it = i;
            const char *key = host->model_string(host, it->model, HUB_MODEL_TITLE);
            const char *args = host->model_custom_string(host, it->model, "arguments");
            char text[300], error[256] = "";
            hub_value out = {sizeof out};
            if (!HUB_HAS_MEMBER(host, hub_host, inject)) snprintf(text, sizeof text, "host too old");
            else if (host->inject(host, key, NULL, args, &out, error, sizeof error)) {
                if (out.type == HUB_VALUE_INT) snprintf(text, sizeof text, "%s=%lld", key, (long long)out.i);
                else if (out.type == HUB_VALUE_DOUBLE) snprintf(text, sizeof text, "%s=%g", key, out.d);
                else if (out.type == HUB_VALUE_STRING) snprintf(text, sizeof text, "%s=%s", key, out.s);
                else snprintf(text, sizeof text, "%s=other", key);
            } else snprintf(text, sizeof text, "error: %s", error);
            hub_text_style style = {sizeof style, 12, 400, 0x000000FFu, HUB_TEXT_LEFT, 0};
            v->text(v, (hub_rect){0, 0, s.width, s.height}, text, &style);
        }
        static void destroy(void *i) { free(i); }
        static const hub_component_class klass = {sizeof klass, traits, load_view, size, reuse, configure, draw, NULL, destroy};
        static bool create(const hub_component_factory *f, const char *n, hub_component *out) {
            (void)f; if (strcmp(n, "sum") != 0) return false;
            out->klass = &klass; out->instance = calloc(1, sizeof(item)); return true;
        }
        static const char *const names[] = {"sum", NULL};
        static const char *const *component_names(const hub_component_factory *f) { (void)f; return names; }
        static const hub_component_factory factory = {sizeof factory, NULL, create, component_names, NULL};
        static bool init(const hub_host *h, char *e, size_t n) { host = h; return h->register_component_factory(h, "injected", &factory, e, n); }
        static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.test.injected", "Injected", "1.0.0", "", "", init, NULL};
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
        """#

    /// Provider and consumer plugins, and a module file binding "sum" (add_u32, defaults 2 and 3), "neg" and
    /// "counter" (a singleton of make_controller).
    static func setUp() throws -> CPlugins {
        let dir = try CPlugins()
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(injectingConsumer, as: "libc_injected.so")
        try """
        { "bindings": [
          { "key": "sum", "plugin": "liba_provider.so", "symbol": "add_u32", "signature": "(u32,u32)->u32", "defaults": [2, 3] },
          { "key": "neg", "plugin": "liba_provider.so", "symbol": "negate_i64", "signature": "(i64)->i64", "defaults": [7] },
          { "key": "controller", "plugin": "liba_provider.so", "symbol": "make_controller",
            "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["Home", "main", 1, 1.5, 2, 3, 0.5], "scope": "singleton" } ] }
        """.write(to: dir.plugins.appendingPathComponent("math.modules.json"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func aPluginResolvesAKeyAnotherPluginsModuleFileBinds() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        let view = dir.root.appendingPathComponent("view.json")
        try #"""
        {"body": [
          {"id": "a", "component": {"id": "injected:sum"}, "text": {"title": "sum"}},
          {"id": "b", "component": {"id": "injected:sum"}, "text": {"title": "sum"}, "custom": {"arguments": "[40, 2]"}},
          {"id": "c", "component": {"id": "injected:sum"}, "text": {"title": "neg"}, "custom": {"arguments": "[-5]"}},
          {"id": "d", "component": {"id": "injected:sum"}, "text": {"title": "missing"}},
          {"id": "e", "component": {"id": "injected:sum"}, "text": {"title": "sum"}, "custom": {"arguments": "[1, \"x\"]"}}
        ]}
        """#.write(to: view, atomically: true, encoding: .utf8)
        let run = try CLITests.hubhost(
            [
                "render", view.path, "--format", "svg", "-o", "-", "--plugins", dir.plugins.path, "--plugin-cache",
                dir.cache.path,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(">sum=5<"), "defaults")
        #expect(run.stdout.contains(">sum=42<"), "arguments replace the defaults")
        #expect(run.stdout.contains(">neg=5<"))
        #expect(run.stdout.contains("error: inject missing:"), "\(run.stdout)")
        let texts = run.stdout.components(separatedBy: "<text").joined()
        #expect(texts.contains("u32"), "a bad argument is an error naming the type: \(run.stdout)")
    }

    /// A module file of 20,000 bindings binds each (each binding was checked against every earlier one: 8,000 took
    /// 6.5 s, 200,000 about an hour), and one key bound twice in it is still refused, named by its first binding.
    @Test func aModuleFileOfManyBindingsBindsEachOnce() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        let bindings = (0..<20_000).map {
            #"{"key": "k\#($0)", "plugin": "liba_provider.so", "symbol": "add_u32", "signature": "(u32,u32)->u32", "defaults": [\#($0), 1]}"#
        }
        let twice = #"{"key": "k7", "plugin": "liba_provider.so", "symbol": "add_u32", "signature": "(u32,u32)->u32"}"#
        try #"{"bindings": [\#((bindings + [twice]).joined(separator: ","))]}"#.write(
            to: dir.plugins.appendingPathComponent("many.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let last = try CLITests.hubhost(["inject", "k19999"] + common)
        #expect(last.stdout.contains("k19999 = 20000"), "\(last.stdout)\(last.stderr)")
        #expect(
            last.stderr.contains(
                "binding 'k7' (bindings[20000]): the key is bound twice in this file ('k7' (bindings[7]) binds it)"),
            "\(last.stderr)")
    }

    /// 64-bit integers are exact end to end: a default written as a string reaches the function whole, the result
    /// is written exactly in `--json` (a double rounded it), and a JSON number past 2^53, which is not exact, is
    /// refused with the way to write it.
    @Test func sixtyFourBitIntegersAreExactFromModuleFileToJSON() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        try #"""
        { "bindings": [
          { "key": "big", "plugin": "liba_provider.so", "symbol": "add_u64", "signature": "(u64,u64)->u64",
            "defaults": ["18446744073709551614", 1] },
          { "key": "inexact", "plugin": "liba_provider.so", "symbol": "add_u64", "signature": "(u64,u64)->u64",
            "defaults": [9007199254740993, 0] } ] }
        """#.write(to: dir.plugins.appendingPathComponent("big.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let big = try CLITests.hubhost(["inject", "big", "--json"] + common)
        #expect(big.stdout.contains("18446744073709551615"), "\(big.stdout)\(big.stderr)")
        #expect(big.stdout.contains("\"value\" : 18446744073709551615"), "\(big.stdout)")
        let inexact = try CLITests.hubhost(["inject", "inexact"] + common)
        #expect(inexact.status != 0)
        #expect(inexact.stderr.contains("binding 'inexact'") && inexact.stderr.contains("2^53"), "\(inexact.stderr)")
    }

    @Test func injectResolvesAKeyEndToEndAndCallSurvivesAWrongSignature() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let sum = try CLITests.hubhost(["inject", "sum", "40", "2"] + common)
        #expect(sum.status == 0, "\(sum.stderr)")
        #expect(sum.stdout.contains("sum = 42"))
        #expect(sum.stdout.contains("owner: com.test.provider 1.0.0 (liba_provider.so)"), "\(sum.stdout)")
        let singleton = try CLITests.hubhost(["inject", "controller", "--json"] + common)
        #expect(
            singleton.stdout.contains("\"scope\" : \"provider (singleton)\"") || singleton.stdout.contains("singleton"),
            "\(singleton.stdout)")
        let missing = try CLITests.hubhost(["inject", "nothing"] + common)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nothing"))
        // A C service is listed with the keys but is not one: said so.
        let service = try CLITests.hubhost(["inject", "com.test.greeter"] + common)
        #expect(service.status == 1)
        #expect(service.stderr.contains("com.test.greeter is a C service of com.test.provider"), "\(service.stderr)")
        // --json is for scripts: the value with its type, and an error as JSON too.
        let typed = try CLITests.hubhost(["inject", "sum", "0x28", "2", "--json"] + common)
        let row = try JSONSerialization.jsonObject(with: Data(typed.stdout.utf8)) as? [String: Any]
        #expect(row?["type"] as? String == "int" && (row?["value"] as? NSNumber)?.intValue == 42, "\(typed.stdout)")
        // A string that reads as a number is passed in double quotes; unquoted, it is a number, which a str refuses.
        let quoted = try CLITests.hubhost(["inject", "controller", "\"1\""] + common)
        #expect(quoted.status == 0, "\(quoted.stderr)")
        let infinite = try CLITests.hubhost(["inject", "neg", "1e400"] + common)
        #expect(infinite.status == 64 && infinite.stderr.contains("1e400 is not a finite number"), "\(infinite.stderr)")
        let unquoted = try CLITests.hubhost(["inject", "controller", "1"] + common)
        #expect(unquoted.status == 1 && unquoted.stderr.contains("str"), "\(unquoted.stderr)")
        let failed = try CLITests.hubhost(["inject", "nothing", "--json"] + common)
        let error = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [String: Any]
        #expect(failed.status == 1 && (error?["error"] as? String)?.contains("nothing") == true, "\(failed.stdout)")

        // A well-formed but wrong signature: the callee crashes in a worker; hubhost reports it and lives.
        let plugin = dir.plugins.appendingPathComponent("liba_provider.so").path
        let wrong = try CLITests.hubhost([
            "call", plugin, "negate_i32", "--signature", "(i32,i32,f64)->str", "1", "2", "3",
        ])
        #expect(wrong.status == 5, "\(wrong.status) \(wrong.stderr)")
        #expect(
            wrong.stderr.contains("liba_provider.so") && wrong.stderr.contains("crashed with SIG"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("the call was negate_i32 (i32,i32,f64)->str with 1 2 3"))
    }

    @Test func aKeyBoundTwiceIsRefusedWithBothNamedAndTheGraphShowsProviders() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        try """
        { "bindings": [ { "key": "sum", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8" } ] }
        """.write(to: dir.plugins.appendingPathComponent("zz-second.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let listed = try CLITests.hubhost(["list-services"] + common)
        #expect(listed.status == 1, "\(listed.stdout)")
        let refusal = listed.stdout + listed.stderr
        #expect(refusal.contains("key sum is already bound by"), "\(refusal)")
        #expect(refusal.contains("math.modules.json") && refusal.contains("zz-second.modules.json"))
        // The first binding still serves.
        #expect(try CLITests.hubhost(["inject", "sum", "1", "1"] + common).stdout.contains("sum = 2"))

        let dot = try CLITests.hubhost(["list-services", "--graph", "dot"] + common)
        #expect(dot.stdout.hasPrefix("digraph services {"))
        #expect(
            dot.stdout.contains(#""owner com.test.provider 1.0.0 (liba_provider.so)" -> "key sum""#), "\(dot.stdout)")
        #expect(dot.stdout.contains(#""key com.test.greeter""#))
        let svg = try CLITests.hubhost(["list-services", "--graph", "svg"] + common)
        #expect(svg.stdout.hasPrefix("<svg") && svg.stdout.contains(">sum</text>"))
    }

    @Test func eagerSingletonsAreMadeAtLoadAwokenAndRequiresResolvedFirst() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        try """
        { "bindings": [
          { "key": "eager.controller", "plugin": "liba_provider.so", "symbol": "make_controller",
            "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["E", "m", 1, 1, 1, 1, 1],
            "scope": "singleton", "eager": true, "awoken": "awake_controller" },
          { "key": "awakened", "plugin": "liba_provider.so", "symbol": "awakened", "signature": "()->i32" },
          { "key": "needy", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8",
            "defaults": [1, 1], "requires": ["sum", "no.such.key"] } ] }
        """.write(to: dir.plugins.appendingPathComponent("eager.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        // Made once when the plugin loaded (eager), and awoken once; asking again returns the same singleton.
        let count = try CLITests.hubhost(["inject", "awakened"] + common)
        #expect(count.stdout.contains("awakened = 1"), "\(count.stdout)\(count.stderr)")
        let needy = try CLITests.hubhost(["inject", "needy"] + common)
        #expect(needy.status == 1)
        #expect(needy.stderr.contains("requires no.such.key"), "\(needy.stderr)")
    }

    /// An eager singleton that requires a key another plugin binds is made once both are bound, whatever order
    /// the plugins load in (its owner's id sorts first here: it was made before the other's binding existed).
    @Test func anEagerSingletonMayRequireAnotherPluginsKey() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        try dir.compile(
            #"""
            #include <hub_plugin.h>
            HUB_EXPORT int seven(void) { return 7; }
            static bool init(const hub_host *h, char *e, size_t n) { (void)h; (void)e; (void)n; return true; }
            static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR},
                "com.test.zlast", "Z", "1", "", "", init, NULL};
            HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
            """#, as: "libz_last.so")
        try """
        { "bindings": [
          { "key": "eager.controller", "plugin": "liba_provider.so", "symbol": "make_controller",
            "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["E", "m", 1, 1, 1, 1, 1],
            "scope": "singleton", "eager": true, "awoken": "awake_controller", "requires": ["z.seven"] },
          { "key": "awakened", "plugin": "liba_provider.so", "symbol": "awakened", "signature": "()->i32" },
          { "key": "z.seven", "plugin": "libz_last.so", "symbol": "seven", "signature": "()->i32" } ] }
        """.write(to: dir.plugins.appendingPathComponent("eager.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let listed = try CLITests.hubhost(["list-services"] + common)
        #expect(listed.status == 0 && !listed.stderr.contains("no binding"), "\(listed.stderr)")
        let count = try CLITests.hubhost(["inject", "awakened"] + common)
        #expect(count.stdout.contains("awakened = 1"), "\(count.stdout)\(count.stderr)")
    }

    /// Keeps the last `hub_service_event` it was told, as text.
    static let eventObserver = #"""
        #include <hub_plugin.h>
        #include <stdio.h>
        static char last[512] = "none";
        static void on_event(void *data, const hub_service_event *e) {
            (void)data;
            snprintf(last, sizeof last, "%s|%s|%u|%d|%s", e->interface_id, e->name ? e->name : "-", e->version,
                     e->available, e->provider ? e->provider : "-");
        }
        HUB_EXPORT const char *last_event(void) { return last; }
        static bool init(const hub_host *h, char *e, size_t n) {
            (void)e; (void)n;
            if (!HUB_HAS_MEMBER(h, hub_host, set_service_event_observer)) return false;
            h->set_service_event_observer(h, on_event, NULL);
            return true;
        }
        static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.test.events", "Events", "1", "", "", init, NULL};
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
        """#

    @Test func eventObserversAreToldTheNameVersionAndProvider() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let observerFile = try dir.compile(Self.eventObserver, as: "libevents.so")
        let providerFile = try dir.compile(providerSource, as: "liba_provider.so")
        let host = PluginHost(cacheDirectory: dir.cache)
        defer { host.unloadAll() }
        let observer = host.load(file: observerFile)
        #expect(observer.isLoaded, "\(observer.reason ?? "")")
        let copy = try #require(observer.privateCopy)
        let handle = try #require(dlopen(copy.path, RTLD_NOW | RTLD_NOLOAD))
        let symbol = try #require(dlsym(handle, "last_event"))
        let lastEvent = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafePointer<CChar>).self)
        let provider = host.load(file: providerFile)
        #expect(provider.isLoaded)
        #expect(String(cString: lastEvent()) == "com.test.greeter|-|2|1|com.test.provider 1.0.0 (liba_provider.so)")
        host.unload(provider)
        #expect(String(cString: lastEvent()) == "com.test.greeter|-|0|0|-")
    }

    /// A module-file binding is plugin code: when it crashes it is the providing plugin's fault, reported and
    /// contained, whoever asked for it (hubhost inject, a consumer's inject, an eager singleton).
    @Test func aBindingThatCrashesIsItsPluginsFaultAndIsContained() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let exports = "\nint crashes(int v) { return *(volatile int *)(long)(v - v); }\n"
        try dir.compile(providerSource + exports, as: "liba_provider.so")
        try dir.compile(Self.injectingConsumer, as: "libc_injected.so")
        let bindings =
            #"{ "key": "boom", "plugin": "liba_provider.so", "symbol": "crashes", "signature": "(i32)->i32", "defaults": [1] }"#
        try #"{ "bindings": [\#(bindings)] }"#.write(
            to: dir.plugins.appendingPathComponent("math.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let injected = try CLITests.hubhost(["inject", "boom"] + common)
        #expect(injected.status == 5, "\(injected.stderr)")
        #expect(
            injected.stderr.contains(
                "liba_provider.so (com.test.provider 1.0.0) crashed with SIGSEGV in an exported function called through libffi"
            ), "\(injected.stderr)")
        // Quarantined, as for any fault, until the plugin or its module files change: the next run does not crash.
        #expect(
            injected.stderr.contains("liba_provider.so (com.test.provider 1.0.0) quarantined"), "\(injected.stderr)")
        let again = try CLITests.hubhost(["inject", "boom"] + common)
        #expect(again.status == 1 && again.stderr.contains("quarantined liba_provider.so: crashed"), "\(again.stderr)")
        // --json says it as JSON too (it printed nothing), for a script that reads it.
        let asJSON = try CLITests.hubhost(["inject", "boom", "--json", "--reprobe"] + common)
        #expect(asJSON.status == 5, "\(asJSON.stderr)")
        let row = try JSONSerialization.jsonObject(with: Data(asJSON.stdout.utf8)) as? [String: Any]
        #expect(row?["key"] as? String == "boom", "\(asJSON.stdout)")
        #expect((row?["error"] as? String)?.contains("crashed with SIGSEGV") == true, "\(asJSON.stdout)")
        // A consumer's inject: the provider is blamed (and quarantined), not the consumer.
        let view = dir.root.appendingPathComponent("view.json")
        try #"{"body": [{"id": "a", "component": {"id": "injected:sum"}, "text": {"title": "boom"}}]}"#.write(
            to: view, atomically: true, encoding: .utf8)
        let rendered = try CLITests.hubhost(["render", view.path, "--format", "svg", "-o", "-", "--reprobe"] + common)
        #expect(rendered.status == 5, "\(rendered.stderr)")
        #expect(rendered.stderr.contains("liba_provider.so (com.test.provider 1.0.0) crashed"), "\(rendered.stderr)")
        #expect(!rendered.stderr.contains("libc_injected.so (com.test.injected"), "\(rendered.stderr)")
    }

    /// Told that a provider is there, an observer can use what the provider's module files bind: plugins hear of
    /// each other's services once the batch is loaded and its module files are bound.
    @Test func anObserverToldAProviderIsThereCanInjectItsBindings() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        let watcher = #"""
            #include <hub_plugin.h>
            #include <stdio.h>
            #include <string.h>
            static const hub_host *host;
            static void on_change(void *u, const char *id, bool available) {
                (void)u;
                if (!available || strcmp(id, "com.test.greeter") != 0) return;
                hub_value out = {sizeof out};
                char why[256] = "", line[320];
                bool ok = host->inject(host, "sum", NULL, "[40, 2]", &out, why, sizeof why);
                snprintf(line, sizeof line, "watcher: sum %s %lld %s", ok ? "ok" : "failed", (long long)out.i, why);
                host->log(host, HUB_LOG_WARNING, line);
            }
            static bool init(const hub_host *h, char *e, size_t n) {
                (void)e; (void)n;
                host = h;
                h->set_service_observer(h, on_change, NULL);
                return true;
            }
            static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR},
                "com.test.watcher", "Watcher", "1.0.0", "", "", init, NULL};
            HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
            """#
        // Sorted before the provider: it is loaded, and observes, first.
        try dir.compile(watcher, as: "la_watcher.so")
        let run = try CLITests.hubhost([
            "list-services", "--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path,
        ])
        #expect(run.stderr.contains("watcher: sum ok 42"), "\(run.stderr)")
    }

    @Test func anEagerSingletonThatCrashesDoesNotTakeTheListingsDown() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let exports = "\nvoid *crashes(void) { return (void *)(long)*(volatile int *)0; }\n"
        try dir.compile(providerSource + exports, as: "liba_provider.so")
        try
            #"{ "bindings": [{ "key": "boom", "plugin": "liba_provider.so", "symbol": "crashes", "signature": "()->ptr", "scope": "singleton", "eager": true }] }"#
            .write(to: dir.plugins.appendingPathComponent("math.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let services = try CLITests.hubhost(["list-services"] + common)
        #expect(services.status == 5, "\(services.stderr)")
        // The probe makes the eager singletons a load would make, so the crash is caught there, in a child.
        // Named by its module file, binding and symbol, not only the phase.
        #expect(
            services.stderr.contains(
                "quarantined liba_provider.so: crashed with SIGSEGV in module-file eager singletons for binding 'boom' "
                    + "(bindings[0]) of math.modules.json: crashes"),
            "\(services.stderr)")
        // Quarantined, as a render would: the next run does not crash again, and every command lists why.
        #expect(services.stderr.contains("quarantined"), "\(services.stderr)")
        let namespaces = try CLITests.hubhost(["list-namespaces"] + common)
        #expect(namespaces.status == 1, "\(namespaces.stderr)")
        #expect(namespaces.stdout.contains("quarantined"), "\(namespaces.stdout)")
        let view = dir.root.appendingPathComponent("view.json")
        try #"{"body": [{"id": "a", "text": {"title": "a"}}]}"#.write(to: view, atomically: true, encoding: .utf8)
        let render = ["render", view.path, "--format", "text", "-o", "-"] + common
        let again = try CLITests.hubhost(render)
        #expect(again.status == 1 && again.stderr.contains("quarantined"), "\(again.stderr)")
        // ...until the module file that bound the crashing function changes: the binding, not the plugin, may be
        // what was wrong, so the plugin is judged afresh.
        try
            #"{ "bindings": [{ "key": "boom", "plugin": "liba_provider.so", "symbol": "crashes", "signature": "()->ptr", "scope": "singleton" }] }"#
            .write(to: dir.plugins.appendingPathComponent("math.modules.json"), atomically: true, encoding: .utf8)
        let fixed = try CLITests.hubhost(render)
        #expect(fixed.status == 0 && !fixed.stderr.contains("quarantined"), "\(fixed.stderr)")
        let listed = try CLITests.hubhost(["list-services"] + common)
        #expect(listed.status == 0 && listed.stdout.contains("boom"), "\(listed.stderr)")
    }

    @Test func validateChecksTheModuleFileBindingsOfAPlugin() throws {
        let dir = try Self.setUp()
        defer { dir.cleanUp() }
        let clean = try CLITests.hubhost(["validate", dir.plugins.appendingPathComponent("liba_provider.so").path])
        #expect(clean.status == 0, "\(clean.stdout)")
        try """
        { "bindings": [
          { "key": "hidden", "plugin": "liba_provider.so", "symbol": "init", "signature": "()->i32" },
          { "key": "bad", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8", "defaults": [1, "x"] } ] }
        """.write(to: dir.plugins.appendingPathComponent("more.modules.json"), atomically: true, encoding: .utf8)
        let run = try CLITests.hubhost(["validate", dir.plugins.appendingPathComponent("liba_provider.so").path])
        #expect(run.status == 1)
        #expect(
            run.stdout.contains("binding 'hidden' (bindings[0]): init is not exported by liba_provider.so"),
            "\(run.stdout)")
        #expect(run.stdout.contains("binding 'bad' (bindings[1]): default 2 must be u8"), "\(run.stdout)")
    }

    @Test func observersHearOfAProviderOnlyAfterItsInitSucceeded() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let failing = try dir.compile(providerSource, as: "libfailing.so", defines: ["FAIL_AFTER_REGISTER": "1"])
        let good = try dir.compile(providerSource, as: "libgood.so", defines: ["PLUGIN_ID": "\"com.test.good\""])
        let host = PluginHost(cacheDirectory: dir.cache)
        defer { host.unloadAll() }
        let heard = Collected()
        let token = host.services.registry.observe { change in heard.append("\(change)") }
        _ = token
        let record = host.load(file: failing)
        #expect(!record.isLoaded)
        #expect(record.reason?.contains("init fails after registering") == true)
        #expect(heard.items.isEmpty, "no observer heard of a provider whose init failed: \(heard.items)")
        #expect(host.services.registry.provider(of: ServiceKey(id: "com.test.greeter")) == nil)
        let second = host.load(file: good)
        #expect(second.isLoaded)
        #expect(heard.items.contains { $0.contains("com.test.greeter") }, "\(heard.items)")
    }
}

/// Strings a callback collects.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ item: String) { lock.withLock { storage.append(item) } }
    var items: [String] { lock.withLock { storage } }
}
