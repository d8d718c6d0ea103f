import Foundation
import HubCore

/// Issue 14: `hubhost events` scrolling 100k components in 1,000 steps with the default trace (every call into a
/// component) against the same with `--no-calls`, as processes (CPU time, medians of 15 interleaved pairs).
extension EventsBench {
    static func traceSection() throws {
        guard let (hubhost, demoC) = BenchBinaries.hubhostAndDemoC(section: "events trace") else { return }
        let (root, plugins) = try BenchBinaries.workFolder("trace")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.copyItem(at: demoC, to: plugins.appendingPathComponent("libHubDemoC.so"))
        let view = root.appendingPathComponent("view.json")
        let items = (0..<100_000).map { i in
            "{\"id\":\"c\(i)\",\"component\":{\"id\":\"cdemo:banner\"},\"text\":{\"title\":\"Item \(i)\"}}"
        }
        try ("{\"body\":[" + items.joined(separator: ",") + "]}").write(to: view, atomically: true, encoding: .utf8)
        let script = root.appendingPathComponent("scroll.jsonl")
        // 1,000 steps down the whole content (100k banners of 60-odd points).
        let lines = (1...1000).map { "{\"event\":\"scroll\",\"y\":\($0 * 6_400)}" }
        try (lines.joined(separator: "\n") + "\n").write(to: script, atomically: true, encoding: .utf8)
        let arguments = [
            "events", view.path, script.path, "--plugins", plugins.path, "--plugin-cache",
            root.appendingPathComponent("cache").path,
        ]
        try LoaderBench.runQuietly(hubhost, arguments + ["--no-calls"])  // warm the probe cache
        // CPU time of each process, interleaved pairs: wall times of a 150 ms process swung by a tenth from run to
        // run on this machine, which is the size of the difference measured. Fifteen pairs, each led by the two
        // variants in turn: with seven, always traced first, the ratio of medians read 0.91x to 1.33x across runs.
        let pairs = 15
        var traced: [Double] = []
        var quiet: [Double] = []
        for pair in 0..<pairs {
            func runTraced() throws { traced.append(try BenchProcess.run(hubhost.path, arguments).cpu) }
            func runQuiet() throws { quiet.append(try BenchProcess.run(hubhost.path, arguments + ["--no-calls"]).cpu) }
            if pair.isMultiple(of: 2) {
                try runTraced()
                try runQuiet()
            } else {
                try runQuiet()
                try runTraced()
            }
        }
        let t = Measure.medianOf(traced)
        let q = Measure.medianOf(quiet)
        let paired = Measure.medianOf(zip(traced, quiet).map { $0 / $1 })
        print(
            "hubhost events, 100k components scrolled in 1,000 steps (\(pairs) interleaved pairs of processes, CPU time):"
        )
        print(
            "  --no-calls \(Measure.ms(q))   default trace \(Measure.ms(t))   ratio of medians \(Measure.ratio(t, q)), "
                + "median of pairs \(String(format: "%.2f×", paired))  (goal ≤ 1.3×)")
    }
}
