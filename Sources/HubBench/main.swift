// hubhost-bench: `make bench` (release). Each section lives in its own file and prints ratios against a
// baseline measured in the same run, with medians. Run one section: `hubhost-bench loader`.
import Foundation

let sections: [(name: String, run: () throws -> Void)] = [
    ("loader", LoaderBench.run),
    ("render", RenderBench.run),
    ("decode", DecodeBench.run),
    ("writers", WritersBench.run),
    ("injection", InjectionBench.run),
    ("events", EventsBench.run),
    ("trace", EventsBench.traceSection),
    ("reload", ReloadBench.run),
    ("isolation", IsolationBench.run),
    ("snapshot", SnapshotBench.run),
]

let wanted = CommandLine.arguments.dropFirst()
if wanted.isEmpty {
    // Every section in a process of its own, as every hubhost command runs in one: a section that ran after
    // others in the same process measured their leftovers (a gigabyte of fragmented heap made the C bridge's
    // small allocations, and so the C/Swift ratios, 0.15 worse than the same section alone).
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    for section in sections {
        let child = Process()
        child.executableURL = executable
        child.arguments = [section.name]
        do {
            try child.run()
            child.waitUntilExit()
            if child.terminationStatus != 0 {
                print("\(section.name): the section's process ended with status \(child.terminationStatus)")
            }
        } catch {
            print("\(section.name): cannot start its process: \(error)")
        }
    }
} else {
    for section in sections where wanted.contains(section.name) {
        print("== \(section.name)")
        fflush(stdout)
        do { try section.run() } catch { print("\(section.name): failed: \(error)") }
    }
}
