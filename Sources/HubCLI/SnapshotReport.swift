import FoundationEssentials
import HubCore
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// What `snapshot verify` found, as a report folder (expected, actual and diff PNGs, report.html) and JUnit XML.
struct SnapshotReport {
    struct Result {
        enum Outcome {
            case matched(Int)
            case differs(PixelDiff, expected: PNGImage, actual: PNGImage)
            /// No golden at the path; what this run drew (a new story, view or step: what record would write).
            case missing(String, actual: PNGImage)
            /// A golden that is there but is no PNG this build can read: the path, what it is instead, and what this
            /// run drew.
            case damaged(String, String, actual: PNGImage)
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
            case .missing(let path, _): return "no golden at \(path) (record it first)"
            case .damaged(let path, let what, _): return "the golden at \(path) is damaged: \(what)"
            case .undrawn(let why): return "a golden no story of this run draws: \(why)"
            case .differs(let diff, let expected, let actual):
                var text =
                    diff.sizeChanged
                    ? "size changed: \(expected.width)×\(expected.height) → \(actual.width)×\(actual.height); " : ""
                text += String(
                    printf: "%ld of %ld pixels differ (%.3g%%)", diff.differing, diff.total, diff.fraction * 100)
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
    /// Pictures not drawn, with why (script steps after a line that could not apply): skipped test cases.
    var skipped: [(name: String, reason: String)] = []

    /// Lists the images a report wrote, so the next one removes exactly those (and no file of the user's).
    static let manifestName = ".hubhost-report"

    /// Writes NAME.expected.png, NAME.actual.png, NAME.diff.png for each difference, and report.html.
    func write(to folder: URL) throws {
        // Written so that an interrupted write (Ctrl-C, a full disk) leaves nothing that stands for this run or
        // that a later run cannot clean: the old page goes first, then the list names every image of the old
        // report and the new one before any is removed or written, and last it names the new ones only.
        let manifest = folder.appendingPathComponent(Self.manifestName)
        var written: [String] = []
        for result in results {
            switch result.outcome {
            case .differs(let diff, _, _):
                written += [result.name + ".expected.png", result.name + ".actual.png"]
                if diff.image != nil { written.append(result.name + ".diff.png") }
            case .missing, .damaged: written.append(result.name + ".actual.png")
            default: break
            }
        }
        let listed = ((try? String(contentsOf: manifest, encoding: .utf8)) ?? "").split(separator: "\n")
            .map(String.init).filter(Self.isReportImage)
        unlink(folder.appendingPathComponent("report.html").path)
        try ProcessStart.makeFolders(folder.path)
        try Snapshot.write(Data(Set(listed + written).sorted().map { $0 + "\n" }.joined().utf8), to: manifest)
        // A difference fixed since must not be shown again.
        for name in Set(listed).subtracting(written) { unlink(folder.appendingPathComponent(name).path) }
        Self.removeLeftTemporaries(in: folder)
        var rows = ""
        for result in results {
            // A new story or view has no golden: what it draws now is what a reviewer decides to record.
            switch result.outcome {
            case .missing(_, let actual), .damaged(_, _, let actual):
                let name = escape(result.name)
                try Snapshot.write(try actual.pngData(), to: folder.appendingPathComponent(result.name + ".actual.png"))
                rows += "<section><h2>\(name)</h2><p>\(escape(result.summary))</p><div class=\"row\">"
                rows += "<figure><img src=\"\(name).actual.png\"><figcaption>actual (what record would write)"
                rows += "</figcaption></figure></div></section>\n"
                continue
            default: break
            }
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
            \(listItems("Missing or damaged goldens", results.filter(\.isMissing).map { ($0.name, $0.summary) }))
            \(listItems("Goldens no story draws", results.filter(\.isUndrawn).map { ($0.name, $0.summary) }))
            \(listItems("Not checked", failures))
            \(rows)</body></html>

            """
        try Snapshot.write(Data(page.utf8), to: folder.appendingPathComponent("report.html"))
        try Snapshot.write(Data(written.map { $0 + "\n" }.joined().utf8), to: manifest)
    }

    /// The temporary files a run was stopped in the middle of renaming (".NAME.diff.png.hubhost-…", `OutputFile`'s
    /// names) of report images, the page and the list, in the report's own folders.
    private static func removeLeftTemporaries(in folder: URL) {
        var folders = [folder]
        while let current = folders.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: current.path) else { continue }
            for name in names {
                let url = current.appendingPathComponent(name)
                var info = stat()
                guard lstat(url.path, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    if !name.hasPrefix(".") { folders.append(url) }
                } else if let file = Self.temporaryOf(name),
                    isReportImage(file) || (current == folder && [manifestName, "report.html"].contains(file))
                {
                    unlink(url.path)
                }
            }
        }
    }

    /// "NAME" for `OutputFile`'s temporary name of it, ".NAME.hubhost-" and a random suffix; nil for other names.
    static func temporaryOf(_ name: String) -> String? {
        let marker = ".hubhost-"
        guard name.hasPrefix("."), name.count > marker.count + 1 else { return nil }
        // The last ".hubhost-" after the leading dot (a name such as ".hubhost-report" holds one at its start).
        let first = name.index(after: name.startIndex)
        var end = name.endIndex
        while end > first {
            end = name.index(before: end)
            if end > first, name[end...].hasPrefix(marker) { return String(name[first..<end]) }
        }
        return nil
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
            "<testsuite name=\"hubhost snapshot\" tests=\"\(results.count + failures.count + skipped.count)\" "
            + "failures=\"\(failing)\" skipped=\"\(skipped.count)\">\n"
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
        for step in skipped {
            out += "  <testcase classname=\"snapshot\" name=\"\(escape(step.name))\">\n"
            out += "    <skipped message=\"\(escape(step.reason))\"/>\n  </testcase>\n"
        }
        return out + "</testsuite>\n"
    }
}
