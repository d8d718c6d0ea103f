/// One problem found while decoding a view model: the file, the JSON path and what is wrong, e.g.
/// `home.json: $.body[3].component.id: expected a string, found 42`.
public struct DecodeIssue: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String?
    /// A JSON path such as `$.body[3].component.id`; empty for syntax errors (they carry line and column).
    public var path: String
    public var message: String

    public init(file: String?, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    public var description: String {
        var out = ""
        if let file { out += file + ": " }
        if !path.isEmpty { out += path + ": " }
        return out + message
    }
}

/// Decoding could not produce a view model at all (not JSON, or a root that is neither an object nor an array).
public struct DecodeFailure: Error, CustomStringConvertible {
    public var issue: DecodeIssue
    public var description: String { issue.description }
}

/// A decoded view model with every problem found (values of the wrong type are reported and left out, as Hub
/// leaves them out silently).
public struct DecodeResult {
    public var viewModel: ViewModel
    /// At most `ViewModelDecoder.maxIssues`, in document order.
    public var issues: [DecodeIssue]
    /// Problems beyond the bound, counted but not kept.
    public var suppressedIssueCount: Int
    public var totalIssueCount: Int { issues.count + suppressedIssueCount }
    /// Not problems: what Hub does silently that the author may not have meant (an id used twice merges the two
    /// entries). At most `ViewModelDecoder.maxIssues`.
    public var notes: [DecodeIssue] = []
    /// Notes past that limit, counted.
    public var suppressedNoteCount = 0
}

/// A JSON path being walked, formatted only when an issue is reported. A key step is the offset of the key in
/// the document, read again only then: keeping each key's string cost a seventh of decoding a view (a push and a
/// pop per key, with a retain and a release).
/// The steps live in memory the path owns, not an array: an array's uniqueness and capacity checks on each push
/// and pop cost as much as the steps.
final class JSONPath {
    enum Step {
        /// The key whose opening quote is at this byte offset of the document.
        case key(at: Int)
        case index(Int)
    }
    private var steps = UnsafeMutablePointer<Step>.allocate(capacity: 32)
    private var capacity = 32
    private var count = 0

    deinit { steps.deallocate() }

    @inline(__always)
    func push(_ step: Step) {
        if count == capacity { grow() }
        (steps + count).initialize(to: step)
        count += 1
    }

    @inline(__always)
    func pop() { count -= 1 }

    private func grow() {
        let larger = UnsafeMutablePointer<Step>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: steps, count: count)
        steps.deallocate()
        steps = larger
        capacity *= 2
    }

    /// `$.body[3].component.id`, with each key read from `document`.
    func text(in document: [UInt8]) -> String {
        var out = "$"
        for step in UnsafeBufferPointer(start: steps, count: count) {
            switch step {
            case .index(let i): out += "[\(i)]"
            case .key(let offset):
                var scanner = JSONScanner(document, position: offset)
                let k = (try? scanner.readString()) ?? "?"
                if let first = k.unicodeScalars.first, !("0"..."9").contains(first),
                    k.unicodeScalars.allSatisfy({
                        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    })
                {
                    out += "." + k
                } else {
                    var quoted = ""
                    JSONValue.writeEscaped(k, to: &quoted)
                    out += "[\(quoted)]"
                }
            }
        }
        return out
    }
}
