// hubhost-bench: `make bench` (release). Each section lives in its own file and prints ratios against a
// baseline measured in the same run, with medians. Run one section: `hubhost-bench loader`.
import Foundation

let sections: [(name: String, run: () throws -> Void)] = [
    ("loader", LoaderBench.run),
    ("render", RenderBench.run),
    ("writers", WritersBench.run),
    ("injection", InjectionBench.run),
    ("events", EventsBench.run),
    ("trace", EventsBench.traceSection),
    ("reload", ReloadBench.run),
    ("isolation", IsolationBench.run),
    ("snapshot", SnapshotBench.run),
]

let wanted = Set(CommandLine.arguments.dropFirst())
for section in sections where wanted.isEmpty || wanted.contains(section.name) {
    print("== \(section.name)")
    do { try section.run() } catch { print("\(section.name): failed: \(error)") }
}
