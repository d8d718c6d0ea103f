import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// Builds the event test plugin (`Fixtures/events_plugin.c`) at test time and loads it into a fresh host.
struct EventsFixture {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let includeDir = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")
    static let source = packageRoot.appendingPathComponent("Tests/HubEventsTests/Fixtures/events_plugin.c")
    /// The build's bin dir: the directory of the running test binary.
    static let binDir = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ).deletingLastPathComponent()

    let root: URL
    let host: PluginHost

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("plugins"), withIntermediateDirectories: true)
        host = PluginHost(cacheDirectory: root.appendingPathComponent("cache"))
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }

    /// Compiles the plugin for namespace `ns` (with an action handler when asked) and loads it.
    @discardableResult
    func load(namespace ns: String, handler: Bool = false) throws -> PluginRecord {
        let output = root.appendingPathComponent("plugins/events_\(ns).so")
        var flags = ["-DEV_NS=\"\(ns)\"", "-DEV_ID=\"com.example.events.\(ns)\""]
        if handler { flags.append("-DEV_HANDLER") }
        try Self.run(
            ["cc", "-shared", "-fPIC", "-I", Self.includeDir.path] + flags + [Self.source.path, "-o", output.path])
        let record = host.load(file: output)
        #expect(record.isLoaded, "\(record.reason ?? "")")
        return record
    }

    /// An engine for a JSON view over the loaded plugins, with the view file written into the fixture folder.
    func engine(
        _ json: String, viewport: Size = Size(width: 375, height: 667),
        imageDelivery: ComponentImageLoader.Delivery = .endOfEvent
    ) throws -> EventEngine {
        let file = root.appendingPathComponent("view.json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        let decoded = try ViewModelDecoder(file: "view.json").decode(json)
        #expect(decoded.issues.isEmpty, "\(decoded.issues)")
        let engine = host.makeEventEngine(
            viewModel: decoded.viewModel, viewport: viewport, viewFile: file,
            layoutManager: DefaultLayoutManager(margin: 0), imageDelivery: imageDelivery)
        engine.trace = EventTrace()
        engine.load()
        return engine
    }

    static func run(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else { throw FixtureError("\(arguments.first ?? "") failed: \(result.stderr)") }
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// The plugin's own log of what the host called (read from the loaded private copy).
struct PluginLog {
    let record: PluginRecord

    private func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let path = record.privateCopy?.path, let handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD) else { return nil }
        defer { dlclose(handle) }
        guard let pointer = dlsym(handle, name) else { return nil }
        return unsafeBitCast(pointer, to: type)
    }

    /// Every line logged since the last `clear`.
    var lines: [String] {
        typealias Fn = @convention(c) () -> UnsafePointer<CChar>
        guard let log = symbol("events_log", as: Fn.self) else { return ["(no log)"] }
        return String(cString: log()).split(separator: "\n").map(String.init)
    }

    /// The lines about model `id` ("[id] …"), without the prefix.
    func lines(for id: String) -> [String] {
        lines.filter { $0.hasPrefix("[\(id)] ") }.map { String($0.dropFirst(id.count + 3)) }
    }

    func clear() {
        typealias Fn = @convention(c) () -> Void
        symbol("events_log_clear", as: Fn.self)?()
    }
}

/// `count` body components `ns:probe` with ids p0…, each `height` points high.
func probeList(_ count: Int, ns: String = "b", height: Double = 100, extra: (Int) -> String = { _ in "" }) -> String {
    let items = (0..<count).map { i in
        "{\"id\": \"p\(i)\", \"component\": {\"id\": \"\(ns):probe\"}, \"custom\": {\"height\": \(height)}\(extra(i))}"
    }
    return "{\"id\": \"list\", \"body\": [\(items.joined(separator: ",\n"))]}"
}
