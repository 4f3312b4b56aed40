/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
/// The default timeout is generous: the whole suite runs in parallel on two cores, and a passing
/// test never waits for it.
/// Never blocks a thread (tests run on a two-thread cooperative pool).
public func waitUntil(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// A test expectation that failed in setup, with a message.
public struct SupportFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
