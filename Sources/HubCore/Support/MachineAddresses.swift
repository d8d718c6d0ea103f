import Glibc

/// This machine's own IP addresses and name: what a browser elsewhere on the network puts in its `Host` header
/// to reach a server listening on every interface.
public enum MachineAddresses {
    /// Every interface's address, as it appears in a URL: IPv4 dotted, IPv6 in brackets and lower case. Link-local
    /// IPv6 addresses are left out (a URL needs their zone, which browsers do not send back).
    public static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var found: [String] = []
        var entry = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let shown = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if family == AF_INET6 {
                guard !shown.contains("%"), !shown.lowercased().hasPrefix("fe80:") else { continue }
                found.append("[\(shown.lowercased())]")
            } else {
                found.append(shown)
            }
        }
        return found
    }

    /// The machine's host name (empty when it cannot be read).
    public static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
    }

    /// Whether `address` (as given to `--host`, or bracketed as in a URL) means every interface.
    public static func isWildcard(_ address: String) -> Bool {
        ["0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0", "[0:0:0:0:0:0:0:0]"].contains(address)
    }

    /// Addresses other machines may use to reach this one (not loopback), for a server on every interface.
    public static func networkAddresses() -> [String] {
        interfaceAddresses().filter { !$0.hasPrefix("127.") && $0 != "[::1]" }
    }
}
