import HubCore

/// HIPInstanceLocator's `LocatorError`, with the keys and owners a plugin host needs in its messages.
public enum LocatorError: Error, Equatable, CustomStringConvertible {
    case noDependencyRegistered(ServiceKey)
    /// A factory registered under a string key returned something the caller's type cannot hold.
    case factoryDidNotReturnExpectedType(ServiceKey, expected: String, got: String)
    /// HIPInstanceLocator reports a released shared instance this way too; `released` tells the two apart.
    case sharedInstanceWasNotOfExpectedType(ServiceKey, released: Bool)
    case storedDependencyWasNotOfExpectedType(ServiceKey, expected: String, got: String)
    /// A second factory or shared instance for a taken key; the first keeps it.
    case triedToRegisterTooManyFactories(ServiceKey, owner: Owner, claimant: Owner)
    case triedToRegisterTooManyInjectors(ServiceKey, owner: Owner, claimant: Owner)
    /// A factory asked, directly or through others, for the key it is building (HIPInstanceLocator overflows
    /// the stack here). The path starts and ends with the same key.
    case dependencyCycle([ServiceKey])

    public var description: String {
        switch self {
        case let .noDependencyRegistered(key):
            return "no dependency registered for \(key)"
        case let .factoryDidNotReturnExpectedType(key, expected, got):
            return "the factory for \(key) returned \(got), not the expected \(expected)"
        case let .sharedInstanceWasNotOfExpectedType(key, released):
            return released ? "the shared instance for \(key) was released by its owner"
                            : "the shared instance for \(key) is not of the expected type"
        case let .storedDependencyWasNotOfExpectedType(key, expected, got):
            return "the instance stored for \(key) is \(got), not the expected \(expected)"
        case let .triedToRegisterTooManyFactories(key, owner, claimant):
            return "\(key) is already registered by \(owner); \(claimant) cannot register it again"
        case let .triedToRegisterTooManyInjectors(key, owner, claimant):
            return "an injector for \(key) is already registered by \(owner); \(claimant) cannot register another"
        case let .dependencyCycle(path):
            return "dependency cycle: " + path.map(\.description).joined(separator: " -> ")
        }
    }
}
