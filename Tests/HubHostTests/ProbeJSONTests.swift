import Foundation
import HubCore
import Testing

@testable import HubHost

/// The probe's hand-written JSON against the types' Codable form: each reads what the other writes, so caches
/// written by an older hubhost (with Foundation's encoder) still read, and nothing is lost on the way.
@Suite struct ProbeJSONTests {
    static func report(hostile: Bool) -> ProbeReport {
        var report = ProbeReport(
            file: hostile ? "/tmp/we\"ird\\path\n\u{1}é/libx.so" : "/plugins/libdemo.so", hash: hostile ? nil : "ab12")
        report.plugin = .init(
            id: "com.example.demo", name: hostile ? nil : "Demo \"quoted\"", version: "1.2.3", abi: "1.1",
            swift: hostile)
        report.namespaces = [
            .init(namespace: "demo", components: ["row", "card\u{7}", "ünï"]),
            .init(namespace: "empty", components: []),
        ]
        report.checks = [
            .init(name: "ELF image", component: nil, passed: true, fatal: true, message: nil),
            .init(name: "configure", component: "demo:row", passed: false, fatal: true, message: "line\nbreak\ttab"),
            .init(name: "unload", component: nil, passed: true, fatal: false, message: "unloaded 🎛"),
        ]
        return report
    }

    static func quarantine(model: String?) -> QuarantineRecord {
        QuarantineRecord(
            file: "/plugins/libcrash.so", size: 16_384, mtimeNanos: 1_795_558_576_766_529_559, hash: "ff3e",
            kind: .crash,
            phase: "configure", component: "crash:row", model: model, signal: "SIGSEGV", message: "",
            stderrTail: "Segmentation fault\n\u{1B}[31mred\u{1B}[0m",
            date: Date(timeIntervalSinceReferenceDate: 785_000_123.456))
    }

    static func reencoded<T: Encodable>(_ value: T) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try JSONSerialization.jsonObject(with: encoder.encode(value)) as! [String: Any]
    }

    /// Equal as JSON values.
    static func same(_ a: [String: Any], _ b: [String: Any]) -> Bool {
        NSDictionary(dictionary: a).isEqual(to: b)
    }

    static func parsed(_ bytes: [UInt8]) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    }

    @Test(arguments: [false, true])
    func aReportReadsBackAndMatchesItsCodableForm(hostile: Bool) throws {
        let report = Self.report(hostile: hostile)
        let written = ProbeJSON.bytes { report.writeJSON(to: &$0) }
        // Same JSON value as Foundation's encoder gives.
        #expect(try Self.same(Self.parsed(written), Self.reencoded(report)))
        // Ours reads ours, and Foundation reads ours.
        let back = try #require(ProbeJSON.decode(written) { try ProbeReport(json: &$0) })
        let foundation = try JSONDecoder().decode(ProbeReport.self, from: Data(written))
        for other in [back, foundation] {
            #expect(try Self.same(Self.reencoded(other), Self.reencoded(report)))
        }
        // Ours reads Foundation's.
        let fromFoundation = try #require(
            ProbeJSON.decode([UInt8](JSONEncoder().encode(report))) { try ProbeReport(json: &$0) })
        #expect(try Self.same(Self.reencoded(fromFoundation), Self.reencoded(report)))
    }

    @Test(arguments: [nil, "body[2] (id \"c\")"])
    func aQuarantineRecordReadsBackExactly(model: String?) throws {
        let record = Self.quarantine(model: model)
        let written = ProbeJSON.bytes { record.writeJSON(to: &$0) }
        #expect(try Self.same(Self.parsed(written), Self.reencoded(record)))
        for decoded in [
            try #require(ProbeJSON.decode(written) { try QuarantineRecord(json: &$0) }),
            try #require(ProbeJSON.decode([UInt8](JSONEncoder().encode(record))) { try QuarantineRecord(json: &$0) }),
            try JSONDecoder().decode(QuarantineRecord.self, from: Data(written)),
        ] {
            // Nanoseconds past 2^53 survive (a Double would round them).
            #expect(decoded.mtimeNanos == record.mtimeNanos)
            #expect(decoded.date == record.date)
            #expect(decoded.model == record.model)
            #expect(decoded.stderrTail == record.stderrTail)
            #expect(decoded.reason == record.reason)
        }
    }

    @Test func theChildsLinesAreRecognisedAndNothingElseIs() throws {
        let report = Self.report(hostile: true)
        let line = String(decoding: ProbeJSON.bytes { ProbeJSON.writeReportLine(report, to: &$0) }, as: UTF8.self)
        #expect(line.hasSuffix("}\n"))
        #expect(ProbeJSON.reportLine(line.dropLast())?.file == report.file)
        #expect(ProbeJSON.phaseLine("{\"component\":\"demo:row\",\"phase\":\"configure\"}")?.component == "demo:row")
        #expect(ProbeJSON.phaseLine("{\"phase\":\"init\"}")?.phase == "init")
        // A plugin's own output on stdout, or a torn line, is no report or phase.
        for junk in [
            "{\"report\":{\"file\":1}}", "{\"report\":{\"checks\":[]}}", "{\"report\":{\"file\":\"x\"}} trailing",
            "{\"phase\":", "hello from a plugin", "{\"phase\":\"init\"",
            "{\"report\":{\"file\":\"x\",\"checks\":[{}]}}",
        ] {
            #expect(ProbeJSON.reportLine(junk[...]) == nil, "\(junk)")
            #expect(ProbeJSON.phaseLine(junk[...]) == nil, "\(junk)")
        }
        #expect(ProbeScanner.begin("{\"scan\":12}").map { [$0.index, $0.stderrOffset ?? -1] } == [12, -1])
        #expect(ProbeScanner.begin("{\"scan\":3,\"stderr\":40}").map { [$0.index, $0.stderrOffset ?? -1] } == [3, 40])
        for junk in ["{\"scan\":x}", "{\"scan\":3,\"stderr\":}", "{\"scan\":3,\"other\":4}", "{\"scan\":3,}"] {
            #expect(ProbeScanner.begin(junk[...]) == nil, "\(junk)")
        }
        #expect(String(decoding: ProbeScanner.beginLine(7, stderrOffset: nil), as: UTF8.self) == "{\"scan\":7}\n")
        #expect(
            String(decoding: ProbeScanner.beginLine(7, stderrOffset: 120), as: UTF8.self)
                == "{\"scan\":7,\"stderr\":120}\n")
    }

    @Test func integersAreReadExactlyAndFractionsAreRefused() throws {
        for (text, value) in [
            ("0", Int64(0)), ("-12", -12), ("9223372036854775807", .max), ("-9223372036854775808", .min),
            ("1795558576766529559", 1_795_558_576_766_529_559),
        ] {
            #expect(ProbeJSON.decode(Array(text.utf8)) { try $0.readInteger() } == value)
        }
        for text in ["9223372036854775808", "1.5", "1e3", "-", "x", "\"1\""] {
            #expect(ProbeJSON.decode(Array(text.utf8)) { try $0.readInteger() } == nil, "\(text)")
        }
    }

    @Test func theCacheFileReadsBackAndSurvivesDamage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("probe-cache.json")
        let cache = ProbeCache(file: file, hostIdentity: "host#1")
        var passed = ProbeCache.Entry(size: 10, mtimeNanos: 1_795_558_576_766_529_559, inode: 42, hash: "aa")
        passed.report = Self.report(hostile: true)
        var quarantined = ProbeCache.Entry(size: 11, mtimeNanos: 5, inode: .max, hash: "bb")
        quarantined.quarantine = Self.quarantine(model: "body[0]")
        cache.store(URL(fileURLWithPath: "/p/liba.so"), passed)
        cache.store(URL(fileURLWithPath: "/p/we\"ird.so"), quarantined)
        cache.save()

        let reread = ProbeCache(file: file, hostIdentity: "host#1")
        let stamp = FileStamp(size: 11, mtimeNanos: 5, inode: .max)
        let entry = try #require(reread.lookup(URL(fileURLWithPath: "/p/we\"ird.so"), stamp: stamp, hash: { nil }))
        #expect(entry.quarantine?.reason == quarantined.quarantine?.reason)
        #expect(entry.inode == .max)
        let report = reread.lookup(
            URL(fileURLWithPath: "/p/liba.so"),
            stamp: FileStamp(size: 10, mtimeNanos: 1_795_558_576_766_529_559, inode: 42),
            hash: { nil })?.report
        #expect(report?.checks.count == 3)
        #expect(report?.plugin?.swift == true)
        #expect(reread.quarantined.map(\.file) == ["/plugins/libcrash.so"])
        // Another build keeps the quarantines (a plugin that crashed under one build stays out under the other)
        // but not the passes, which it probes again; a damaged file is empty rather than an error.
        let other = ProbeCache(file: file, hostIdentity: "host#2")
        #expect(other.quarantined.map(\.file) == ["/plugins/libcrash.so"])
        #expect(
            other.lookup(
                URL(fileURLWithPath: "/p/liba.so"),
                stamp: FileStamp(size: 10, mtimeNanos: 1_795_558_576_766_529_559, inode: 42),
                hash: { nil }) == nil)
        let bytes = try Data(contentsOf: file)
        try bytes.prefix(bytes.count / 2).write(to: file)
        #expect(ProbeCache(file: file, hostIdentity: "host#1").quarantined.isEmpty)
    }

    /// Runs sharing a cache keep each other's verdicts: each writes its own over the file as it is then (the last
    /// writer's whole file used to win, and a quarantine one of several concurrent runs wrote was lost).
    @Test func runsSharingTheCacheKeepEachOthersVerdicts() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-merge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("probe-cache.json")
        let first = ProbeCache(file: file, hostIdentity: "host#1")
        let second = ProbeCache(file: file, hostIdentity: "host#1")
        var quarantined = ProbeCache.Entry(size: 11, mtimeNanos: 5, inode: 7, hash: "bb")
        quarantined.quarantine = Self.quarantine(model: "body[0]")
        var passed = ProbeCache.Entry(size: 10, mtimeNanos: 6, inode: 8, hash: "aa")
        passed.report = Self.report(hostile: false)
        first.store(URL(fileURLWithPath: "/p/libcrash.so"), quarantined)
        second.store(URL(fileURLWithPath: "/p/libgood.so"), passed)
        first.save()
        second.save()
        let reread = ProbeCache(file: file, hostIdentity: "host#1")
        #expect(reread.quarantined.count == 1)
        #expect(
            reread.lookup(
                URL(fileURLWithPath: "/p/libgood.so"), stamp: FileStamp(size: 10, mtimeNanos: 6, inode: 8),
                hash: { nil }
            )?.report != nil)
        // A removal is this run's edit too.
        second.remove(URL(fileURLWithPath: "/p/libcrash.so"))
        second.save()
        #expect(ProbeCache(file: file, hostIdentity: "host#1").quarantined.isEmpty)
    }
}
