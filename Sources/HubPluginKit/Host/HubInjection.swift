import CHubPlugin

#if canImport(Glibc)
    import Glibc
#endif

/// What an injector key resolved to (ABI 1.1's `hub_host.inject`).
public enum HubInjected: Equatable {
    /// The binding produced nothing (void, or a NULL pointer).
    case none
    case int(Int64)
    case double(Double)
    case string(String)
    /// Owned by whoever made it (the binding's plugin).
    case pointer(UnsafeMutableRawPointer)

    public var intValue: Int64? { if case .int(let v) = self { return v } else { return nil } }
    public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    public var pointerValue: UnsafeMutableRawPointer? {
        if case .pointer(let v) = self { return v } else { return nil }
    }
}

/// Why a key could not be resolved, in the host's words: the key, the module file and binding, the plugin that
/// provides it, and what happened (no binding, revoked by an unload, a cycle, a bad argument).
public struct HubInjectionError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// An error a provider throws (its description is what the caller of `inject` reads).
    public init(description: String) { self.description = description }
}

extension HubHost {
    /// Resolves an injector key the way Objection's `getObject` does, across the C ABI: a binding a module file
    /// declares (an initializer some plugin exports, called through libffi) or one the host installed, with its
    /// scope honoured (a singleton is made once). `arguments` replace the binding's defaults position by position
    /// (Int, Double, String or nil). Call on the host's main thread, from inside a host call.
    ///
    /// ```swift
    /// let sum = try HubHost.current.inject("sum", arguments: [40, 2]).intValue  // 42
    /// ```
    public func inject(_ key: String, named name: String? = nil, arguments: [Any?] = []) throws -> HubInjected {
        guard Int(table.pointee.struct_size) >= MemoryLayout<hub_host>.offset(of: \hub_host.inject)! + 8,
            let inject = table.pointee.inject
        else { throw HubInjectionError(description: "inject \(key): the host speaks ABI \(abiVersion), 1.1 is needed") }
        var json = "["
        for (position, argument) in arguments.enumerated() {
            if position > 0 { json += "," }
            switch argument {
            case nil: json += "null"
            case let v as Int: json += String(v)
            case let v as Int64: json += String(v)
            case let v as Int32: json += String(v)
            case let v as UInt32: json += String(v)
            case let v as Double: json += v.isFinite ? String(v) : "null"
            case let v as String: json += JSONValue.string(v).jsonText
            default:
                throw HubInjectionError(
                    description:
                        "inject \(key): argument \(position + 1) is \(type(of: argument!)); use Int, Double, String or nil"
                )
            }
        }
        json += "]"
        var out = hub_value()
        out.struct_size = UInt32(MemoryLayout<hub_value>.size)
        var error = [CChar](repeating: 0, count: 1024)
        let ok = key.withCString { k in
            json.withCString { a in
                withOptionalCString(name) { n in inject(table, k, n, a, &out, &error, error.count) }
            }
        }
        guard ok else { throw HubInjectionError(description: String(cString: error)) }
        switch out.type {
        case HUB_VALUE_INT: return .int(out.i)
        case HUB_VALUE_DOUBLE: return .double(out.d)
        case HUB_VALUE_STRING: return out.s.map { .string(String(cString: $0)) } ?? .none
        case HUB_VALUE_POINTER: return out.p.map { .pointer($0) } ?? .none
        default: return .none
        }
    }
}

extension HubHost {
    /// Binds `key` to `provider`, as an Objection module's `bindBlock` does, across the C ABI: other plugins, module
    /// files and host code resolve it with `inject`. The binding belongs to this plugin's load (its unload revokes
    /// it). `provider` gets the caller's arguments (numbers as Double, strings, nil) and returns the value, or
    /// throws (the caller then gets the error's description). Call from `register(with:)` or later, on the
    /// host's main thread.
    ///
    /// ```swift
    /// try HubHost.current.bind("greeting", singleton: true) { _ in .string("Hello") }
    /// ```
    public func bind(
        _ key: String, named name: String? = nil, singleton: Bool = false,
        _ provider: @escaping ([Any?]) throws -> HubInjected
    ) throws {
        guard Int(table.pointee.struct_size) >= MemoryLayout<hub_host>.offset(of: \hub_host.bind)! + 8,
            let bind = table.pointee.bind
        else { throw HubInjectionError(description: "bind \(key): the host speaks ABI \(abiVersion), 1.1 is needed") }
        // Kept for the plugin's life: the host may call the provider until the plugin unloads.
        let box = Unmanaged.passRetained(ProviderBox(provider)).toOpaque()
        var error = [CChar](repeating: 0, count: 512)
        let ok = key.withCString { k in
            withOptionalCString(name) { n in
                bind(
                    table, k, n,
                    { data, arguments, out, error, capacity in
                        ProviderBox.call(data, arguments, out, error, capacity)
                    }, box, singleton, &error, error.count)
            }
        }
        guard ok else {
            Unmanaged<ProviderBox>.fromOpaque(box).release()
            throw HubInjectionError(description: String(cString: error))
        }
    }
}

/// A Swift provider behind a C `user_data` pointer.
final class ProviderBox {
    let provider: ([Any?]) throws -> HubInjected
    /// The last string result, valid until the next call (the host copies it at once).
    var lastString: UnsafeMutablePointer<CChar>?
    init(_ provider: @escaping ([Any?]) throws -> HubInjected) { self.provider = provider }

    static func call(
        _ data: UnsafeMutableRawPointer?, _ arguments: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<hub_value>?,
        _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
    ) -> Bool {
        guard let data, let out else { return false }
        let box = Unmanaged<ProviderBox>.fromOpaque(data).takeUnretainedValue()
        let parsed = arguments.flatMap { JSONValue(parsing: String(cString: $0))?.arrayValue } ?? []
        let values: [Any?] = parsed.map { value -> Any? in
            switch value {
            case .number(let n): return n
            case .string(let s): return s
            case .bool(let b): return b
            default: return nil
            }
        }
        do {
            let result = try box.provider(values)
            switch result {
            case .none: out.pointee.type = HUB_VALUE_NONE
            case .int(let v): (out.pointee.type, out.pointee.i) = (HUB_VALUE_INT, v)
            case .double(let v): (out.pointee.type, out.pointee.d) = (HUB_VALUE_DOUBLE, v)
            case .string(let v):
                free(box.lastString)
                box.lastString = strdup(v)
                (out.pointee.type, out.pointee.s) = (HUB_VALUE_STRING, UnsafePointer(box.lastString))
            case .pointer(let p): (out.pointee.type, out.pointee.p) = (HUB_VALUE_POINTER, p)
            }
            return true
        } catch {
            if let errorBuffer, capacity > 0 {
                let text = Array("\(error)".utf8CString.prefix(capacity - 1)) + [0]
                text.withUnsafeBufferPointer { errorBuffer.update(from: $0.baseAddress!, count: text.count) }
            }
            return false
        }
    }
}
