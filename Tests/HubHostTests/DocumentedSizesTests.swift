import Foundation
import HubTestKit
import Testing

/// writing-plugins.md lists the size of every struct in `hub_plugin.h` for authors who declare them in another
/// language: each is checked against the header by the C compiler, so the list cannot drift from it.
@Suite struct DocumentedSizesTests {
    @Test func theSizesInWritingPluginsAreTheHeaders() throws {
        let guide = try String(
            contentsOf: FixtureBuilder.packageRoot.appendingPathComponent("docs/writing-plugins.md"), encoding: .utf8)
        let bullet = try #require(
            guide.components(separatedBy: "\n- ").first { $0.hasPrefix("**Sizes to check your declarations against**") }
        )
        func captures(_ pattern: String, in text: String) throws -> [[String]] {
            try text.matches(of: Regex(pattern)).map { match in
                (1..<match.output.count).map { match.output[$0].substring.map(String.init) ?? "" }
            }
        }
        let pairs = try captures(#"`(hub_[a-z_0-9]+)` (\d+)"#, in: bullet).map { ($0[0], $0[1]) }
        #expect(pairs.count >= 30, "\(bullet.prefix(200))")
        let header = try String(
            contentsOf: FixtureBuilder.includeDir.appendingPathComponent("hub_plugin.h"), encoding: .utf8)
        let structs = Set(try captures(#"\} (hub_[a-z_0-9]+);"#, in: header).map { $0[0] })
        let listed = Set(pairs.map(\.0))
        let enums = Set(try captures(#"typedef enum (hub_[a-z_0-9]+)"#, in: header).map { $0[0] })
        #expect(
            structs.subtracting(enums).subtracting(listed).isEmpty,
            "not listed: \(structs.subtracting(enums).subtracting(listed).sorted())")
        let fx = try FixtureBuilder()
        defer { fx.cleanUp() }
        let source = fx.root.appendingPathComponent("sizes.c")
        try
            (["#include \"hub_plugin.h\""]
            + pairs.map { "_Static_assert(sizeof(\($0.0)) == \($0.1), \"\($0.0) is not \($0.1) bytes\");" })
            .joined(separator: "\n").write(to: source, atomically: true, encoding: .utf8)
        try FixtureBuilder.run(
            "/usr/bin/env", ["cc", "-fsyntax-only", "-I", FixtureBuilder.includeDir.path, source.path])
    }
}
