import FoundationEssentials
import HubCore

/// The probe's JSON, written and read by hand. A cold scan of hundreds of plugins writes a report per plugin in
/// the scanner child, reads it back in the parent and keeps them all in `probe-cache.json`; Foundation's coders
/// took more time over that than the probes themselves (issue 14). The shapes are the ones the types' Codable
/// conformances give (keys sorted, absent optionals left out, dates as seconds since 2001), so either side reads
/// what the other wrote: a cache written by an older hubhost still reads.
enum ProbeJSON {
    /// A required key missing from an object.
    struct MissingKey: Error, CustomStringConvertible {
        let key: String
        let object: String
        var description: String { "\(object) has no \"\(key)\"" }
    }

    /// The value `read` takes from the whole of `bytes`, or nil when they are not exactly one such value.
    static func decode<T>(_ bytes: [UInt8], _ read: (inout JSONScanner) throws -> T) -> T? {
        var scanner = JSONScanner(bytes)
        guard let value = try? read(&scanner), scanner.isAtEnd else { return nil }
        return value
    }

    /// What `write` writes, as bytes.
    static func bytes(_ write: (inout ByteWriter) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        ByteWriter.stream(capacity: 16 << 10, to: { bytes.append(contentsOf: $0) }, write)
        return bytes
    }

    // MARK: Lines of the probe child

    /// `{"report":{…}}`, the last line a probe child prints.
    static func writeReportLine(_ report: ProbeReport, to out: inout ByteWriter) {
        out.write("{\"report\":")
        report.writeJSON(to: &out)
        out.write("}\n")
    }

    /// The report of a `{"report":{…}}` line.
    static func reportLine(_ line: Substring) -> ProbeReport? {
        guard line.hasPrefix("{\"report\":") else { return nil }
        return decode(Array(line.utf8)) { scanner in
            var report: ProbeReport?
            try scanner.readObject { scanner, key in
                if key == "report" { report = try ProbeReport(json: &scanner) } else { _ = try scanner.readValue() }
            }
            guard let report else { throw MissingKey(key: "report", object: "report line") }
            return report
        }
    }

    /// The phase of a `{"phase":…}` progress line.
    /// `{"faultOffset":N}`: where in the plugin's image a probe child faulted (`csystem_report_faults`).
    static func faultOffsetLine(_ line: Substring) -> UInt64? {
        guard line.hasPrefix("{\"faultOffset\":"), line.hasSuffix("}") else { return nil }
        return UInt64(line.dropFirst(15).dropLast())
    }

    static func phaseLine(_ line: Substring) -> ProbePhase? {
        guard line.hasPrefix("{\"phase\":") || line.hasPrefix("{\"component\":") || line.hasPrefix("{\"model\":")
        else { return nil }
        return decode(Array(line.utf8)) { try ProbePhase(json: &$0) }
    }
}

extension JSONScanner {
    /// A string, or nil for `null`.
    mutating func readOptionalString() throws -> String? { try readNull() ? nil : try readString() }

    /// The elements of an array, each read by `element`.
    mutating func readArray<T>(of element: (inout JSONScanner) throws -> T) throws -> [T] {
        var elements: [T] = []
        try readArray { scanner, _ in elements.append(try element(&scanner)) }
        return elements
    }
}

extension ByteWriter {
    /// `,"key":`, or `{"key":` when it opens its object.
    mutating func key(_ key: StaticString, opening: Bool = false) {
        byte(opening ? UInt8(ascii: "{") : UInt8(ascii: ","))
        byte(UInt8(ascii: "\""))
        write(key)
        write("\":")
    }

    mutating func writeJSON(_ value: Bool) { write(value ? "true" : "false") }

    /// `[…]`, each element written by `element`.
    mutating func writeJSONArray<C: Collection>(_ elements: C, _ element: (inout ByteWriter, C.Element) -> Void) {
        byte(UInt8(ascii: "["))
        for (i, value) in elements.enumerated() {
            if i > 0 { byte(UInt8(ascii: ",")) }
            element(&self, value)
        }
        byte(UInt8(ascii: "]"))
    }
}

// MARK: - Reports

extension ProbeReport {
    func writeJSON(to out: inout ByteWriter) {
        out.key("checks", opening: true)
        out.writeJSONArray(checks) { out, check in check.writeJSON(to: &out) }
        out.key("file")
        out.writeJSONString(file)
        if let hash {
            out.key("hash")
            out.writeJSONString(hash)
        }
        out.key("namespaces")
        out.writeJSONArray(namespaces) { out, namespace in
            out.key("components", opening: true)
            out.writeJSONArray(namespace.components) { out, name in out.writeJSONString(name) }
            out.key("namespace")
            out.writeJSONString(namespace.namespace)
            out.byte(UInt8(ascii: "}"))
        }
        if let plugin {
            out.key("plugin")
            out.key("abi", opening: true)
            out.writeJSONString(plugin.abi)
            out.key("id")
            out.writeJSONString(plugin.id)
            if let name = plugin.name {
                out.key("name")
                out.writeJSONString(name)
            }
            out.key("swift")
            out.writeJSON(plugin.swift)
            out.key("version")
            out.writeJSONString(plugin.version)
            out.byte(UInt8(ascii: "}"))
        }
        out.byte(UInt8(ascii: "}"))
    }

    init(json scanner: inout JSONScanner) throws {
        var file: String?
        var hash: String?
        var plugin: Plugin?
        var namespaces: [Namespace] = []
        var checks: [Check] = []
        try scanner.readObject { scanner, key in
            switch key {
            case "file": file = try scanner.readString()
            case "hash": hash = try scanner.readOptionalString()
            case "plugin": plugin = try scanner.readNull() ? nil : try Plugin(json: &scanner)
            case "namespaces": namespaces = try scanner.readArray { try Namespace(json: &$0) }
            case "checks": checks = try scanner.readArray { try Check(json: &$0) }
            default: _ = try scanner.readValue()
            }
        }
        guard let file else { throw ProbeJSON.MissingKey(key: "file", object: "report") }
        self.init(file: file, hash: hash)
        self.plugin = plugin
        self.namespaces = namespaces
        self.checks = checks
    }
}

extension ProbeReport.Plugin {
    init(json scanner: inout JSONScanner) throws {
        var id: String?
        var name: String?
        var version: String?
        var abi: String?
        var swift: Bool?
        try scanner.readObject { scanner, key in
            switch key {
            case "id": id = try scanner.readString()
            case "name": name = try scanner.readOptionalString()
            case "version": version = try scanner.readString()
            case "abi": abi = try scanner.readString()
            case "swift": swift = try scanner.readBool()
            default: _ = try scanner.readValue()
            }
        }
        guard let id, let version, let abi, let swift else {
            throw ProbeJSON.MissingKey(key: "id, version, abi or swift", object: "plugin")
        }
        self.init(id: id, name: name, version: version, abi: abi, swift: swift)
    }
}

extension ProbeReport.Namespace {
    init(json scanner: inout JSONScanner) throws {
        var namespace: String?
        var components: [String] = []
        try scanner.readObject { scanner, key in
            switch key {
            case "namespace": namespace = try scanner.readString()
            case "components": components = try scanner.readArray { try $0.readString() }
            default: _ = try scanner.readValue()
            }
        }
        guard let namespace else { throw ProbeJSON.MissingKey(key: "namespace", object: "namespace") }
        self.init(namespace: namespace, components: components)
    }
}

extension ProbeReport.Check {
    func writeJSON(to out: inout ByteWriter) {
        if let component {
            out.key("component", opening: true)
            out.writeJSONString(component)
            out.key("fatal")
        } else {
            out.key("fatal", opening: true)
        }
        out.writeJSON(fatal)
        if let message {
            out.key("message")
            out.writeJSONString(message)
        }
        out.key("name")
        out.writeJSONString(name)
        out.key("passed")
        out.writeJSON(passed)
        out.byte(UInt8(ascii: "}"))
    }

    init(json scanner: inout JSONScanner) throws {
        var name: String?
        var component: String?
        var passed: Bool?
        var fatal: Bool?
        var message: String?
        try scanner.readObject { scanner, key in
            switch key {
            case "name": name = try scanner.readString()
            case "component": component = try scanner.readOptionalString()
            case "passed": passed = try scanner.readBool()
            case "fatal": fatal = try scanner.readBool()
            case "message": message = try scanner.readOptionalString()
            default: _ = try scanner.readValue()
            }
        }
        guard let name, let passed, let fatal else {
            throw ProbeJSON.MissingKey(key: "name, passed or fatal", object: "check")
        }
        self.init(name: name, component: component, passed: passed, fatal: fatal, message: message)
    }
}

extension ProbePhase {
    init(json scanner: inout JSONScanner) throws {
        var phase: String?
        var component: String?
        var model: String?
        try scanner.readObject { scanner, key in
            switch key {
            case "phase": phase = try scanner.readString()
            case "component": component = try scanner.readOptionalString()
            case "model": model = try scanner.readOptionalString()
            default: _ = try scanner.readValue()
            }
        }
        guard let phase else { throw ProbeJSON.MissingKey(key: "phase", object: "progress line") }
        self.init(phase: phase, component: component, model: model)
    }
}

// MARK: - Quarantine records

extension QuarantineRecord {
    func writeJSON(to out: inout ByteWriter) {
        if let component {
            out.key("component", opening: true)
            out.writeJSONString(component)
            out.key("date")
        } else {
            out.key("date", opening: true)
        }
        out.write(number: date.timeIntervalSinceReferenceDate)
        out.key("file")
        out.writeJSONString(file)
        out.key("hash")
        out.writeJSONString(hash)
        out.key("kind")
        out.writeJSONString(kind.rawValue)
        out.key("message")
        out.writeJSONString(message)
        if let codeOffset {
            out.key("codeOffset")
            out.write(Int(clamping: codeOffset))
        }
        if let model {
            out.key("model")
            out.writeJSONString(model)
        }
        if let moduleFilesDigest {
            out.key("moduleFilesDigest")
            out.writeJSONString(moduleFilesDigest)
        }
        out.key("mtimeNanos")
        out.write(Int(mtimeNanos))
        out.key("phase")
        out.writeJSONString(phase)
        if let sentByPlugin {
            out.key("sentByPlugin")
            out.write(sentByPlugin ? "true" : "false")
        }
        if let signal {
            out.key("signal")
            out.writeJSONString(signal)
        }
        out.key("size")
        out.write(Int(size))
        out.key("stderrTail")
        out.writeJSONString(stderrTail)
        out.byte(UInt8(ascii: "}"))
    }

    init(json scanner: inout JSONScanner) throws {
        var file: String?
        var size: Int64?
        var mtimeNanos: Int64?
        var hash: String?
        var kind: Kind?
        var phase: String?
        var component: String?
        var model: String?
        var signal: String?
        var message: String?
        var stderrTail: String?
        var date: Date?
        var moduleFilesDigest: String?
        var sentByPlugin: Bool?
        var codeOffset: UInt64?
        try scanner.readObject { scanner, key in
            switch key {
            case "file": file = try scanner.readString()
            case "size": size = try scanner.readInteger()
            case "mtimeNanos": mtimeNanos = try scanner.readInteger()
            case "hash": hash = try scanner.readString()
            case "kind": kind = Kind(rawValue: try scanner.readString())
            case "phase": phase = try scanner.readString()
            case "component": component = try scanner.readOptionalString()
            case "model": model = try scanner.readOptionalString()
            case "signal": signal = try scanner.readOptionalString()
            case "message": message = try scanner.readString()
            case "stderrTail": stderrTail = try scanner.readString()
            case "date": date = Date(timeIntervalSinceReferenceDate: try scanner.readNumber())
            case "moduleFilesDigest": moduleFilesDigest = try scanner.readOptionalString()
            case "sentByPlugin": sentByPlugin = try scanner.readValue().boolValue
            case "codeOffset": codeOffset = UInt64(exactly: try scanner.readNumber())
            default: _ = try scanner.readValue()
            }
        }
        guard let file, let size, let mtimeNanos, let hash, let kind, let phase, let message, let stderrTail,
            let date
        else { throw ProbeJSON.MissingKey(key: "a field", object: "quarantine record") }
        self.init(
            file: file, size: size, mtimeNanos: mtimeNanos, hash: hash, kind: kind, phase: phase,
            component: component, model: model, signal: signal, message: message, stderrTail: stderrTail, date: date)
        self.moduleFilesDigest = moduleFilesDigest
        self.sentByPlugin = sentByPlugin
        self.codeOffset = codeOffset
    }
}
