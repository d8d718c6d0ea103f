/// What the event pipeline did, record by record: each event, every call into a component (when components are
/// wrapped by `TracingComponent`), selection states, actions with their outcomes, opened URIs, images.
public struct TraceRecord: CustomStringConvertible {
    public enum Kind: String, Sendable {
        case event, call, state, action, open, image, appear, disappear, note, error

        /// The name padded to 9 columns, made once (the trace writes one per line).
        public var padded: StaticString {
            switch self {
            case .event: return "event    "
            case .call: return "call     "
            case .state: return "state    "
            case .action: return "action   "
            case .open: return "open     "
            case .image: return "image    "
            case .appear: return "appear   "
            case .disappear: return "disappear"
            case .note: return "note     "
            case .error: return "error    "
            }
        }
    }
    public var kind: Kind
    /// The script line (or event number) the record belongs to; 0 before the first event.
    public var step: Int
    /// One human-readable line (without indentation).
    public var message: String
    /// The same facts as fields, for `--json`.
    public var fields: JSONObject

    public init(kind: Kind, step: Int, message: String, fields: JSONObject = JSONObject()) {
        self.kind = kind
        self.step = step
        self.message = message
        self.fields = fields
    }

    /// Events flush left, everything they cause indented under them.
    public var description: String {
        kind == .event ? "#\(step) \(message)" : "  \(kind.padded) \(message)"
    }

    /// One JSON object: {"step", "kind", "message", …fields}.
    public var jsonLine: String {
        var object = JSONObject()
        object["step"] = .number(Double(step))
        object["kind"] = .string(kind.rawValue)
        object["message"] = .string(message)
        for (key, value) in fields { object[key] = value }
        return JSONValue.object(object).jsonText
    }
}

/// Collects trace records and hands each to `sink` as it happens (so a crash-free partial replay still shows
/// what ran). Keeps them in `records` unless `keepRecords` is false.
public final class EventTrace {
    public private(set) var records: [TraceRecord] = []
    public var keepRecords = true
    public var sink: ((TraceRecord) -> Void)?
    /// The step new records get (the engine sets it per event).
    public var step = 0

    public init(sink: ((TraceRecord) -> Void)? = nil) { self.sink = sink }

    /// False when nobody reads the records' JSON fields (a text trace): they are then not built.
    public var buildsFields = true

    /// `fields` are only built when they are read (a JSON trace).
    public func add(
        _ kind: TraceRecord.Kind, _ message: String, _ fields: @autoclosure () -> [(String, JSONValue)] = []
    ) {
        let record = TraceRecord(
            kind: kind, step: step, message: message, fields: buildsFields ? JSONObject(fields()) : JSONObject())
        if keepRecords { records.append(record) }
        sink?(record)
    }

    /// Set by a text trace that keeps no records: component calls (most of a trace) reach it as their message's
    /// UTF-8 bytes with their step, valid during the call, and no record or String is made for them.
    public var callLineSink: ((_ step: Int, _ message: UnsafeBufferPointer<UInt8>) -> Void)?

    /// Whether a call's message may go to `callLineSink` as bytes.
    var takesCallBytes: Bool { callLineSink != nil && !keepRecords && !buildsFields }

    /// A component call as bytes (see `callLineSink`); call only when `takesCallBytes`.
    func addCall(bytes: UnsafeBufferPointer<UInt8>) { callLineSink?(step, bytes) }

    /// The messages of one kind, in order (handy in tests).
    public func messages(_ kind: TraceRecord.Kind) -> [String] { records.filter { $0.kind == kind }.map(\.message) }
    public func removeAll() { records.removeAll() }
}

extension JSONValue {
    static func int(_ value: Int) -> JSONValue { .number(Double(value)) }
    static func path(_ indexPath: [Int]) -> JSONValue { .array(indexPath.map { .number(Double($0)) }) }
    static func size(_ size: Size) -> JSONValue {
        .object(JSONObject([("width", .number(size.width)), ("height", .number(size.height))]))
    }
    static func point(_ point: Point) -> JSONValue {
        .object(JSONObject([("x", .number(point.x)), ("y", .number(point.y))]))
    }
    static func optional(_ string: String?) -> JSONValue { string.map { .string($0) } ?? .null }
}
