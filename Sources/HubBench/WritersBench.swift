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
        _ = try BenchProcess.run(hubhost.path, render(empty, "json"))  // the probe cache, warm
        let pythonArguments = [
            "-c", "import json,sys; d=json.load(open(sys.argv[1])); open(sys.argv[2],'w').write(json.dumps(d))",
            view.path, root.appendingPathComponent("python.json").path,
        ]
        let formats = ["json", "svg", "text"]
        let goals = ["json": 0.5, "svg": 0.8, "text": 0.4]
        var cpu: [String: [Double]] = [:]
        var peak: [String: [Int]] = [:]
        for _ in 0..<rounds {
            cpu["python", default: []].append(try BenchProcess.run(python, pythonArguments).cpu)
            for format in formats {
                let run = try BenchProcess.run(hubhost.path, render(view, format))
                cpu[format, default: []].append(run.cpu)
                if let kib = try BenchProcess.peakKiB(hubhost.path, render(view, format)) {
                    peak[format, default: []].append(kib)
                }
            }
            if let kib = try BenchProcess.peakKiB(hubhost.path, render(empty, "svg")) {
                peak["empty", default: []].append(kib)
            }
        }
        // One more Python run, so each round's renders sit between two baselines: a round's ratio is its render
        // over the mean of the Python runs before and after it, and the figure is the median of the rounds'
        // ratios (the machine's speed drifts by tens of percent over a run; a pair shares the drift).
        cpu["python", default: []].append(try BenchProcess.run(python, pythonArguments).cpu)
        let pythonRuns = cpu["python"]!
        let roundBaselines = (0..<rounds).map { (pythonRuns[$0] + pythonRuns[$0 + 1]) / 2 }
        let baseline = Measure.medianOf(pythonRuns)
        let viewKiB = (try FileManager.default.attributesOfItem(atPath: view.path)[.size] as? Int ?? 0) / 1024
        print(
            "hubhost render of \(count) components (\(viewKiB) KiB view) to a file, CPU time, \(rounds) rounds of interleaved processes:"
        )
        print("  Python's C json, read the view and write it:  \(Measure.ms(baseline)) (median)")
        for format in formats {
            let time = Measure.medianOf(cpu[format]!)
            let ratio = Measure.medianOf(zip(cpu[format]!, roundBaselines).map { $0 / $1 })
            print(
                "  render --format \(format.padding(toLength: 5, withPad: " ", startingAt: 0))  \(Measure.ms(time))   \(Measure.ratio(ratio, 1)) of Python, median of the rounds' ratios (goal ≤ \(goals[format]!)×); of medians \(Measure.ratio(time, baseline))"
            )
        }
        guard let emptyPeaks = peak["empty"] else {
            print("  peak memory: not measured (no /usr/bin/time)")
            return
        }
        let emptyPeak = medianInt(emptyPeaks)
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
}
