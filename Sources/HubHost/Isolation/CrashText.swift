import FoundationEssentials

/// What a crashed plugin left on stderr, cut to what helps: the Swift runtime's one useful line
/// (`Hello.swift:48: Fatal error: Unexpectedly found nil…`) or Rust's panic (`thread 'main' panicked at
/// src/lib.rs:27:26:` and its message on the next line) comes before a backtrace of dozens of frames, which a tail
/// of the last lines would keep instead.
public enum CrashText {
    /// The Swift runtime's report of a trap (file and line, and why), or a Rust panic's, joined with its message
    /// (`joiningPanicMessages`). Not Rust's second panic, "panic in a function that cannot unwind" (a panic
    /// reaching an `extern "C"` function's end): the first says where and why.
    public static func isFatalError(_ line: some StringProtocol) -> Bool {
        if line.contains("Fatal error:") || line.contains("Precondition failed:") || line.contains("Assertion failed:")
        {
            return true
        }
        return isRustPanic(line) && !isPanicHeading(line)
            && !line.contains("panic in a function that cannot unwind")
            && !line.contains("panic in a destructor during cleanup")
    }

    /// A Rust panic's first line, in every form rustc has printed: "thread 'main' panicked at …", "thread
    /// '<unnamed>' (5448) panicked at …" (a thread the host started has no name; newer releases add its id).
    static func isRustPanic(_ line: some StringProtocol) -> Bool {
        line.hasPrefix("thread '") && line.contains(" panicked at ")
    }

    /// Rust's panic heading, whose message is on the next line: "thread 'main' panicked at src/lib.rs:27:26:".
    public static func isPanicHeading(_ line: some StringProtocol) -> Bool {
        isRustPanic(line) && line.hasSuffix(":")
    }

    /// Leaves out backtrace lines, including Rust's short form (`RUST_BACKTRACE=1`: "  24: symbol" and "at
    /// FILE:LINE" lines with no address), which only the "stack backtrace:" heading before them tells apart.
    public struct BacktraceFilter {
        private var inRustBacktrace = false
        public init() {}

        public mutating func keeps(_ line: some StringProtocol) -> Bool {
            let trimmed = line.trimmingWhitespace()
            if trimmed == "stack backtrace:" {
                inRustBacktrace = true
                return false
            }
            if CrashText.isBacktrace(line) { return false }
            if inRustBacktrace {
                let first = trimmed.split(separator: " ", maxSplits: 1).first
                if first.map(CrashText.isRustFrameNumber) == true || first == "at" { return false }
                inRustBacktrace = false
            }
            return true
        }
    }

    /// `lines` with each Rust panic heading and its message made one line.
    public static func joiningPanicMessages(_ lines: [Substring]) -> [Substring] {
        var joined: [Substring] = []
        var index = 0
        while index < lines.count {
            if isPanicHeading(lines[index]), index + 1 < lines.count {
                joined.append(Substring(lines[index] + " " + lines[index + 1]))
                index += 2
            } else {
                joined.append(lines[index])
                index += 1
            }
        }
        return joined
    }

    /// A line of a runtime backtrace: Swift's "12  hubhost  0x00005641… <unavailable> + 1911397", Rust's
    /// "  12:     0x55e3c65af581 - std::rt::lang_start" and the "at FILE:LINE" under it, or a heading or note.
    public static func isBacktrace(_ line: some StringProtocol) -> Bool {
        let trimmed = line.trimmingWhitespace()
        if trimmed == "Current stack trace:" || trimmed == "Stack dump:" || trimmed == "stack backtrace:" {
            return true
        }
        if trimmed.hasPrefix("note: Some details are omitted")
            || trimmed == "thread caused non-unwinding panic. aborting."
            || trimmed.hasPrefix("note: run with `RUST_BACKTRACE=")
        {
            return true
        }
        let words = trimmed.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
        if words.count >= 3 && words[0].allSatisfy(\.isNumber) && words[2].hasPrefix("0x") { return true }
        // Rust: "N:" then an address, or a frame's location, indented under it.
        if words.count >= 2 && isRustFrameNumber(words[0]) && words[1].hasPrefix("0x") { return true }
        return words.first == "at" && line.hasPrefix("          ")
    }

    /// A Rust backtrace frame's number: "24:".
    static func isRustFrameNumber(_ word: Substring) -> Bool {
        word.count > 1 && word.hasSuffix(":") && word.dropLast().allSatisfy(\.isNumber)
    }

    /// The last lines of `text` within `limit` bytes, backtrace lines left out, with the last fatal-error line
    /// first when it would have been cut.
    public static func tail(of text: String, limit: Int = 2000) -> String {
        var filter = BacktraceFilter()
        let lines = joiningPanicMessages(
            text.split(separator: "\n", omittingEmptySubsequences: false).filter { filter.keeps($0) })
        var kept: [Substring] = []
        var size = 0
        for line in lines.reversed() {
            guard size + line.utf8.count + 1 <= limit else { break }
            kept.append(line)
            size += line.utf8.count + 1
        }
        kept.reverse()
        if let fatal = lines.last(where: { isFatalError($0) }), !kept.contains(fatal) {
            kept.insert(fatal.prefix(400), at: 0)
        }
        return kept.joined(separator: "\n").trimmingWhitespace()
    }

    /// The last lines of `tail` within `limit` bytes, whole lines only (a line longer than that is cut at its start).
    public static func lastLines(of tail: String, limit: Int) -> String {
        guard tail.utf8.count > limit else { return tail }
        var kept: [Substring] = []
        var size = 0
        for line in tail.split(separator: "\n").reversed() {
            guard size + line.utf8.count + 1 <= limit else {
                if kept.isEmpty { kept.append(line.prefix(limit)) }
                break
            }
            kept.append(line)
            size += line.utf8.count + 1
        }
        return kept.reversed().joined(separator: "\n")
    }

    /// The last fatal-error line among `lines`, when the runtime wrote one.
    public static func fatalError(in lines: [String]) -> String? {
        lines.last(where: { isFatalError($0) }).map { String($0.trimmingWhitespace().prefix(400)) }
    }
}
