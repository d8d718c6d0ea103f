import Foundation

/// Timing helpers shared by the benchmark sections.
enum Measure {
    /// Monotonic seconds.
    static func now() -> Double { seconds(CLOCK_MONOTONIC) }

    /// Seconds of CPU this thread has run: unlike wall time, not counting time the VM's CPU was taken away
    /// (steal), which made in-process C/Swift ratios swing by ±0.3 between runs on this machine.
    static func threadCPU() -> Double { seconds(CLOCK_THREAD_CPUTIME_ID) }

    /// Seconds of CPU every thread of this process has run (work moved off the main thread shows here).
    static func processCPU() -> Double { seconds(CLOCK_PROCESS_CPUTIME_ID) }

    private static func seconds(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// `pairs` runs of `a` and of `b`, each pair in the other order than the one before (a, b, then b, a, …), so
    /// a slow stretch of the machine falls on both halves of a pair; the results in run order per side.
    static func alternatingPairs<T>(_ pairs: Int, _ a: () -> T, _ b: () -> T) -> (a: [T], b: [T]) {
        var results: (a: [T], b: [T]) = ([], [])
        for pair in 0..<pairs {
            if pair % 2 == 0 {
                results.a.append(a())
                results.b.append(b())
            } else {
                results.b.append(b())
                results.a.append(a())
            }
        }
        return results
    }

    /// Runs `body` `repetitions` times and returns the median duration in seconds.
    static func median(repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
        var samples: [Double] = []
        for _ in 0..<repetitions {
            let start = now()
            try body()
            samples.append(now() - start)
        }
        return medianOf(samples)
    }

    static func medianOf(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    /// Peak resident set size of this process in bytes (VmHWM).
    static func peakRSS() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
    static func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
}

/// A benchmark that could not measure what it meant to, and why.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The `hubhost` executable and the C demo plugin built beside this benchmark, for sections that run hubhost as
/// a process; nil (with a line saying so) when they are not built in the same configuration.
enum BenchBinaries {
    static let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

    static func hubhostAndDemoC(section: String) -> (hubhost: URL, demoC: URL)? {
        let hubhost = directory.appendingPathComponent("hubhost")
        let demoC = directory.appendingPathComponent("libHubDemoC.so")
        guard FileManager.default.isExecutableFile(atPath: hubhost.path),
            FileManager.default.fileExists(atPath: demoC.path)
        else {
            print("\(section): skipped: build the hubhost and HubDemoC products in the same configuration")
            return nil
        }
        return (hubhost, demoC)
    }

    /// A fresh folder for a section (the caller removes it) with a plugin folder hubhost accepts (mode 755).
    static func workFolder(_ label: String) throws -> (root: URL, plugins: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-\(label)-bench-\(getpid())")
        let plugins = root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(
            at: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return (root, plugins)
    }
}

/// A process run to the end with its output discarded, timed without Foundation's `Process` (whose
/// `waitUntilExit` notices an exit only at its run loop's next turn, tens of milliseconds late).
enum BenchProcess {
    struct Run {
        /// Wall time from spawn to reaped.
        var wall: Double
        /// CPU time, its children's included.
        var cpu: Double
        /// Peak resident memory (KiB).
        var peakKiB: Int
    }

    /// Runs `executable` with `arguments` (and `environment`, else this process's); exit 0 or 1 is success.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Run {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables =
            (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in variables { free(pointer) } }
        var pid: pid_t = 0
        let start = Measure.now()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, variables)
        guard spawned == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = Measure.now() - start
        guard status & 0x7f == 0, (status >> 8) & 0xff <= 1 else {
            throw BenchError("\(executable) \(arguments.prefix(2).joined(separator: " ")) failed (status \(status))")
        }
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return Run(wall: wall, cpu: cpu, peakKiB: usage.ru_maxrss)
    }

    /// The peak resident memory (KiB) of `executable` run with `arguments`, as `/usr/bin/time` reports it; nil
    /// without it. `Run.peakKiB` cannot say: a process spawned from this one starts its peak at this process's
    /// (Linux keeps the larger of the old and new image's peaks across exec), which after the render section is
    /// far above any render's. `time` is small, so its child's peak is the child's own.
    static func peakKiB(_ executable: String, _ arguments: [String]) throws -> Int? {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { return nil }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("hubbench-peak-\(getpid())")
        defer { try? FileManager.default.removeItem(at: report) }
        try run(time, ["-f", "%M", "-o", report.path, executable] + arguments)
        let text = try String(contentsOf: report, encoding: .utf8)
        return text.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
}
