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
}

/// A JSON path being walked, formatted only when an issue is reported.
struct JSONPath {
    enum Step {
        case key(String)
        case index(Int)
    }
    private(set) var steps: [Step] = []

    mutating func push(_ step: Step) { steps.append(step) }
    mutating func pop() { steps.removeLast() }

    var text: String {
        var out = "$"
        for step in steps {
            switch step {
            case .index(let i): out += "[\(i)]"
            case .key(let k):
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
