import Foundation
import HubCore
import HubInjection
import HubTestKit
import Testing

@testable import HubHost

@Suite("libffi signatures and calls")
struct FFITests {
    @Test("signatures parse, with whitespace and empty argument lists")
    func parsing() throws {
        let s = try FFISignature("(i32,f64,str,ptr)->ptr")
        #expect(s.arguments == [.i32, .f64, .str, .ptr] && s.result == .ptr)
        #expect(try FFISignature("()->void").arguments.isEmpty)
        let spaced = try FFISignature(" ( u8 , i64 ) -> f32 ")
        #expect(spaced.description == "(u8,i64)->f32")
    }

    @Test(
        "bad signatures say what is wrong",
        arguments: [
            ("i32->ptr", "must start with '('"),
            ("(i32,f64", "missing ')'"),
            ("(i32)", "missing '->'"),
            ("(i32)->", "missing return type"),
            ("(x)->i32", "unknown type 'x' for argument 1"),
            ("(i32,)->i32", "argument 2 is empty"),
            ("(void)->i32", "argument 1 cannot be void"),
            ("(i32)->int", "unknown return type 'int'"),
        ])
    func badSignatures(text: String, message: String) {
        #expect {
            try FFISignature(text)
        } throws: { error in
            "\(error)".contains("signature '\(text)'") && "\(error)".contains(message)
        }
    }

    /// The provider plugin's library opened directly (its exports are what FFICall calls).
    final class Library {
        let dir: CPlugins
        let handle: UnsafeMutableRawPointer
        init() throws {
            dir = try CPlugins()
            let file = try dir.compile(providerSource, as: "libtarget.so")
            handle = try #require(dlopen(file.path, RTLD_NOW | RTLD_LOCAL))
        }
        deinit {
            dlclose(handle)
            dir.cleanUp()
        }
        func call(_ symbol: String, _ signature: String, _ arguments: [Any]) throws -> FFIValue {
            let function = try #require(dlsym(handle, symbol))
            return try FFICall(function: UnsafeRawPointer(function), signature: FFISignature(signature)).call(arguments)
        }
    }

    @Test("every integer width, floats, doubles, strings and pointers cross, small returns sign-extended correctly")
    func everyType() throws {
        let lib = try Library()
        #expect(try lib.call("negate_i8", "(i8)->i8", [5]) == .int(-5))
        #expect(try lib.call("negate_i8", "(i8)->i8", [Int8(-128)]) == .int(-128))  // -(-128) wraps in int8
        #expect(try lib.call("add_u8", "(u8,u8)->u8", [200, 100]) == .uint(44))  // wraps at 256
        #expect(try lib.call("negate_i16", "(i16)->i16", [1234]) == .int(-1234))
        #expect(try lib.call("add_u16", "(u16,u16)->u16", [60000, 6000]) == .uint(464))
        #expect(try lib.call("negate_i32", "(i32)->i32", [Int32.max]) == .int(-Int64(Int32.max)))
        #expect(try lib.call("add_u32", "(u32,u32)->u32", [UInt32.max, 2]) == .uint(1))
        #expect(try lib.call("negate_i64", "(i64)->i64", [Int64.max]) == .int(-Int64.max))
        #expect(try lib.call("add_u64", "(u64,u64)->u64", [UInt64.max - 1, 1]) == .uint(UInt64.max))
        #expect(try lib.call("half_f32", "(f32)->f32", [3.0]) == .double(1.5))
        #expect(try lib.call("mix", "(i8,u16,i32,u64,f32,f64)->f64", [-1, 2, -3, 4, 0.5, 0.25]) == .double(2.75))
        #expect(try lib.call("length_of", "(str)->u64", ["héllo"]) == .uint(6))
        #expect(try lib.call("length_of", "(str)->u64", [Optional<String>.none as Any]) == .uint(UInt64.max))
        #expect(try lib.call("echo", "(str)->str", ["round trip"]) == .string("round trip"))
        #expect(try lib.call("nothing", "()->void", []) == .void)
        let made = try lib.call(
            "make_controller", "(str,str,i32,f64,u8,i64,f32)->ptr", ["A", "B", 7, 2.5, 255, -9, 0.75])
        guard case .pointer(let pointer?) = made else {
            Issue.record("expected a pointer, got \(made)")
            return
        }
        #expect(try lib.call("controller_name", "(ptr)->str", [pointer]) == .string("A"))
        #expect(try lib.call("controller_flags", "(ptr)->u8", [pointer]) == .uint(255))
        #expect(try lib.call("controller_big", "(ptr)->i64", [pointer]) == .int(-9))
        #expect(try lib.call("controller_ratio", "(ptr)->f32", [pointer]) == .double(0.75))
        #expect(try lib.call("free_controller", "(ptr)->void", [pointer]) == .void)
    }

    @Test("wrong argument count or type, and out-of-range integers, are refused before the call")
    func argumentErrors() throws {
        let lib = try Library()
        #expect(throws: FFICall.CallError.argumentCount(expected: 2, got: 1)) {
            try lib.call("add_u8", "(u8,u8)->u8", [1])
        }
        #expect {
            try lib.call("add_u8", "(u8,u8)->u8", [1, 256])
        } throws: { "\($0)" == "argument 2 must be u8, got 256, out of range" }
        #expect {
            try lib.call("negate_i8", "(i8)->i8", [-129])
        } throws: { "\($0)" == "argument 1 must be i8, got -129, out of range" }
        #expect {
            try lib.call("add_u32", "(u32,u32)->u32", [-1, 1])
        } throws: { "\($0)".contains("argument 1 must be u32, got -1, out of range") }
        #expect {
            try lib.call("length_of", "(str)->u64", [42])
        } throws: { "\($0)".contains("argument 1 must be str, got 42") }
        #expect {
            try lib.call("half_f32", "(f32)->f32", ["x"])
        } throws: { "\($0)".contains("argument 1 must be f32") }
    }

    @Test("command-line words convert to each type")
    func commandLineWords() throws {
        #expect(try FFIValue.from(argument: "-12", as: .i16) == .int(-12))
        #expect(try FFIValue.from(argument: "0xff", as: .u8) == .uint(255))
        #expect(try FFIValue.from(argument: "2.5", as: .f64) == .double(2.5))
        // null is NULL for a string or a pointer, as inject reads it.
        #expect(try FFIValue.from(argument: "null", as: .str) == .string(nil))
        #expect(try FFIValue.from(argument: "NULL", as: .str) == .string("NULL"))
        #expect(try FFIValue.from(argument: "null", as: .ptr) == .pointer(nil))
        #expect(try FFIValue.from(argument: "NULL", as: .ptr) == .pointer(nil))
        #expect(try FFIValue.from(argument: "text", as: .str) == .string("text"))
        #expect(throws: FFIValue.Mismatch.self) { try FFIValue.from(argument: "300", as: .u8) }
        #expect(throws: FFIValue.Mismatch.self) { try FFIValue.from(argument: "abc", as: .i32) }
    }
}

/// Module files: keys bound to plugin-exported C functions with defaults, resolved by the injector through
/// libffi, revoked with their plugin.
@Suite("Module files", .serialized, .pluginCode)
struct ModuleFileTests {
    static let controllerBinding = """
        { "key": "home.controller", "plugin": "liba_provider.so", "symbol": "make_controller",
          "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["Home", "main", 3, 1.5, 7, -40, 0.25] }
        """

    struct Fixture {
        let dir: CPlugins
        let host: PluginHost
        let provider: PluginRecord
        init(bindings: [String], fileName: String = "widgets.modules.json") throws {
            dir = try CPlugins()
            try dir.compile(providerSource, as: "liba_provider.so")
            host = PluginHost(cacheDirectory: dir.cache)
            provider = host.load(file: dir.plugins.appendingPathComponent("liba_provider.so"))
            try "{ \"bindings\": [\(bindings.joined(separator: ","))] }"
                .write(to: dir.plugins.appendingPathComponent(fileName), atomically: true, encoding: .utf8)
        }
        var moduleFile: String { dir.plugins.appendingPathComponent("widgets.modules.json").path }
        func read(_ pointer: Any?, _ symbol: String, _ signature: String) throws -> FFIValue {
            let handle = try #require(provider.handle)
            let function = try #require(dlsym(handle, symbol))
            return try FFICall(function: UnsafeRawPointer(function), signature: FFISignature(signature)).call([
                pointer as Any
            ])
        }
    }

    @Test("the injector builds a bound key through libffi with the defaults, each replaced by the caller's")
    func defaultsAndOverrides() throws {
        let f = try Fixture(bindings: [Self.controllerBinding])
        defer { f.dir.cleanUp() }
        #expect(f.host.services.loadModuleFiles(in: [f.dir.plugins]).isEmpty)
        let key = ServiceKey(id: "home.controller")
        let home = try #require(try f.host.services.injector.get(key: key))
        #expect(try f.read(home, "controller_name", "(ptr)->str") == .string("Home"))
        #expect(try f.read(home, "controller_bundle", "(ptr)->str") == .string("main"))
        #expect(try f.read(home, "controller_count", "(ptr)->i32") == .int(3))
        #expect(try f.read(home, "controller_scale", "(ptr)->f64") == .double(1.5))
        #expect(try f.read(home, "controller_flags", "(ptr)->u8") == .uint(7))
        #expect(try f.read(home, "controller_big", "(ptr)->i64") == .int(-40))
        #expect(try f.read(home, "controller_ratio", "(ptr)->f32") == .double(0.25))
        // motion-objection's "Home" overridden by "Work", and a second argument of another type.
        let work = try #require(try f.host.services.injector.get(key: key, arguments: ["Work", "alt", Int32(9)]))
        #expect(try f.read(work, "controller_name", "(ptr)->str") == .string("Work"))
        #expect(try f.read(work, "controller_bundle", "(ptr)->str") == .string("alt"))
        #expect(try f.read(work, "controller_count", "(ptr)->i32") == .int(9))
        #expect(try f.read(work, "controller_scale", "(ptr)->f64") == .double(1.5))
        // Normal scope: a call per get.
        #expect((home as? UnsafeMutableRawPointer) != (work as? UnsafeMutableRawPointer))
        // The binding is owned by the plugin's load and listed so.
        #expect(f.host.services.registrations.first { $0.key == key }?.owner == f.provider.owner)
    }

    @Test("unloading the plugin revokes its module-file bindings; lookups then fail cleanly")
    func revokedWithPlugin() throws {
        let f = try Fixture(bindings: [Self.controllerBinding])
        defer { f.dir.cleanUp() }
        f.host.services.loadModuleFiles(in: [f.dir.plugins])
        let kept = try #require(f.host.services.boundFunctions.first)
        f.host.unload(f.provider)
        // A caller that kept the bound function gets an error, not a jump into unmapped code.
        #expect { try kept.invoke([]) } throws: {
            "\($0)".hasSuffix("liba_provider.so was unloaded (\(f.provider.owner)); the binding is revoked")
        }
        // The injector's error names the key, the plugin and what happened.
        #expect(throws: InjectionError.revoked(ServiceKey(id: "home.controller"), owner: f.provider.owner.displayName))
        {
            try f.host.services.injector.get(key: ServiceKey(id: "home.controller"))
        }
        #expect(f.host.services.boundFunctions.isEmpty)
    }

    @Test("a reloaded plugin gets its module-file bindings back, owned by the new load")
    func reloadRebinds() throws {
        let f = try Fixture(bindings: [Self.controllerBinding])
        defer { f.dir.cleanUp() }
        f.host.services.loadModuleFiles(in: [f.dir.plugins])
        f.host.unload(f.provider)
        let again = f.host.load(file: f.dir.plugins.appendingPathComponent("liba_provider.so"))
        #expect(f.host.services.pluginDidLoad(again).isEmpty)
        let key = ServiceKey(id: "home.controller")
        #expect(try f.host.services.injector.get(key: key) != nil)
        #expect(f.host.services.registrations.first { $0.key == key }?.owner == again.owner)
    }

    @Test("a singleton-scoped binding calls the function once per injector")
    func singletonScope() throws {
        let binding = """
            { "key": "shared.controller", "plugin": "liba_provider.so", "symbol": "make_controller",
              "signature": "(str,str,i32,f64,u8,i64,f32)->ptr", "defaults": ["S", "b", 1, 1, 1, 1, 1], "scope": "singleton" }
            """
        let f = try Fixture(bindings: [binding])
        defer { f.dir.cleanUp() }
        f.host.services.loadModuleFiles(in: [f.dir.plugins])
        let key = ServiceKey(id: "shared.controller")
        let a = try f.host.services.injector.get(key: key) as? UnsafeMutableRawPointer
        let b = try f.host.services.injector.get(key: key) as? UnsafeMutableRawPointer
        #expect(a != nil && a == b)
    }

    @Test("call-time errors name the module file and the binding")
    func callErrors() throws {
        let f = try Fixture(bindings: [
            Self.controllerBinding,
            """
            { "key": "partial", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8", "defaults": [1] }
            """,
        ])
        defer { f.dir.cleanUp() }
        #expect(f.host.services.loadModuleFiles(in: [f.dir.plugins]).isEmpty)
        let prefix = "\(f.moduleFile): binding 'home.controller' (bindings[0]): "
        #expect {
            try f.host.services.injector.get(key: ServiceKey(id: "home.controller"), arguments: [42])
        } throws: { "\($0)" == prefix + "argument 1 of make_controller must be str, got 42" }
        #expect {
            try f.host.services.injector.get(
                key: ServiceKey(id: "home.controller"), arguments: Array(repeating: 1, count: 8))
        } throws: { "\($0)" == prefix + "make_controller(str,str,i32,f64,u8,i64,f32)->ptr takes 7 argument(s), got 8" }
        #expect {
            try f.host.services.injector.get(key: ServiceKey(id: "partial"))
        } throws: {
            "\($0)".hasSuffix(
                "binding 'partial' (bindings[1]): add_u8(u8,u8)->u8 takes 2 argument(s), got 1 (1 default(s), 0 given)")
        }
        #expect(try f.host.services.call(ServiceKey(id: "partial"), arguments: [1, 2]) == .uint(3))
        #expect(try f.host.services.call(ServiceKey(id: "partial"), arguments: [250, 10]) == .uint(4))
    }

    @Test(
        "load-time errors name the module file and the binding; good bindings still bind",
        arguments: [
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "no_such_function", "signature": "()->void" }"#,
                "binding 'a' (bindings[0]): symbol no_such_function not found in liba_provider.so"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "nothing", "signature": "(i32->void" }"#,
                "binding 'a' (bindings[0]): signature '(i32->void': missing ')'"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8", "defaults": [1, "x"] }"#,
                "binding 'a' (bindings[0]): default 2 must be u8"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8", "defaults": [1, 2, 3] }"#,
                "binding 'a' (bindings[0]): 3 defaults for 2 argument(s) of (u8,u8)->u8"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "add_u8", "signature": "(u8,u8)->u8", "defaults": [1.5] }"#,
                "binding 'a' (bindings[0]): default 1 must be u8, got 1.5, not an integer"
            ),
            (
                #"{ "key": "a", "plugin": "libmissing.so", "symbol": "nothing", "signature": "()->void" }"#,
                "binding 'a' (bindings[0]): plugin libmissing.so is not loaded from"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "nothing", "signature": "()->void", "scope": "forever" }"#,
                "binding 'a' (bindings[0]): bindings[0].scope must be \"normal\" or \"singleton\""
            ),
            (
                #"{ "plugin": "liba_provider.so", "symbol": "nothing", "signature": "()->void" }"#,
                "bindings[0].key must be a non-empty string"
            ),
            (#""just a string""#, "bindings[0] must be an object"),
            (
                // The same key as the good binding after it: both bindings are named.
                #"{ "key": "good", "plugin": "liba_provider.so", "symbol": "negate_i32", "signature": "(i32)->i32", "defaults": [5] }"#,
                "binding 'good' (bindings[1]): the key is bound twice in this file ('good' (bindings[0]) binds it)"
            ),
            (
                #"{ "key": "a", "plugin": "liba_provider.so", "symbol": "nothing", "signature": "()->void", "sope": "singleton" }"#,
                #"binding 'a' (bindings[0]): bindings[0] has an unknown field "sope"; did you mean "scope"?"#
            ),
        ])
    func loadErrors(binding: String, message: String) throws {
        let good =
            #"{ "key": "good", "plugin": "liba_provider.so", "symbol": "negate_i32", "signature": "(i32)->i32", "defaults": [5] }"#
        let f = try Fixture(bindings: [binding, good])
        defer { f.dir.cleanUp() }
        let problems = f.host.services.loadModuleFiles(in: [f.dir.plugins])
        #expect(problems.count == 1)
        #expect(
            problems.first.map { "\($0)".hasPrefix(f.moduleFile + ": ") && "\($0)".contains(message) } == true,
            "\(problems)")
        // A problem in one binding stops only that binding.
        #expect(f.host.services.boundFunctions.map(\.binding.key.id) == ["good"])
        #expect(try f.host.services.call(ServiceKey(id: "good")) == .int(-5))
    }

    @Test("a file that is not JSON, or has no bindings array, is named in the error")
    func badFiles() throws {
        let dir = try CPlugins()
        defer { dir.cleanUp() }
        let url = dir.plugins.appendingPathComponent("broken.modules.json")
        try "{ not json".write(to: url, atomically: true, encoding: .utf8)
        #expect { try ModuleFile(contentsOf: url) } throws: { "\($0)".hasPrefix(url.path + ": not valid JSON") }
        try "{ \"binds\": [] }".write(to: url, atomically: true, encoding: .utf8)
        #expect { try ModuleFile(contentsOf: url) } throws: {
            "\($0)" == url.path + ": expected an object with a \"bindings\" array, found an object"
        }
    }
}
