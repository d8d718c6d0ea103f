import FoundationEssentials

/// What a crashed plugin left on stderr, cut to what helps: the Swift runtime's one useful line
/// (`Hello.swift:48: Fatal error: Unexpectedly found nil…`) comes before a backtrace of thirty frames of bare
/// addresses, which a tail of the last lines would keep instead.
public enum CrashText {
    /// The Swift runtime's report of a trap: file and line, and why.
    public static func isFatalError(_ line: some StringProtocol) -> Bool {
        line.contains("Fatal error:") || line.contains("Precondition failed:")
            || line.contains("Assertion failed:")
    }

    /// A line of a runtime backtrace: "12  hubhost  0x00005641… <unavailable> + 1911397", or its heading.
    public static func isBacktrace(_ line: some StringProtocol) -> Bool {
        let trimmed = line.trimmingWhitespace()
        if trimmed == "Current stack trace:" || trimmed == "Stack dump:" { return true }
        let words = trimmed.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
        return words.count >= 3 && words[0].allSatisfy(\.isNumber) && words[2].hasPrefix("0x")
    }

    /// The last lines of `text` within `limit` bytes, backtrace lines left out, with the last fatal-error line
    /// first when it would have been cut.
    public static func tail(of text: String, limit: Int = 2000) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !isBacktrace($0) }
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

    /// The last fatal-error line among `lines`, when the runtime wrote one.
    public static func fatalError(in lines: [String]) -> String? {
        lines.last(where: { isFatalError($0) }).map { String($0.trimmingWhitespace().prefix(400)) }
    }
}
