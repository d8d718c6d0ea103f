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
        case .noDependencyRegistered(let key):
            return "no dependency registered for \(key)"
        case .factoryDidNotReturnExpectedType(let key, let expected, let got):
            return "the factory for \(key) returned \(got), not the expected \(expected)"
        case .sharedInstanceWasNotOfExpectedType(let key, let released):
            return released
                ? "the shared instance for \(key) was released by its owner"
                : "the shared instance for \(key) is not of the expected type"
        case .storedDependencyWasNotOfExpectedType(let key, let expected, let got):
            return "the instance stored for \(key) is \(got), not the expected \(expected)"
        case .triedToRegisterTooManyFactories(let key, let owner, let claimant):
            return "\(key) is already registered by \(owner); \(claimant) cannot register it again"
        case .triedToRegisterTooManyInjectors(let key, let owner, let claimant):
            return "an injector for \(key) is already registered by \(owner); \(claimant) cannot register another"
        case .dependencyCycle(let path):
            return "dependency cycle: " + path.map(\.description).joined(separator: " -> ")
        }
    }
}
