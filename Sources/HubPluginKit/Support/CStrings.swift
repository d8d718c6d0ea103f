// C string helpers shared by the bridges. Everything here is internal: plugin authors only see Swift strings.
import CHubPlugin

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a borrowed C string, nil for NULL.
@inline(__always)
func swiftString(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}

/// A heap copy of `string` that the caller frees with `free`. Used for strings the ABI says the plugin owns
/// (descriptor fields, layout traits, name lists, UI state).
func makeCString(_ string: String) -> UnsafeMutablePointer<CChar> {
    guard let copy = strdup(string) else { fatalError("HubPluginKit: out of memory copying a string") }
    return copy
}

/// Calls `body` with a borrowed C string for `string`, or NULL when `string` is nil.
func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
    guard let string else { return try body(nil) }
    return try string.withCString { try body($0) }
}

/// Writes `message` into a caller-owned `out_error` buffer: truncated at a character boundary to fit, always
/// NUL-terminated. Does nothing when the buffer is NULL or empty.
func writeError(_ message: String, into buffer: UnsafeMutablePointer<CChar>?, capacity: Int) {
    guard let buffer, capacity > 0 else { return }
    var bytes: [UInt8] = []
    for character in message {
        let utf8 = Array(String(character).utf8)
        if bytes.count + utf8.count > capacity - 1 { break }
        bytes.append(contentsOf: utf8)
    }
    bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress { memcpy(buffer, base, bytes.count) }
    }
    buffer[bytes.count] = 0
}

/// A fixed-size error buffer for host calls that report failures through `out_error`.
struct ErrorBuffer {
    static let capacity = 512
    private var storage = [CChar](repeating: 0, count: ErrorBuffer.capacity)

    /// Runs `body` with the buffer and its capacity; returns what it wrote.
    mutating func capture(_ body: (UnsafeMutablePointer<CChar>, Int) -> Bool) -> (ok: Bool, message: String) {
        storage[0] = 0
        let ok = storage.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        let message = storage.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (ok, message)
    }
}

/// A NULL-terminated array of owned C strings (for `component_names`), freed with `freeCStringArray`.
func makeCStringArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafePointer<CChar>?> {
    let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: strings.count + 1)
    for (index, string) in strings.enumerated() { array[index] = UnsafePointer(makeCString(string)) }
    array[strings.count] = nil
    return array
}

func freeCStringArray(_ array: UnsafeMutablePointer<UnsafePointer<CChar>?>) {
    var index = 0
    while let string = array[index] {
        free(UnsafeMutablePointer(mutating: string))
        index += 1
    }
    array.deallocate()
}

/// `struct_size` for a C struct.
@inline(__always)
func structSize<T>(_ type: T.Type) -> UInt32 { UInt32(MemoryLayout<T>.size) }
