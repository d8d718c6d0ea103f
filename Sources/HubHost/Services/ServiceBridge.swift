import CHubPlugin

/// The service functions of the host table (issue 6 fills these in; until then the slots stay NULL and the
/// header's contract for them is not yet served).
enum ServiceBridge {
    static func install(into table: inout hub_host) {}
}
