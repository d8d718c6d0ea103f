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
        }
        var name: String
        var outcome: Outcome

        var isMatch: Bool { if case .matched = outcome { return true } else { return false } }
        var isMissing: Bool { if case .missing = outcome { return true } else { return false } }
        var isDifference: Bool { if case .differs = outcome { return true } else { return false } }

        var summary: String {
            switch outcome {
            case .matched(let pixels): return pixels == 0 ? "matches" : "matches within tolerance (\(pixels) pixels)"
            case .missing(let path): return "no golden at \(path) (record it first)"
            case .differs(let diff, let expected, let actual):
                if diff.image == nil {
                    return "size changed: \(expected.width)×\(expected.height) → \(actual.width)×\(actual.height)"
                }
                return String(
                    printf: "%ld of %ld pixels differ (%.3f%%)", diff.differing, diff.total, diff.fraction * 100)
            }
        }
    }

    var results: [Result]
    var tolerance: Double

    /// Writes NAME.expected.png, NAME.actual.png, NAME.diff.png for each difference, and report.html.
    func write(to folder: URL) throws {
        var rows = ""
        for result in results {
            guard case .differs(let diff, let expected, let actual) = result.outcome else { continue }
            let base = result.name
            try Snapshot.write(try expected.pngData(), to: folder.appendingPathComponent(base + ".expected.png"))
            try Snapshot.write(try actual.pngData(), to: folder.appendingPathComponent(base + ".actual.png"))
            if let image = diff.image {
                try Snapshot.write(try image.pngData(), to: folder.appendingPathComponent(base + ".diff.png"))
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
            \(rows)</body></html>

            """
        try Snapshot.write(Data(page.utf8), to: folder.appendingPathComponent("report.html"))
    }

    /// One test suite, one test case per image; differences and missing goldens are failures.
    func junit() -> String {
        let failures = results.filter { !$0.isMatch }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuite name=\"hubhost snapshot\" tests=\"\(results.count)\" failures=\"\(failures)\">\n"
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
