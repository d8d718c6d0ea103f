import FoundationEssentials

/// Which component an event is aimed at.
public enum EventTarget: Equatable, CustomStringConvertible {
    /// A point in the viewport (hit-tested: overlays above the header above the body, children inside parents).
    case point(Point)
    /// A component by index path: `[body index, child index, …]`; `section` picks the header or an overlay
    /// (`[overlay index, child…]`, or `[child…]` under the header).
    case indexPath([Int], section: ComponentType = .body)

    public var description: String {
        switch self {
        case .point(let p): return "point \(p)"
        case .indexPath(let path, let section):
            return (section == .body ? "" : "\(section) ")
                + "indexPath [\(path.map(String.init).joined(separator: ", "))]"
        }
    }
}

/// One event of a replay (one line of an event script).
public enum ViewEvent: Equatable {
    case highlight(EventTarget)
    case unhighlight(EventTarget)
    case tap(EventTarget)
    /// Scroll the body so that content y `y` is at the top of the viewport.
    case scroll(y: Double)
    case resize(Size)
    case advance(seconds: Double)
    /// The component at the target performs an action (its action performer), trigger `component`.
    case action(EventTarget, identifier: ComponentIdentifier, custom: JSONObject?)
    /// The pending load of `uri` finishes: with the image from its source (`ok`), or failed.
    case image(uri: String, ok: Bool)
    /// A named picture of the view as it is now (`hubhost snapshot`; `events` notes it and draws nothing).
    case snapshot(name: String)
}

/// A script line that cannot be replayed.
public struct EventScriptError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var reason: String
    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }
    public var description: String { "\(file):\(line): \(TerminalText.line(reason))" }
}

/// Reads event scripts: one JSON object a line; blank lines and lines starting with `//` or `#` are skipped.
///
///     {"event": "tap"|"highlight"|"unhighlight", "indexPath": [i, child…]}   or  "point": {"x", "y"}
///     {"event": "scroll", "y": offset}
///     {"event": "resize", "width": w, "height": h}
///     {"event": "advance", "seconds": s}
///     {"event": "action", "indexPath": [i…], "action": "namespace:name", "custom": {…}}
///     {"event": "image", "uri": "…", "ok": true|false}
///     {"event": "snapshot", "name": "after-tap"}
///
/// An optional `"section": "header"|"overlays"` aims an index path at the header or an overlay.
public enum EventScript {
    /// The largest script read: a replay of thousands of steps is kilobytes, and reading one takes about five times
    /// its size in memory (a 5 GB script ended a run under an 8 GB limit with a trap).
    public static let maxBytes = 64 << 20

    /// The lines of a script file with their 1-based numbers, comments and blank lines left out.
    public static func lines(of text: String) -> [(number: Int, text: String)] {
        var result: [(Int, String)] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("//") || line.hasPrefix("#") { continue }
            result.append((offset + 1, line))
        }
        return result
    }

    /// The lines of a script file's bytes with their 1-based numbers, comments and blank lines left out. A line
    /// that is not valid UTF-8 comes with the offset of its first bad byte instead of text.
    public static func lines(of bytes: [UInt8]) -> [(number: Int, text: String, invalidUTF8At: Int?)] {
        var result: [(Int, String, Int?)] = []
        for (offset, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        {
            // A byte order mark (some editors write one) is not part of the first line.
            let raw = offset == 0 && line.starts(with: [0xEF, 0xBB, 0xBF]) ? line.dropFirst(3) : line
            guard let text = String(validating: raw, as: UTF8.self) else {
                result.append((offset + 1, "", (UTF8Check.firstInvalidByte(raw) ?? 0) + 1))
                continue
            }
            let line = text.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("//") || line.hasPrefix("#") { continue }
            result.append((offset + 1, line, nil))
        }
        return result
    }

    /// The keys each event takes.
    static let allowedKeys: [String: [String]] = {
        let target = ["event", "section", "indexPath", "point"]
        return [
            "tap": target, "highlight": target, "unhighlight": target, "action": target + ["action", "custom"],
            "scroll": ["event", "y"], "resize": ["event", "width", "height"], "advance": ["event", "seconds"],
            "image": ["event", "uri", "ok"], "snapshot": ["event", "name"],
        ]
    }()

    /// The first key the line's object gives twice (its top level only), if any.
    static func duplicateKey(in line: String) -> String? {
        var scanner = JSONScanner(Array(line.utf8))
        var seen = Set<String>()
        var twice: String?
        try? scanner.readObject { scanner, key in
            if twice == nil && !seen.insert(key).inserted { twice = key }
            _ = try scanner.readValue()
        }
        return twice
    }

    /// Parses one line. The error names the file, the line and what is wrong.
    public static func parse(_ line: String, file: String, number lineNumber: Int) throws -> ViewEvent {
        func fail(_ reason: String) -> EventScriptError {
            EventScriptError(file: file, line: lineNumber, reason: reason)
        }
        let value: JSONValue
        do { value = try JSONValue.parse(line) } catch {
            throw fail("not JSON: \(TerminalText.escaped(line, limit: 60))")
        }
        guard let object = value.objectValue else {
            throw fail("expected a JSON object, found \(value.typeDescription)")
        }
        // A key given twice would silently mean its last value ("indexPath" [0] then [1] taps [1]).
        if let twice = duplicateKey(in: line) {
            throw fail("\(TerminalText.quoted(twice, limit: 40)) is given twice")
        }
        guard let kind = object["event"] else { throw fail("missing \"event\"") }
        guard let name = kind.stringValue else {
            throw fail("\"event\": expected a string, found \(kind.typeDescription)")
        }
        // A misspelt key must not change what the line does ("sectoin" would tap the body): unknown keys are errors.
        if let allowed = allowedKeys[name] {
            for key in object.keys where !allowed.contains(key) {
                let hint = Spelling.nearest(key, in: allowed).map { "; did you mean \"\($0)\"?" } ?? ""
                throw fail(
                    "\(name): unknown key \(TerminalText.quoted(key, limit: 40))\(hint) (\(name) takes "
                        + allowed.sorted().joined(separator: ", ") + ")")
            }
        }

        func number(_ key: String, in range: ClosedRange<Double>, excludingLowerBound: Bool = false) throws -> Double {
            guard let v = object[key] else { throw fail("\(name): missing \"\(key)\"") }
            guard case .number(let n) = v else {
                throw fail("\(name): \"\(key)\": expected a number, found \(v.typeDescription)")
            }
            if let problem = InputLimits.problem(n, in: range, excludingLowerBound: excludingLowerBound) {
                throw fail("\(name): \"\(key)\": \(problem)")
            }
            return n
        }
        let coordinates = -InputLimits.coordinate...InputLimits.coordinate
        func target() throws -> EventTarget {
            var section = ComponentType.body
            if let s = object["section"] {
                switch s.stringValue {
                case "body": section = .body
                case "header": section = .header
                case "overlays", "overlay": section = .overlay
                default:
                    throw fail(
                        "\(name): \"section\": expected \"body\", \"header\" or \"overlays\", found \(s.typeDescription)"
                    )
                }
            }
            // Both would leave one of them unused, whichever the reader meant.
            if object["indexPath"] != nil && object["point"] != nil {
                throw fail("\(name): give \"indexPath\" or \"point\", not both")
            }
            if let path = object["indexPath"] {
                guard let items = path.arrayValue else {
                    throw fail("\(name): \"indexPath\": expected an array of indexes, found \(path.typeDescription)")
                }
                guard items.count <= InputLimits.indexPathDepth else {
                    throw fail("\(name): \"indexPath\": \(items.count) levels, more than \(InputLimits.indexPathDepth)")
                }
                var indexes: [Int] = []
                for (i, item) in items.enumerated() {
                    guard case .number(let n) = item, n >= 0, n == n.rounded(), n < Double(InputLimits.index) else {
                        throw fail(
                            "\(name): \"indexPath\"[\(i)]: expected a non-negative integer, found \(item.typeDescription)"
                        )
                    }
                    indexes.append(Int(n))
                }
                if indexes.isEmpty && section != .header { throw fail("\(name): \"indexPath\" is empty") }
                return .indexPath(indexes, section: section)
            }
            if let point = object["point"] {
                guard let p = point.objectValue else {
                    throw fail("\(name): \"point\": expected {\"x\", \"y\"}, found \(point.typeDescription)")
                }
                guard case .number(let x)? = p["x"], case .number(let y)? = p["y"] else {
                    throw fail("\(name): \"point\": expected numbers \"x\" and \"y\"")
                }
                for (key, value) in [("x", x), ("y", y)] {
                    if let problem = InputLimits.problem(value, in: coordinates) {
                        throw fail("\(name): \"point\".\(key): \(problem)")
                    }
                }
                return .point(Point(x: x, y: y))
            }
            if section == .header { return .indexPath([], section: .header) }
            throw fail("\(name): needs \"indexPath\" or \"point\"")
        }

        switch name {
        case "tap": return .tap(try target())
        case "highlight": return .highlight(try target())
        case "unhighlight": return .unhighlight(try target())
        case "scroll":
            return .scroll(y: try number("y", in: coordinates))
        case "resize":
            let sides = 0...InputLimits.viewportSide
            let w = try number("width", in: sides, excludingLowerBound: true)
            let h = try number("height", in: sides, excludingLowerBound: true)
            return .resize(Size(width: w, height: h))
        case "advance":
            return .advance(seconds: try number("seconds", in: 0...InputLimits.seconds))
        case "action":
            let t = try target()
            guard let a = object["action"] else { throw fail("action: missing \"action\"") }
            guard let text = a.stringValue else {
                throw fail("action: \"action\": expected \"namespace:name\", found \(a.typeDescription)")
            }
            guard let id = ComponentIdentifier(strict: text), !id.namespace.isEmpty, !id.name.isEmpty else {
                throw fail(
                    "action: \"action\": expected \"namespace:name\", found \(TerminalText.quoted(text, limit: 60))")
            }
            var custom: JSONObject?
            if let c = object["custom"] {
                guard let o = c.objectValue else {
                    throw fail("action: \"custom\": expected an object, found \(c.typeDescription)")
                }
                custom = o
            }
            return .action(t, identifier: id, custom: custom)
        case "image":
            guard let u = object["uri"] else { throw fail("image: missing \"uri\"") }
            guard let uri = u.stringValue, !uri.isEmpty else {
                throw fail("image: \"uri\": expected a string, found \(u.typeDescription)")
            }
            var ok = true
            if let o = object["ok"] {
                guard let b = o.boolValue else {
                    throw fail("image: \"ok\": expected true or false, found \(o.typeDescription)")
                }
                ok = b
            }
            return .image(uri: uri, ok: ok)
        case "snapshot":
            guard let n = object["name"] else { throw fail("snapshot: missing \"name\"") }
            guard let snapshotName = n.stringValue, !snapshotName.isEmpty, snapshotName.count <= 80 else {
                throw fail("snapshot: \"name\": expected a string of 1 to 80 characters, found \(n.typeDescription)")
            }
            return .snapshot(name: snapshotName)
        default:
            let names = [
                "tap", "highlight", "unhighlight", "scroll", "resize", "advance", "action", "image", "snapshot",
            ]
            let hint = Spelling.nearest(name.lowercased(), in: names).map { "did you mean \"\($0)\"? " } ?? ""
            throw fail(
                "unknown event \(TerminalText.quoted(name, limit: 60)) (\(hint)expected tap, highlight, unhighlight, scroll, resize, advance, action, image or snapshot)"
            )
        }
    }
}
