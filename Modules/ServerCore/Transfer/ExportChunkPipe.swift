import Dispatch
import Synchronization

/// Hands an export's pieces from the thread that reads the store to the task that sends them,
/// holding at most `capacity` pieces: the thread blocks while the pipe is full (the reader of the
/// export sets the pace, and memory stays bounded), the task awaits while it is empty.
///
/// The producer is a thread of its own (it blocks); the consumer is async and never blocks a
/// thread of the cooperative pool.
final class ExportChunkPipe: Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        /// The consumer waiting for the next piece.
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        /// Whether the producer waits for room.
        var producerWaits = false
        /// How the producer ended (`.success` once all was pushed).
        var end: Result<Void, any Error>?
        /// Set when the consumer gives up: the producer's next push throws.
        var cancelled = false
    }

    private let capacity: Int
    private let state = Mutex(State())
    private let room = DispatchSemaphore(value: 0)

    /// A pipe holding at most `capacity` pieces.
    init(capacity: Int) { self.capacity = capacity }

    /// Adds `chunk`, blocking the calling thread while the pipe is full.
    ///
    /// - Throws: ``ServerError`` `unavailable` once the consumer has cancelled.
    func push(_ chunk: [UInt8]) throws(ServerError) {
        while true {
            let (accepted, waiter, cancelled) = state.withLock { state -> (Bool, CheckedContinuation<[UInt8]?, any Error>?, Bool) in
                if state.cancelled { return (false, nil, true) }
                if let waiter = state.waiter {
                    state.waiter = nil
                    return (true, waiter, false)
                }
                guard state.chunks.count < capacity else {
                    state.producerWaits = true
                    return (false, nil, false)
                }
                state.chunks.append(chunk)
                return (true, nil, false)
            }
            if cancelled { throw ServerError(.unavailable, "the export's receiver went away") }
            if accepted {
                waiter?.resume(returning: chunk)
                return
            }
            room.wait()
        }
    }

    /// Ends the pipe: the consumer gets the pieces still held, then the end (`error` thrown, or
    /// `nil` from ``next()``).
    func finish(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            state.end = error.map { .failure($0) } ?? .success(())
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// The consumer gives up: a blocked or later push throws.
    func cancel() {
        let wake = state.withLock { state -> Bool in
            state.cancelled = true
            state.chunks = []
            defer { state.producerWaits = false }
            return state.producerWaits
        }
        if wake { room.signal() }
    }

    /// The next piece, `nil` at the end.
    ///
    /// - Throws: the producer's error, after the pieces pushed before it.
    func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            let (result, wake) = state.withLock { state -> (Result<[UInt8]?, any Error>?, Bool) in
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    defer { state.producerWaits = false }
                    return (.success(chunk), state.producerWaits)
                }
                switch state.end {
                case .success?: return (.success(nil), false)
                case .failure(let error)?: return (.failure(error), false)
                case nil:
                    state.waiter = continuation
                    return (nil, false)
                }
            }
            if wake { room.signal() }
            if let result { continuation.resume(with: result) }
        }
    }
}
