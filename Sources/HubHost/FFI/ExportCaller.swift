import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost call`: calls one function a plugin exports, for diagnosis. The plugin is loaded from a private copy
/// (so the file itself can be rebuilt meanwhile), its `init` is not called, and it is closed afterwards (a C
/// image; a Swift image stays mapped until the process exits).
public enum ExportCaller {
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Parses `signature`, converts each word of `arguments` to its type, and calls `symbol` of `plugin`.
    public static func call(
        plugin: URL, trust: PluginTrust = PluginTrust(), symbol: String, signature text: String, arguments: [String]
    ) throws -> FFIValue {
        let signature: FFISignature
        do { signature = try FFISignature(text) } catch { throw Failure(message: "\(error)") }
        guard arguments.count == signature.arguments.count else {
            throw Failure(
                message: "\(symbol)\(signature) takes \(signature.arguments.count) argument(s), got \(arguments.count)")
        }
        var values: [FFIValue] = []
        for (index, (word, type)) in zip(arguments, signature.arguments).enumerated() {
            do { values.append(try FFIValue.from(argument: word, as: type)) } catch {
                throw Failure(message: "argument \(index + 1) of \(symbol) \(error)")
            }
        }
        guard FileManager.default.fileExists(atPath: plugin.path) else {
            throw Failure(message: "\(plugin.path): no such file")
        }
        // The file a command loads is checked as every command checks one: a build others could have written is
        // refused before any of it runs.
        if let refusal = trust.refusal(of: plugin) { throw Failure(message: refusal) }
        let folder = try ScratchFolder.make("hubhost-call")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The same ELF checks as loading (a text file named .so gets a clear message, not a dlopen error), and a
        // Swift image is never unmapped again (the Swift runtime keeps its metadata). The copy is of the bytes
        // checked (through a symlink, the file it names).
        let image: PluginImageInfo
        do { image = try ELFInspector.inspect(plugin) } catch { throw Failure(message: "\(error)") }
        let copy = folder.appendingPathComponent(plugin.lastPathComponent)
        try image.contents.write(to: copy)
        let flags = RTLD_NOW | RTLD_LOCAL | (image.isSwiftImage ? RTLD_NODELETE : 0)
        guard let handle = dlopen(copy.path, flags) else {
            throw Failure(
                message: "\(plugin.path): dlopen failed: \(dlerror().map { String(cString: $0) } ?? "unknown error")")
        }
        // The mapped image outlives its file: the copy goes now, so an export that crashes or exits leaves nothing.
        try? FileManager.default.removeItem(at: folder)
        defer { if !image.isSwiftImage { dlclose(handle) } }
        guard let function = dlsym(handle, symbol) else {
            throw Failure(
                message:
                    "\(plugin.path): symbol \(symbol) not found (plugins linked with the version script export only hub_plugin_entry)"
            )
        }
        // Noted in the black box: when `hubhost call` runs in a worker, a crash in the function names the plugin
        // and the call (a wrong signature crashes the callee, not hubhost).
        let slot = CallRecorder.register(
            path: plugin.path, id: "", version: "", digest: image.contentHash)
        do {
            let call = try FFICall(function: UnsafeRawPointer(function), signature: signature)
            return try CallRecorder.during(.exportedFunction, slot: slot) { try call.call(values: values) }
        } catch {
            throw Failure(message: "\(symbol): \(error)")
        }
    }
}
