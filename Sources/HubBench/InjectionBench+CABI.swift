import Foundation
import HubCore
import HubHost
import HubInjection

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 15: a cached singleton resolved by a plugin through the C ABI (`hub_host.inject`), against a Swift
/// dictionary lookup of the same key, measured in the same run.
extension InjectionBench {
    static let injectingPlugin = #"""
        #include <hub_plugin.h>
        #include <time.h>
        static const hub_host *host;
        static double seconds(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
        /* Resolves the singleton `n` times through the host table; returns the seconds it took (-1 on failure). */
        HUB_EXPORT double bench_inject_loop(int n) {
            hub_value out = { sizeof out };
            char error[256];
            double start = seconds();
            for (int i = 0; i < n; i++) {
                if (!host->inject(host, "bench.singleton", NULL, NULL, &out, error, sizeof error)) return -1;
            }
            return seconds() - start;
        }
        static bool init(const hub_host *h, char *e, size_t n) { (void)e; (void)n; host = h; return true; }
        static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "bench.inject", "Inject bench", "1", "", "", init, NULL};
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
        """#

    static func cABISection() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-inject-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("inject.c")
        let library = work.appendingPathComponent("libinject.so")
        try injectingPlugin.write(to: source, atomically: true, encoding: .utf8)
        try ReloadBench.runTool(
            "/usr/bin/env",
            ["cc", "-O2", "-shared", "-fPIC", "-I", ReloadBench.include.path, source.path, "-o", library.path])
        let host = PluginHost(cacheDirectory: work.appendingPathComponent("cache"))
        defer { host.unloadAll() }
        let record = host.load(file: library)
        guard record.isLoaded, let copy = record.privateCopy,
            let handle = dlopen(copy.path, RTLD_NOW | RTLD_NOLOAD), let symbol = dlsym(handle, "bench_inject_loop")
        else {
            print("inject section skipped: \(record.reason ?? "cannot find bench_inject_loop")")
            return
        }
        try host.services.injector.install(
            Module(owner: Owner(id: "bench")) { binder in
                binder.bindProvider(toKey: ServiceKey(id: "bench.singleton"), scope: .singleton) { _, _ in Int64(7) }
            })
        let loop = unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Double).self)
        let iterations = 200_000
        let table: [String: Int64] = Dictionary(uniqueKeysWithValues: (0..<64).map { ("key.\($0)", Int64($0)) })
            .merging(["bench.singleton": 7]) { a, _ in a }
        var sink: Int64 = 0
        var cTimes: [Double] = []
        var dictionaryTimes: [Double] = []
        for _ in 0..<samples {
            let seconds = loop(Int32(iterations))
            guard seconds >= 0 else {
                print("inject section: the plugin's inject failed")
                return
            }
            cTimes.append(seconds)
            // Not a literal: the key is hashed on every lookup, as the plugin's C string is read on every call.
            let key = String("bench.singleton".utf8.map { Character(Unicode.Scalar($0)) })
            let start = Measure.now()
            for _ in 0..<iterations { sink &+= table[key] ?? 0 }
            dictionaryTimes.append(Measure.now() - start)
        }
        let c = Measure.medianOf(cTimes)
        let d = Measure.medianOf(dictionaryTimes)
        let perCall = { (t: Double) in String(format: "%.1f ns", t / Double(iterations) * 1e9) }
        print(
            "cached singleton resolved by a C plugin through hub_host.inject, \(iterations) per sample, median of \(samples):"
        )
        print("  dictionary [String: Int64] lookup (Swift)   \(perCall(d))")
        print(
            "  hub_host.inject from the plugin             \(perCall(c))   \(Measure.ratio(c, d)) of the lookup (goal ≤ 3×)"
        )
        if sink == 42 { print("") }
    }
}
