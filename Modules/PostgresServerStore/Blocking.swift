import Dispatch
import Synchronization

/// Runs async PostgreSQL work for the synchronous ``ServerCore/ServerStore`` calls.
///
/// The server makes those calls on threads of its own (a namespace opens on a dispatch thread),
/// never on Swift's cooperative pool, so waiting here blocks no task.
enum Blocking {
    static func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
