import FoundationEssentials
import HubCore
import HubRender

/// What `snapshot verify` found, as a report folder (expected, actual and diff PNGs, report.html) and JUnit XML.
struct SnapshotReport {
    struct Result {
        enum Outcome {
            case matched(Int)
            case differs(PixelDiff, expected: PNGImage, actual: PNGImage)
            case missing(String)
            /// A golden that is there but is no PNG this build can read: the path, and what it is instead.
            case damaged(String, String)
            /// A gallery golden no story of the loaded plugins draws, and why.
            case undrawn(String)
        }
        var name: String
        var outcome: Outcome

        var isMatch: Bool { if case .matched = outcome { return true } else { return false } }
        /// No usable golden: none there, or a damaged one.
        var isMissing: Bool {
            switch outcome {
            case .missing, .damaged: return true
            default: return false
            }
        }
        var isUndrawn: Bool { if case .undrawn = outcome { return true } else { return false } }
        var isDifference: Bool { if case .differs = outcome { return true } else { return false } }

        var summary: String {
            switch outcome {
            case .matched(let pixels): return pixels == 0 ? "matches" : "matches within tolerance (\(pixels) pixels)"
            case .missing(let path): return "no golden at \(path) (record it first)"
            case .damaged(let path, let what): return "the golden at \(path) is damaged: \(what)"
            case .undrawn(let why): return "a golden no story of this run draws: \(why)"
            case .differs(let diff, let expected, let actual):
                var text =
                    diff.sizeChanged
                    ? "size changed: \(expected.width)×\(expected.height) → \(actual.width)×\(actual.height); " : ""
                text += String(
                    printf: "%ld of %ld pixels differ (%.3f%%)", diff.differing, diff.total, diff.fraction * 100)
                if let box = diff.bounds {
                    text += ", within x \(box.x)–\(box.x + box.width - 1), y \(box.y)–\(box.y + box.height - 1)"
                }
                return text
            }
        }
    }

    var results: [Result]
    var tolerance: Double
    /// Inputs and plugins that could not be used (a failing test case each).
    var failures: [(name: String, reason: String)] = []

    /// Lists the images a report wrote, so the next one removes exactly those (and no file of the user's).
    static let manifestName = ".hubhost-report"

    /// Writes NAME.expected.png, NAME.actual.png, NAME.diff.png for each difference, and report.html.
    func write(to folder: URL) throws {
        // The previous report's images go first: a difference fixed since must not be shown again.
        let manifest = folder.appendingPathComponent(Self.manifestName)
        if let listed = try? String(contentsOf: manifest, encoding: .utf8) {
            for line in listed.split(separator: "\n") where Self.isReportImage(String(line)) {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(String(line)))
            }
        }
        var written: [String] = []
        var rows = ""
        for result in results {
            guard case .differs(let diff, let expected, let actual) = result.outcome else { continue }
            let base = result.name
            try Snapshot.write(try expected.pngData(), to: folder.appendingPathComponent(base + ".expected.png"))
            try Snapshot.write(try actual.pngData(), to: folder.appendingPathComponent(base + ".actual.png"))
            written += [base + ".expected.png", base + ".actual.png"]
            if let image = diff.image {
                try Snapshot.write(try image.pngData(), to: folder.appendingPathComponent(base + ".diff.png"))
                written.append(base + ".diff.png")
            }
            let name = escape(base)
            rows += "<section><h2>\(name)</h2><p>\(escape(result.summary))</p><div class=\"row\">"
            rows += "<figure><img src=\"\(name).expected.png\"><figcaption>expected</figcaption></figure>"
            rows += "<figure><img src=\"\(name).actual.png\"><figcaption>actual</figcaption></figure>"
            if diff.image != nil {
                rows += "<figure><img src=\"\(name).diff.png\"><figcaption>diff</figcaption></figure>"
            }
            rows += "</div></section>\n"
        }
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>hubhost snapshot report</title>
            <style>
              body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; background: #f2f2f2; }
              .row { display: flex; gap: 16px; align-items: flex-start; }
              figure { margin: 0; background: #fff; padding: 4px; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
              img { display: block; image-rendering: pixelated; }
            </style></head><body>
            <h1>\(results.filter(\.isDifference).count) of \(results.count) image(s) differ</h1>
            <p>Tolerance: \(tolerance)% of pixels.</p>
            \(listItems("Missing or damaged goldens", results.filter(\.isMissing).map { ($0.name, $0.summary) }))
            \(listItems("Goldens no story draws", results.filter(\.isUndrawn).map { ($0.name, $0.summary) }))
            \(listItems("Not checked", failures))
            \(rows)</body></html>

            """
        try Snapshot.write(Data(page.utf8), to: folder.appendingPathComponent("report.html"))
        try Snapshot.write(Data(written.map { $0 + "\n" }.joined().utf8), to: manifest)
    }

    /// A name a report writes (NAME.expected.png and so on, under the report folder): the manifest is a file
    /// anyone could edit, so nothing else it lists is removed.
    private static func isReportImage(_ name: String) -> Bool {
        !name.hasPrefix("/") && !name.split(separator: "/").contains("..")
            && [".expected.png", ".actual.png", ".diff.png"].contains { name.hasSuffix($0) }
    }

    private func listItems(_ title: String, _ items: [(name: String, reason: String)]) -> String {
        guard !items.isEmpty else { return "" }
        let rows = items.map { "<li><b>\(escape($0.name))</b>: \(escape($0.reason))</li>" }.joined()
        return "<h2>\(title)</h2><ul>\(rows)</ul>"
    }

    /// One test suite, one test case per image; differences and missing goldens are failures.
    func junit() -> String {
        let failing = results.filter { !$0.isMatch }.count + failures.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out +=
            "<testsuite name=\"hubhost snapshot\" tests=\"\(results.count + failures.count)\" failures=\"\(failing)\">\n"
        // What could not be used at all is a failure of its own, not an absence of test cases.
        for failure in failures {
            out += "  <testcase classname=\"snapshot.inputs\" name=\"\(escape(failure.name))\">\n"
            out += "    <failure message=\"\(escape(failure.reason))\"/>\n  </testcase>\n"
        }
        for result in results {
            out += "  <testcase classname=\"snapshot\" name=\"\(escape(result.name))\""
            if result.isMatch {
                out += "/>\n"
            } else {
                out += ">\n    <failure message=\"\(escape(result.summary))\"/>\n  </testcase>\n"
            }
        }
        return out + "</testsuite>\n"
    }
}
