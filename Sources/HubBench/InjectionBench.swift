// The injection benchmark, in one run:
//  1. a cached singleton resolve (Injector.get and ServiceLocator.resolve) against a plain dictionary lookup;
//  2. a call through a cached libffi call against a direct C call of the same function (compiled with cc here).
// Each figure is the median of several samples of many iterations; ratios are against baselines of this run.
import Foundation
import HubCore
import HubHost
import HubInjection

enum InjectionBench {
    static let samples = 21

    final class BenchService: Injectable {
        init() {}
        static var composition: Composition { Composition(BenchService.self) { $0.singleton() } }
    }

    static func run() throws {
        try resolveSection()
        try ffiSection()
        try cABISection()
    }

    /// Runs each variant once per round, `samples` rounds, and returns each variant's median: variants measured
    /// side by side see the same load on a shared machine, so their ratios hold even when absolute times drift.
    static func interleaved(_ variants: [() throws -> Void]) throws -> [Double] {
        var times = Array(repeating: [Double](), count: variants.count)
        for _ in 0..<samples {
            for (index, variant) in variants.enumerated() {
                let start = Measure.now()
                try variant()
                times[index].append(Measure.now() - start)
            }
        }
        return times.map(Measure.medianOf)
    }

    // MARK: 1. Cached singleton resolve

    static func resolveSection() throws {
        let iterations = 200_000
        // The baseline: a [String: object] table (the shape of a hand-written registry) with a prebuilt key.
        var table: [String: BenchService] = [:]
        for i in 0..<32 { table["com.example.service\(i)"] = BenchService() }
        let key = "com.example.service17"
        table[key] = BenchService()

        let injector = try Injector(Module { $0.bindClass(BenchService.self, inScope: .singleton) })
        let locator = ServiceLocator()
        locator.registerFactory(BenchService.self) { _ in BenchService() }
        _ = try injector.get(BenchService.self)
        _ = locator.getInstanceOf(BenchService.self)

        var sink = 0
        let medians = try interleaved([
            { for _ in 0..<iterations { sink &+= ObjectIdentifier(table[key]!).hashValue } },
            { for _ in 0..<iterations { sink &+= ObjectIdentifier(try injector.get(BenchService.self)).hashValue } },
            {
                for _ in 0..<iterations {
                    sink &+= ObjectIdentifier(try locator.resolve(BenchService.self).get()).hashValue
                }
            },
        ])
        let (dictionary, injected, located) = (medians[0], medians[1], medians[2])
        let perCall = { (t: Double) in String(format: "%.1f ns", t / Double(iterations) * 1e9) }
        print("cached singleton resolve, \(iterations) per sample, median of \(samples) (variants interleaved):")
        print("  dictionary [String: T] lookup    \(perCall(dictionary))")
        print(
            "  Injector.get (singleton cached)  \(perCall(injected))   \(Measure.ratio(injected, dictionary)) of dictionary (goal <= 3×)"
        )
        print(
            "  ServiceLocator.resolve (cached)  \(perCall(located))   \(Measure.ratio(located, dictionary)) of dictionary (goal <= 3×)"
        )
        if sink == 42 { print("") }  // keeps the loops observable
    }

    // MARK: 2. libffi vs a direct call

    static let source = #"""
        #include <stdint.h>
        #include <stdlib.h>
        #include <string.h>
        typedef struct controller { char name[32]; int32_t count; double scale; } controller;
        /* Initializer-shaped: allocates and fills a small object, as module-file initializers do. */
        void *bench_make(const char *name, int32_t count, double scale) {
            controller *c = malloc(sizeof *c);
            strncpy(c->name, name, sizeof c->name - 1);
            c->name[sizeof c->name - 1] = 0;
            c->count = count;
            c->scale = scale;
            return c;
        }
        int32_t bench_add(int32_t a, int32_t b) { return a + b; }

        /* libffi's own floor, measured in C: n direct calls of bench_make through a pointer vs n ffi_calls. */
        #include <ffi.h>
        #include <time.h>
        static double seconds(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
        double bench_floor(int n, int through_ffi) {
            ffi_cif cif;
            ffi_type *types[3] = { &ffi_type_pointer, &ffi_type_sint32, &ffi_type_double };
            ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 3, &ffi_type_pointer, types);
            const char *name = "Home"; int32_t count = 3; double scale = 1.5;
            void *values[3] = { &name, &count, &scale };
            void *(*volatile make)(const char *, int32_t, double) = bench_make;
            double start = seconds();
            if (through_ffi) {
                for (int i = 0; i < n; i++) { ffi_arg r; ffi_call(&cif, FFI_FN(bench_make), &r, values); free((void *)r); }
            } else {
                for (int i = 0; i < n; i++) { free(make(name, count, scale)); }
            }
            return seconds() - start;
        }
        """#

    static func ffiSection() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-ffi-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let sourceFile = work.appendingPathComponent("bench.c")
        let library = work.appendingPathComponent("libbench.so")
        try source.write(to: sourceFile, atomically: true, encoding: .utf8)
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O2", "-shared", "-fPIC", sourceFile.path, "-o", library.path, "-lffi"]
        try cc.run()
        cc.waitUntilExit()
        guard cc.terminationStatus == 0, let handle = dlopen(library.path, RTLD_NOW | RTLD_LOCAL),
            let make = dlsym(handle, "bench_make"), let add = dlsym(handle, "bench_add"),
            let floor = dlsym(handle, "bench_floor")
        else {
            print("libffi section skipped: cannot build or load the C benchmark library with cc")
            return
        }
        defer { dlclose(handle) }

        typealias MakeFn = @convention(c) (UnsafePointer<CChar>?, Int32, Double) -> UnsafeMutableRawPointer?
        typealias AddFn = @convention(c) (Int32, Int32) -> Int32
        let directMake = unsafeBitCast(make, to: MakeFn.self)
        let directAdd = unsafeBitCast(add, to: AddFn.self)
        typealias FloorFn = @convention(c) (Int32, Int32) -> Double
        let measureFloor = unsafeBitCast(floor, to: FloorFn.self)
        var floorDirect = 0.0
        var floorFFI = 0.0
        let cachedMake = try FFICall(function: UnsafeRawPointer(make), signature: FFISignature("(str,i32,f64)->ptr"))
        let cachedAdd = try FFICall(function: UnsafeRawPointer(add), signature: FFISignature("(i32,i32)->i32"))
        let makeValues: [FFIValue] = [.string("Home"), .int(3), .double(1.5)]
        let makeArguments: [Any] = ["Home", 3, 1.5]
        let addValues: [FFIValue] = [.int(40), .int(2)]

        let iterations = 100_000
        var sink = 0
        let prepared = try cachedMake.prepare(makeValues)
        let medians = try interleaved([
            {
                for _ in 0..<iterations {
                    let object = "Home".withCString { directMake($0, 3, 1.5) }
                    sink &+= Int(bitPattern: object)
                    free(object)
                }
            },
            {
                for _ in 0..<iterations {
                    guard case .pointer(let object) = try cachedMake.call(values: makeValues) else { continue }
                    sink &+= Int(bitPattern: object)
                    free(object)
                }
            },
            {
                for _ in 0..<iterations {
                    guard case .pointer(let object) = cachedMake.call(prepared: prepared) else { continue }
                    sink &+= Int(bitPattern: object)
                    free(object)
                }
            },
            {
                for _ in 0..<iterations {
                    guard case .pointer(let object) = try cachedMake.call(makeArguments) else { continue }
                    sink &+= Int(bitPattern: object)
                    free(object)
                }
            },
            { for i in 0..<iterations { sink &+= Int(directAdd(Int32(truncatingIfNeeded: i), 2)) } },
            {
                for _ in 0..<iterations {
                    if case .int(let v) = try cachedAdd.call(values: addValues) { sink &+= Int(v) }
                }
            },
            { floorDirect = measureFloor(Int32(iterations), 0) },
            { floorFFI = measureFloor(Int32(iterations), 1) },
        ])
        let (direct, viaFFI, viaFFIPrepared, viaFFIChecked, directAddTime, ffiAddTime) =
            (medians[0], medians[1], medians[2], medians[3], medians[4], medians[5])
        let (floorDirectTime, floorFFITime) = (medians[6], medians[7])
        _ = (floorDirect, floorFFI)
        let perCall = { (t: Double) in String(format: "%.1f ns", t / Double(iterations) * 1e9) }
        print("C call, \(iterations) per sample, median of \(samples) (variants interleaved):")
        print("  bench_make(str,i32,f64)->ptr (malloc + fill, freed by the caller):")
        print("    direct C call                   \(perCall(direct))")
        print(
            "    cached libffi call (values)     \(perCall(viaFFI))   \(Measure.ratio(viaFFI, direct)) of direct (goal <= 3×)"
        )
        print(
            "    cached libffi call (prepared)   \(perCall(viaFFIPrepared))   \(Measure.ratio(viaFFIPrepared, direct)) of direct (defaults laid out once, as bindings called with their defaults are)"
        )
        print(
            "    cached libffi call (Swift args) \(perCall(viaFFIChecked))   \(Measure.ratio(viaFFIChecked, direct)) of direct (type-checked per call)"
        )
        print("    libffi's own floor, in C (ffi_call with a prepared cif vs a call through a pointer):")
        print(
            "      direct \(perCall(floorDirectTime)), ffi_call \(perCall(floorFFITime))   \(Measure.ratio(floorFFITime, floorDirectTime))"
        )
        print(
            "    a prepared binding call against libffi's floor: \(Measure.ratio(viaFFIPrepared, floorFFITime)) (goal <= 1.1×)"
        )
        print("  bench_add(i32,i32)->i32 (a function with no body to speak of, for scale):")
        print("    direct C call                   \(perCall(directAddTime))")
        print(
            "    cached libffi call (values)     \(perCall(ffiAddTime))   \(Measure.ratio(ffiAddTime, directAddTime)) of direct"
        )
        if sink == 42 { print("") }
    }
}
