import Foundation
import HubTestKit
import Testing

/// `hubhost call` and `hubhost list-services`, run as processes from the build's bin dir.
@Suite("hubhost call and list-services", .serialized)
struct CLITests {
    static let binDir = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ).deletingLastPathComponent()

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func hubhost(_ arguments: [String], environment: [String: String]? = nil) throws -> Run {
        let executable = binDir.appendingPathComponent("hubhost")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build hubhost first")
        let result = try ProcessRunner.run(executable, arguments, environment: environment)
        return Run(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    @Test("call prints the result of an export called through libffi, negative numbers and strings included")
    func call() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let plugin = try dir.compile(providerSource, as: "libprovider.so").path
        let negated = try Self.hubhost(["call", plugin, "negate_i8", "--signature", "(i8)->i8", "-5"])
        #expect(negated.status == 0 && negated.stdout == "5\n", "\(negated)")
        let echoed = try Self.hubhost(["call", plugin, "echo", "--signature", "(str)->str", "hi there"])
        #expect(echoed.stdout == "\"hi there\"\n")
        // A plugin's text is escaped as everything untrusted hubhost prints: an ESC would drive the terminal.
        let escaped = try Self.hubhost(["call", plugin, "echo", "--signature", "(str)->str", "a\u{1B}[2Jb"])
        #expect(!escaped.stdout.contains("\u{1B}") && escaped.stdout.contains("\\u{1b}"), "\(escaped.stdout)")
        let mixed = try Self.hubhost([
            "call", plugin, "mix", "--signature", "(i8,u16,i32,u64,f32,f64)->f64",
            "-1", "2", "-3", "4", "0.5", "0.25",
        ])
        #expect(mixed.stdout == "2.75\n")
        let nothing = try Self.hubhost(["call", plugin, "nothing", "--signature", "()->void"])
        #expect(nothing.status == 0 && nothing.stdout == "void\n")
    }

    @Test(
        "call refuses with exit 1 and a message naming what is wrong",
        arguments: [
            (["nope", "--signature", "()->void"], "symbol nope not found"),
            (
                ["add_u8", "--signature", "(u8,u8)->u8", "1", "300"],
                "argument 2 of add_u8 must be u8, got 300, out of range"
            ),
            (["add_u8", "--signature", "(u8,u8->u8", "1", "3"], "signature '(u8,u8->u8': missing ')'"),
            (["add_u8", "--signature", "(u8,u8)->u8", "1"], "add_u8(u8,u8)->u8 takes 2 argument(s), got 1"),
            (["add_u8", "--signature", "(u8,u8)->u8", "1", "x"], "argument 2 of add_u8 must be u8, got 'x'"),
        ])
    func callErrors(arguments: [String], message: String) throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let plugin = try dir.compile(providerSource, as: "libprovider.so").path
        let run = try Self.hubhost(["call", plugin] + arguments)
        #expect(run.status == 1)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test("call leaves no copy of the plugin behind, even when the export ends the process")
    func callLeavesNothingBehind() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let exports = "\n#include <unistd.h>\nint quits(void) { _exit(7); }\nint answer(void) { return 42; }\n"
        let plugin = try dir.compile(providerSource + exports, as: "libquits.so").path
        let (environment, temporary) = try environmentWithOwnTemporaryFolder(under: dir.root)
        let answered = try Self.hubhost(["call", plugin, "answer", "--signature", "()->i32"], environment: environment)
        #expect(answered.status == 0 && answered.stdout == "42\n", "\(answered)")
        let quit = try Self.hubhost(["call", plugin, "quits", "--signature", "()->i32"], environment: environment)
        #expect(quit.status == 5 && quit.stderr.contains("quits"), "\(quit)")  // it ended the worker that called it
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
    }

    @Test("call on a missing file or a file that is not ELF says so")
    func callMissingFile() throws {
        let run = try Self.hubhost(["call", "/nonexistent/libx.so", "f", "--signature", "()->void"])
        #expect(
            run.status == 3 && run.stderr.contains("/nonexistent/libx.so: no such file"), "a name that names nothing")
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let text = dir.plugins.appendingPathComponent("libtext.so")
        try "not a shared object".write(to: text, atomically: true, encoding: .utf8)
        let notELF = try Self.hubhost(["call", text.path, "f", "--signature", "()->void"])
        #expect(notELF.status == 1 && notELF.stderr.contains("libtext.so"), "\(notELF.stderr)")
        #expect(!notELF.stderr.contains("dlopen failed"), "\(notELF.stderr)")
    }

    /// A crash in a provider's service function, called from a consumer's configure, is the provider's: the code
    /// that crashed is named and quarantined, not the consumer that called it (which stayed quarantined after the
    /// provider was fixed).
    @Test func aCrashInAServiceFunctionIsTheProvidersNotTheCallers() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so", defines: ["GREET_CRASHES_FOR": #""boom""#])
        try dir.compile(consumerSource, as: "libb_consumer.so")
        let view = dir.root.appendingPathComponent("view.json")
        try #"{"body": [{"id": "g", "component": {"id": "consumer:greeting"}, "text": {"title": "boom"}}]}"#.write(
            to: view, atomically: true, encoding: .utf8)
        let render = [
            "render", view.path, "--format", "svg", "-o", "-", "--plugins", dir.plugins.path, "--plugin-cache",
            dir.cache.path,
        ]
        let run = try Self.hubhost(render)
        #expect(run.status == 5, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "liba_provider.so (com.test.provider 1.0.0) crashed with SIGSEGV in its own code, called from "
                    + "libb_consumer.so (com.test.consumer 1.0.0)'s configure [consumer:greeting]"), "\(run.stderr)")
        #expect(run.stdout.contains("fallback: "), "the consumer draws without the service: \(run.stdout)")
        let again = try Self.hubhost(render)
        #expect(again.stderr.contains("quarantined liba_provider.so"), "\(again.stderr)")
        #expect(!again.stderr.contains("quarantined libb_consumer.so"), "\(again.stderr)")
    }

    @Test("list-services --unload reports what is still alive after its owner was revoked, and exits 3")
    func listServicesSurvivors() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(consumerSource, as: "libb_consumer.so", defines: ["HOLD_IN_INIT": "1"])
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let before = try Self.hubhost(["list-services"] + common)
        #expect(before.status == 0)
        #expect(
            before.stdout.split(separator: "\n").contains { $0.hasPrefix("com.test.greeter") && $0.hasSuffix("  1") })
        let after = try Self.hubhost(["list-services", "--unload", "liba_provider.so"] + common)
        #expect(after.status == 4, "\(after.stderr)")
        // A name that names no plugin is exit 3, as in every command (it was a usage error).
        let typo = try Self.hubhost(["list-services", "--unload", "liba_provder.so"] + common)
        #expect(
            typo.status == 3 && typo.stderr.contains("--unload liba_provder.so: no loaded plugin"), "\(typo.stderr)")
        #expect(
            after.stdout.contains(
                "alive after revocation:\n  com.test.greeter (context held 1× by com.test.consumer 1.0.0 (libb_consumer.so)) from com.test.provider 1.0.0 (liba_provider.so) is still alive after its owner was revoked"
            ),
            "\(after.stdout)")
    }

    @Test("list-services lists every key with owner, scope, version and live instances; module-file problems exit 1")
    func listServices() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        try dir.compile(providerSource, as: "liba_provider.so")
        try dir.compile(consumerSource, as: "libb_consumer.so")
        try """
        { "bindings": [
          { "key": "home.controller", "plugin": "liba_provider.so", "symbol": "make_controller",
            "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["Home"] } ] }
        """.write(to: dir.plugins.appendingPathComponent("widgets.modules.json"), atomically: true, encoding: .utf8)
        let common = ["--plugins", dir.plugins.path, "--plugin-cache", dir.cache.path]
        let table = try Self.hubhost(["list-services"] + common)
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("KEY") == true)
        #expect(
            lines.contains {
                $0.hasPrefix("com.test.greeter") && $0.contains("com.test.provider 1.0.0 (liba_provider.so)")
                    && $0.contains(" 2 ")
            })
        #expect(lines.contains { $0.hasPrefix("home.controller") && $0.contains("provider (normal)") })
        #expect(lines.contains { $0.hasPrefix("hub.uri-opener") && $0.contains("hubhost") })
        #expect(lines.last == "alive after revocation: none")

        let json = try Self.hubhost(["list-services", "--json", "--unload", "com.test.provider"] + common)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let services = try #require(object["services"] as? [[String: Any]])
        #expect(!services.contains { ($0["id"] as? String) == "com.test.greeter" })
        #expect(!services.contains { ($0["id"] as? String) == "home.controller" })
        #expect(services.contains { ($0["id"] as? String) == "hub.image-loader" && ($0["version"] as? Int) == 1 })
        // A binding has no version: null, as the table's "-", not 0.
        let factory = try #require(services.first { ($0["id"] as? String) == "HubInjection.ObjectFactory" })
        #expect(factory["version"] is NSNull)

        try "{ \"bindings\": [ { \"key\": \"x\" } ] }".write(
            to: dir.plugins.appendingPathComponent("widgets.modules.json"),
            atomically: true, encoding: .utf8)
        let broken = try Self.hubhost(["list-services"] + common)
        #expect(broken.status == 1)
        #expect(
            broken.stderr.contains(
                "widgets.modules.json: binding 'x' (bindings[0]): bindings[0].signature must be a non-empty string"),
            "\(broken.stderr)")
    }
}
