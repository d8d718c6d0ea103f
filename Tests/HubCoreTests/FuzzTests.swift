import Foundation
import HubCore
import Testing

/// Views and event scripts are untrusted data: thousands of mutated copies of the examples go through the real
/// decoder, layout, image policy, script parser and event engine in process. Nothing may trap, and every error
/// must say where it is (a JSON path or a line). Seeded, so a failure is reproducible; a crasher found here
/// becomes a fixture in `FuzzRegressionTests`.
@Suite struct FuzzTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples")

    static func seeds(_ pathExtension: String, in folder: URL) throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix("." + pathExtension) && $0 != "large.json" }.sorted()
        return try names.map { Array(try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    @Test("10,000 mutated views: no trap, every problem has a JSON path or a line")
    func mutatedViews() throws {
        let seeds = try Self.seeds("json", in: Self.examples)
        try #require(seeds.count >= 5)
        var random = SplitMix(seed: 0x5EED_0001)
        var decodedCount = 0
        var refusedCount = 0
        for round in 0..<10_000 {
            let input = Mutator.mutate(seeds[round % seeds.count], rounds: 1 + round % 2, random: &random)
            switch FuzzHarness.view(input) {
            case .decoded: decodedCount += 1
            case .refused: refusedCount += 1
            case .unlocated(let message):
                Issue.record("round \(round): an error without a location: \(message)")
                return
            }
        }
        // Both paths were exercised, not only the refusal.
        #expect(decodedCount > 1_000 && refusedCount > 1_000, "decoded \(decodedCount), refused \(refusedCount)")
    }

    @Test("10,000 mutated event scripts: no trap, every error names its line")
    func mutatedScripts() throws {
        let seeds = try Self.seeds("jsonl", in: Self.examples.appendingPathComponent("events"))
        try #require(!seeds.isEmpty)
        let view = try ViewModelDecoder().decode(contentsOf: Self.examples.appendingPathComponent("home.json"))
        var random = SplitMix(seed: 0x5EED_0002)
        var applied = 0
        var refused = 0
        var harness = FuzzHarness.ScriptRunner(viewModel: view.viewModel)
        for round in 0..<10_000 {
            if round % 200 == 0 { harness = FuzzHarness.ScriptRunner(viewModel: view.viewModel) }
            let input = Mutator.mutateLines(seeds[round % seeds.count], random: &random)
            let outcome = harness.run(input, file: "fuzz.jsonl")
            applied += outcome.applied
            refused += outcome.refused
            if let unlocated = outcome.unlocated {
                Issue.record("round \(round): an error without its line: \(unlocated)")
                return
            }
        }
        #expect(applied > 10_000 && refused > 1_000, "applied \(applied), refused \(refused)")
    }
}

/// What the fuzz tests run one input through.
enum FuzzHarness {
    enum ViewOutcome: Equatable {
        case decoded, refused
        case unlocated(String)
    }

    static func view(_ bytes: [UInt8], file: String = "fuzz.json") -> ViewOutcome {
        let decoded: DecodeResult
        do {
            decoded = try ViewModelDecoder(file: file, maxIssues: 20).decode(bytes: bytes)
        } catch let failure as DecodeFailure {
            let text = failure.description
            let located = text.hasPrefix(file + ": ") && (text.contains("line ") || failure.issue.path.hasPrefix("$"))
            return located ? .refused : .unlocated(text)
        } catch {
            return .unlocated("\(error)")
        }
        for issue in decoded.issues where !issue.path.hasPrefix("$") { return .unlocated(issue.description) }
        let access = ImageAccess(viewFile: URL(fileURLWithPath: "/nonexistent/\(file)"))
        for issue in access.problems(in: decoded.viewModel, file: file) where !issue.path.hasPrefix("$") {
            return .unlocated(issue.description)
        }
        let pipeline = RenderPipeline(registry: ComponentRegistry(fallbackHandler: DefaultFallbackHandler()))
        let tree = pipeline.render(decoded.viewModel, viewport: Size(width: 320, height: 480))
        _ = TextRenderLite.lines(tree)
        pipeline.tearDown()
        return .decoded
    }

    /// Applies every line of a script to one engine (state carries over between scripts, as a long session's).
    struct ScriptRunner {
        let engine: EventEngine

        init(viewModel: ViewModel) {
            let pipeline = RenderPipeline(registry: ComponentRegistry(fallbackHandler: DefaultFallbackHandler()))
            engine = EventEngine(
                pipeline: pipeline, viewModel: viewModel, viewport: Size(width: 375, height: 667),
                clock: ManualClock(), actions: ActionRegistry(),
                imageSource: ImageSource(access: ImageAccess(viewFile: nil)))
            engine.load()
        }

        func run(_ bytes: [UInt8], file: String) -> (applied: Int, refused: Int, unlocated: String?) {
            var applied = 0
            var refused = 0
            for (number, text, invalidUTF8At) in EventScript.lines(of: bytes) {
                if invalidUTF8At != nil {
                    refused += 1
                    continue
                }
                do {
                    engine.apply(try EventScript.parse(text, file: file, number: number), step: number)
                    applied += 1
                } catch let error as EventScriptError {
                    guard error.file == file, error.line == number, error.description.hasPrefix("\(file):\(number): ")
                    else { return (applied, refused, error.description) }
                    // An echoed value is bounded and on one line.
                    guard !error.description.contains("\n"), error.description.utf8.count < 2_000
                    else { return (applied, refused, "unbounded: \(error.description.prefix(200))") }
                    refused += 1
                } catch {
                    return (applied, refused, "\(error)")
                }
            }
            return (applied, refused, nil)
        }
    }
}

/// Walks a render tree the way the text renderer does (HubRender is not a dependency of these tests).
enum TextRenderLite {
    static func lines(_ tree: RenderTree) -> Int {
        func count(_ node: RenderNode) -> Int { 1 + node.children.reduce(0) { $0 + count($1) } }
        return tree.body.reduce(0) { $0 + count($1) } + tree.overlays.reduce(0) { $0 + count($1) }
            + (tree.header.map(count) ?? 0)
    }
}

/// A small, fast, seedable generator (SplitMix64), so every run mutates the same way.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Mutations of JSON text: byte flips, truncation, type swaps, extreme numbers, deep nesting, huge strings,
/// invalid UTF-8, duplicate keys.
enum Mutator {
    static let extremeNumbers = [
        "1e300", "-1e300", "1e-320", "-0", "9223372036854775808", "-9223372036854775809",
        "1e309", "123456789012345678901234567890", "0.0000001", "4294967296",
    ]
    static let values = [
        "null", "true", "[]", "{}", "\"\"", "\"x\"", "0", "-1", "[[[[[]]]]]",
        "{\"id\":{}}", "\"\\u0000\\u001b[31m\\n\"", "\"\\ud800\"",
    ]

    static func mutate(_ seed: [UInt8], rounds: Int, random: inout SplitMix) -> [UInt8] {
        var bytes = seed
        for _ in 0..<rounds { bytes = mutateOnce(bytes, random: &random) }
        return bytes
    }

    static func mutateOnce(_ input: [UInt8], random: inout SplitMix) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return Array("{}".utf8) }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        // Weighted toward mutations that keep the JSON well-formed, so the decoder's and layout's paths past
        // the syntax check are exercised as much as the syntax errors.
        let kinds = [0, 1, 2, 2, 3, 3, 3, 4, 5, 6, 7, 7, 8, 8, 9]
        switch kinds.randomElement(using: &random)! {
        case 0:  // flip a byte
            bytes[at] ^= UInt8.random(in: 1...255, using: &random)
        case 1:  // truncate
            bytes = Array(bytes[..<at])
        case 2:  // an extreme number where a value starts
            replaceValue(&bytes, near: at, with: extremeNumbers.randomElement(using: &random)!)
        case 3:  // a value of another type
            replaceValue(&bytes, near: at, with: values.randomElement(using: &random)!)
        case 4:  // deep nesting
            let depth = [100, 600, 10_000].randomElement(using: &random)!
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            replaceValue(&bytes, near: at, with: nested)
        case 5:  // a huge string
            replaceValue(&bytes, near: at, with: "\"" + String(repeating: "é\\n", count: 20_000) + "\"")
        case 6:  // invalid UTF-8
            bytes.insert(
                contentsOf: [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF8, 0x88]].randomElement(using: &random)!,
                at: at)
        case 7:  // a duplicate key
            if let brace = bytes[at...].firstIndex(of: UInt8(ascii: "{")) {
                bytes.insert(contentsOf: Array("\"id\":\"dup\",\"id\":7,".utf8), at: brace + 1)
            }
        case 8:  // an image URI that reaches for the disk
            let uri = ["file:///etc/passwd", "../../../../etc/passwd", "/proc/self/environ", "/dev/zero"]
                .randomElement(using: &random)!
            replaceValue(&bytes, near: at, with: "{\"main\":{\"uri\":\"\(uri)\"}}")
        default:  // delete a run of bytes
            let end = min(bytes.count, at + Int.random(in: 1...16, using: &random))
            bytes.removeSubrange(at..<end)
        }
        return bytes
    }

    /// Replaces the value after the colon or comma at or after `offset` with `text` (up to the next `,` `}` `]`).
    static func replaceValue(_ bytes: inout [UInt8], near offset: Int, with text: String) {
        guard let separator = bytes[offset...].firstIndex(where: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ",") })
        else { return }
        let start = separator + 1
        let end =
            bytes[start...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") || $0 == UInt8(ascii: "]") }
            ?? bytes.count
        bytes.replaceSubrange(start..<end, with: Array(text.utf8))
    }

    /// Mutates a few lines of a script, keeping the others, and sometimes adds extreme events.
    static func mutateLines(_ script: [UInt8], random: inout SplitMix) -> [UInt8] {
        var lines = script.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        let extremes = [
            #"{"event":"resize","width":1e300,"height":736}"#, #"{"event":"resize","width":1e20,"height":1e-320}"#,
            #"{"event":"scroll","y":-1e300}"#, #"{"event":"scroll","y":1e9}"#, #"{"event":"advance","seconds":1e300}"#,
            #"{"event":"tap","indexPath":[-1]}"#, #"{"event":"tap","indexPath":[1e300]}"#,
            #"{"event":"tap","point":{"x":1e300,"y":-1e300}}"#, #"{"event":"tap","section":"header","indexPath":[99]}"#,
            #"{"event":"action","indexPath":[0],"action":"a:b","custom":{"k":[[[[1e300]]]]}}"#,
            #"{"event":"image","uri":"file:///etc/passwd","ok":true}"#, #"{"event":"tap","indexPath":[0,0,0,0,0,0,0]}"#,
        ]
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let at = Int.random(in: 0..<max(1, lines.count), using: &random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                lines.insert(Array(extremes.randomElement(using: &random)!.utf8), at: min(at, lines.count))
            } else if at < lines.count {
                lines[at] = mutateOnce(lines[at], random: &random)
            }
        }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }
}
