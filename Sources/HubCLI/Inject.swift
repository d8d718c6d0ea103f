import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubInjection

/// `hubhost inject KEY [ARGS…]`: resolves an injector key end to end, as a plugin's `inject` does.
struct Inject: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inject",
        abstract: "Resolve an injector key (a module-file binding) and print what it produced, its scope and owner.",
        discussion: """
            Loads the plugins and the module files beside them (as every command does), then resolves KEY with \
            ARGS replacing the binding's default arguments position by position (numbers, strings, "null"). A \
            word in double quotes is a string whatever it holds: '"1"' passes the string 1, '"null"' the string \
            null (the single quotes are the shell's). The call runs in a worker process, so a binding whose function crashes is reported, not fatal.
            \(ExitStatus.help([
                (.ok, "resolved"),
                (.problems, "the key has no binding, its plugin unloaded, or the call failed; or it resolved, but a "
                    + "plugin could not be loaded"),
                (.notFound, "a --plugins folder does not exist"),
                (.pluginFault, "the bound function crashed, hung or exited (reported; nothing is quarantined)"),
            ]))
            """
    )

    @Argument(help: "The injector key.") var key: String

    @Argument(
        parsing: .allUnrecognized,
        help: "Arguments (numbers, strings, null; \"…\" for a string that reads as either), one word each.")
    var arguments: [String] = []

    @Option(help: "The binding's name (named bindings).") var name: String?

    @Flag(help: "Print JSON.") var json = false

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var isolation: IsolationOptions

    func run() throws {
        if isolation.supervises {
            var supervisor = OneShotSupervisor(isolation: isolation, plugins: plugins, viewFile: "")
            supervisor.recovers = false
            supervisor.context = "resolving \(key)"
            if json {
                // A script reading --json gets the fault as it gets any other error (stderr has the report).
                let key = ServiceKey(id: key, name: name).description
                supervisor.finished = { faults in
                    guard let fault = faults.last,
                        let text = try? TextTable.json(FaultRow(key: key, error: fault.summary))
                    else { return }
                    StandardOutput.print(text)
                }
            }
            supervisor.run()
        }
        let host = try plugins.makeHost()
        let pluginStatus = plugins.reportProblems(of: host)
        let serviceKey = ServiceKey(id: key, name: name)
        // As `call` reads its words: integers (also 0x hex), decimal numbers, null, else a string. A "--" that ends
        // the options is not an argument.
        let words = arguments.first == "--" ? Array(arguments.dropFirst()) : arguments
        let values: [Any] = words.map { word in
            // A JSON string literal is that string (how a string that reads as a number or null is passed).
            if word.count >= 2, word.hasPrefix("\""), word.hasSuffix("\""),
                case .string(let text)? = try? JSONValue.parse(Data(word.utf8))
            {
                return text
            }
            if word == "null" { return Optional<String>.none as Any }
            if let int = Int64(word) { return int }
            let negative = word.hasPrefix("-")
            let digits = negative ? word.dropFirst() : Substring(word)
            if digits.lowercased().hasPrefix("0x"), let magnitude = Int64(digits.dropFirst(2), radix: 16) {
                return negative ? -magnitude : magnitude
            }
            if word.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }), let double = Double(word) { return double }
            return word
        }
        // As every number hubhost reads: finite ("1e400" reads as infinity).
        for (index, value) in values.enumerated() {
            if let double = value as? Double, !double.isFinite {
                throw ValidationError("argument \(index + 1): \(words[index]) is not a finite number")
            }
        }
        let registration = host.services.registrations.last { $0.key == serviceKey }
        /// `--json`: the value with its type ("int", "double", "string", "pointer", "nothing", "other"), or the
        /// error; scope and owner when the key has a binding.
        struct Typed: Encodable {
            let value: JSONValue
            /// An integer result, written exactly (a double would round a 64-bit one).
            var integer: (negative: Bool, magnitude: UInt64)?
            func encode(to encoder: Encoder) throws {
                var container = encoder.singleValueContainer()
                if let integer {
                    if !integer.negative {
                        try container.encode(integer.magnitude)
                    } else {
                        try container.encode(Int64(bitPattern: 0 &- integer.magnitude))
                    }
                    return
                }
                switch value {
                // JSON has no infinity or NaN: such a value is written as its text ("inf", "nan").
                case .number(let n): if n.isFinite { try container.encode(n) } else { try container.encode("\(n)") }
                case .string(let text): try container.encode(text)
                default: try container.encodeNil()
                }
            }
        }
        struct Row: Encodable {
            var key: String
            var type: String?
            var value: Typed?
            var shown: String?
            var error: String?
            var scope: String?
            var owner: String?
        }
        let value: Any?
        do { value = try host.services.injector.get(key: serviceKey, arguments: values) } catch {
            Diagnostics.print("hubhost inject: \(ErrorText.describe(error))")
            // list-services lists C services and injector keys together; only the latter resolve here.
            if let service = host.services.registry.provider(of: serviceKey) {
                Diagnostics.print(
                    "hubhost inject: \(serviceKey) is a C service of \(service.owner.displayName) (plugins acquire it "
                        + "with hub_host.acquire_service), not an injector key")
            }
            if json {
                StandardOutput.print(
                    try TextTable.json(
                        Row(
                            key: serviceKey.description, error: ErrorText.describe(error), scope: registration?.scope,
                            owner: registration?.owner.displayName)))
            }
            throw ExitCode(.problems)
        }
        let shown: String
        let type: String
        let typed: JSONValue
        var integer: (negative: Bool, magnitude: UInt64)?
        if let v = value as? any BinaryInteger { integer = signAndMagnitude(v) }
        switch value {
        case nil: (shown, type, typed) = ("nothing", "nothing", .null)
        case let v as String: (shown, type, typed) = (TerminalText.quoted(v), "string", .string(v))
        case let v as any BinaryInteger: (shown, type, typed) = ("\(v)", "int", .number(Double(v)))
        case let v as any BinaryFloatingPoint: (shown, type, typed) = ("\(v)", "double", .number(Double(v)))
        case let v as UnsafeMutableRawPointer: (shown, type, typed) = ("pointer \(v)", "pointer", .string("\(v)"))
        case let v?: (shown, type, typed) = ("\(v)", "other", .string("\(v)"))
        }
        if json {
            StandardOutput.print(
                try TextTable.json(
                    Row(
                        key: serviceKey.description, type: type, value: Typed(value: typed, integer: integer),
                        shown: shown,
                        scope: registration?.scope ?? "unknown", owner: registration?.owner.displayName ?? "unknown")))
        } else {
            StandardOutput.print("\(serviceKey) = \(shown)")
            StandardOutput.print(
                "  scope: \(registration?.scope ?? "unknown")   owner: \(registration?.owner.displayName ?? "unknown")")
        }
        if let pluginStatus { throw ExitCode(pluginStatus) }
    }
}

/// `inject --json` when the bound function crashed, hung or exited: the key and what happened.
private struct FaultRow: Encodable {
    var key: String
    var error: String
}

/// `value` as sign and magnitude, exact for every integer type up to 64 bits.
private func signAndMagnitude<T: BinaryInteger>(_ value: T) -> (negative: Bool, magnitude: UInt64) {
    (value < 0, UInt64(truncatingIfNeeded: value.magnitude))
}
