import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 14, goals 3 and 4: `hubhost render` of 100k components to a file in JSON, SVG and text, as processes,
/// against Python's C json reading the same view and writing it back (CPU time, medians of interleaved runs), and
/// the peak memory per component over a render of an empty view.
enum WritersBench {
    static let count = 100_000
    static let rounds = 5

    static func run() throws {
        guard let (hubhost, demoC) = BenchBinaries.hubhostAndDemoC(section: "writers") else { return }
        let demoSwift = BenchBinaries.directory.appendingPathComponent("libHubDemoSwift.so")
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            print("writers: skipped: no \(python) for the baseline")
            return
        }
        let (root, plugins) = try BenchBinaries.workFolder("writers")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.copyItem(at: demoC, to: plugins.appendingPathComponent("libHubDemoC.so"))
        if FileManager.default.fileExists(atPath: demoSwift.path) {
            try FileManager.default.copyItem(at: demoSwift, to: plugins.appendingPathComponent("libHubDemoSwift.so"))
        }
        let view = root.appendingPathComponent("view.json")
        try Data(makeView(count: count).utf8).write(to: view)
        let empty = root.appendingPathComponent("empty.json")
        try Data(#"{"body": []}"#.utf8).write(to: empty)
        let common = ["--plugins", plugins.path, "--plugin-cache", root.appendingPathComponent("cache").path]
        func render(_ file: URL, _ format: String) -> [String] {
            ["render", file.path, "--format", format, "-o", root.appendingPathComponent("out.\(format)").path] + common
        }
        _ = try measure(hubhost.path, render(empty, "json"))  // the probe cache, warm
        let pythonArguments = [
            "-c", "import json,sys; d=json.load(open(sys.argv[1])); open(sys.argv[2],'w').write(json.dumps(d))",
            view.path, root.appendingPathComponent("python.json").path,
        ]
        let formats = ["json", "svg", "text"]
        let goals = ["json": 0.5, "svg": 0.8, "text": 0.4]
        var cpu: [String: [Double]] = [:]
        var peak: [String: [Int]] = [:]
        for _ in 0..<rounds {
            cpu["python", default: []].append(try measure(python, pythonArguments).cpu)
            for format in formats {
                let run = try measure(hubhost.path, render(view, format))
                cpu[format, default: []].append(run.cpu)
                peak[format, default: []].append(run.peakKiB)
            }
            peak["empty", default: []].append(try measure(hubhost.path, render(empty, "svg")).peakKiB)
        }
        let baseline = Measure.medianOf(cpu["python"]!)
        let viewKiB = (try FileManager.default.attributesOfItem(atPath: view.path)[.size] as? Int ?? 0) / 1024
        print(
            "hubhost render of \(count) components (\(viewKiB) KiB view) to a file, CPU time, median of \(rounds) interleaved processes:"
        )
        print("  Python's C json, read the view and write it:  \(Measure.ms(baseline))")
        for format in formats {
            let time = Measure.medianOf(cpu[format]!)
            print(
                "  render --format \(format.padding(toLength: 5, withPad: " ", startingAt: 0))  \(Measure.ms(time))   \(Measure.ratio(time, baseline)) of Python (goal ≤ \(goals[format]!)×)"
            )
        }
        let emptyPeak = medianInt(peak["empty"]!)
        for format in formats {
            let over = max(0, medianInt(peak[format]!) - emptyPeak)
            print(
                "  peak memory, \(format) over an empty view: \(over / 1024) MiB = \(over * 1024 / count) B per component\(format == "svg" ? " (goal ≤ 1024 B)" : "")"
            )
        }
    }

    /// The example views' mix (generate-large.py): both shipped plugins, a fallback, subtitles and colours.
    static func makeView(count: Int) -> String {
        let kinds = [
            ("demo:row", "row"), ("demo:card", "card"), ("demo:card", "card"), ("cdemo:tile", "card"),
            ("cdemo:badge", "row"), ("cdemo:banner", "banner"), ("demo:image", "card"), ("nowhere:thing", "row"),
        ]
        let colors = ["#1DB954", "#007AFF", "#FF9500", "#AF52DE", "#FF3B30"]
        var out = #"{"id": "large", "title": "\#(count) components", "body": ["#
        for i in 0..<count {
            let (component, category) = kinds[i % kinds.count]
            if i > 0 { out += ", " }
            out += #"{"id": "item-\#(i)", "component": {"id": "\#(component)", "category": "\#(category)"}, "#
            out += #""text": {"title": "Item \#(i)""#
            if i % 3 == 0 { out += #", "subtitle": "Subtitle \#(i)""# }
            out += "}"
            if i % 5 == 0 { out += #", "custom": {"color": "\#(colors[i % colors.count])"}"# }
            out += "}"
        }
        return out + "]}"
    }

    static func medianInt(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }

    /// Runs a process to the end (output discarded) and returns its CPU time, its children's included, and its
    /// peak resident memory.
    static func measure(_ executable: String, _ arguments: [String]) throws -> (cpu: Double, peakKiB: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        guard status & 0x7f == 0, (status >> 8) & 0xff <= 1 else {
            throw BenchError("\(executable) \(arguments.prefix(2).joined(separator: " ")) failed (status \(status))")
        }
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, usage.ru_maxrss)
    }
}
