import Testing

/// Runs each test of a suite that calls plugin code in this process alone among all such tests, across suites and
/// test targets: the C bridge keeps main-thread-only state without locks (as plugins are promised one thread), and
/// Swift Testing otherwise runs suites in parallel. Suites that only start child processes do not need it.
///
///     @Suite(.serialized, .pluginCode) struct BridgeTests { … }
public struct PluginCodeTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Each test case takes the gate; the suite and a parameterized test's own scope only pass through (a
        // second take inside the first would wait forever).
        guard testCase != nil else { return try await function() }
        await PluginCodeGate.shared.acquire()
        do {
            try await function()
        } catch {
            await PluginCodeGate.shared.release()
            throw error
        }
        await PluginCodeGate.shared.release()
    }
}

extension Trait where Self == PluginCodeTrait {
    /// One test at a time across every suite marked with it (see `PluginCodeTrait`).
    public static var pluginCode: PluginCodeTrait { PluginCodeTrait() }
}

/// A process-wide asynchronous mutex, first come first served.
actor PluginCodeGate {
    static let shared = PluginCodeGate()
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
