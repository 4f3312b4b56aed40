import Foundation

/// Runs `work` on a thread of its own and awaits its result.
///
/// Use it for work that blocks (fsync-heavy setup, large file copies, waiting on a child
/// process): Swift's cooperative pool has one thread per core (two here), so a blocked pool
/// thread stalls every other test running at the same time, including in-process servers.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: Result { try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
    return try result.get()
}
