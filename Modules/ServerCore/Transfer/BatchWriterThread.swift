import Dispatch
import Foundation
import Persistence
import Synchronization

/// A thread of its own that writes an import's batches into the store while the importing
/// thread parses the next ones, so reading JSON and writing rows use two cores.
///
/// At most ``depth`` batches wait at once (memory stays bounded); ``submit(_:)`` blocks while
/// that many do. A failed write stops the thread, and every later call throws its error.
///
/// A written batch goes back to the submitting thread, which frees its rows and fills it again:
/// the rows were allocated there, and with glibc's allocator, millions of small blocks freed by
/// another thread than the one that allocated them made both threads wait on the allocator's
/// lock (a third of the parsing thread's time, measured with perf on a 200 MB import); reusing
/// the batch's large buffer also spares the allocator a large free per batch.
final class BatchWriterThread: Sendable {
    /// How many batches may wait for the thread.
    static let depth = 2

    private enum Job: Sendable {
        case write(WriteBatch, durable: Bool)
        /// Signalled once every job before it is done.
        case barrier(DispatchSemaphore)
        case stop
    }

    private struct State {
        var jobs: [Job] = []
        /// Written batches, for the submitting thread to free.
        var written: [WriteBatch] = []
        var failure: (any Error)?
        var stopped = false
    }

    private let store: any OrderedKeyValueStore
    private let state = Mutex(State())
    /// Free places in the queue.
    private let places = DispatchSemaphore(value: BatchWriterThread.depth)
    /// Jobs waiting.
    private let waiting = DispatchSemaphore(value: 0)

    /// Starts the thread, writing into `store`.
    init(store: any OrderedKeyValueStore) {
        self.store = store
        let thread = Thread { [self] in run() }
        thread.name = "rtdb-import-writer"
        thread.start()
    }

    private func run() {
        while true {
            waiting.wait()
            let job = state.withLock { $0.jobs.removeFirst() }
            switch job {
            case .write(let batch, let durable):
                let failed = state.withLock { $0.failure != nil }
                if !failed {
                    do {
                        try store.write(batch, durable: durable)
                    } catch {
                        state.withLock { $0.failure = error }
                    }
                }
                state.withLock { $0.written.append(batch) }
                places.signal()
            case .barrier(let done):
                done.signal()
            case .stop:
                return
            }
        }
    }

    private func enqueue(_ job: Job) {
        state.withLock { $0.jobs.append(job) }
        waiting.signal()
    }

    private func rethrowFailure() throws {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Queues `batch`, waiting while ``depth`` batches wait already.
    ///
    /// - Returns: an empty batch to fill next: a written one, its rows freed and its room kept,
    ///   when there is one.
    /// - Throws: the error of an earlier write that failed.
    func submit(_ batch: WriteBatch, durable: Bool = false) throws -> WriteBatch {
        try rethrowFailure()
        places.wait()
        enqueue(.write(batch, durable: durable))
        return freeWritten() ?? WriteBatch()
    }

    /// Frees the rows of the batches written so far, on the calling thread, and returns one of
    /// them, emptied.
    @discardableResult
    private func freeWritten() -> WriteBatch? {
        var written = state.withLock { state in
            defer { state.written = [] }
            return state.written
        }
        guard var reused = written.popLast() else { return nil }
        written.removeAll()
        reused.removeAll(keepingCapacity: true)
        return reused
    }

    /// Returns once every batch queued so far is written (not to be called once stopped).
    ///
    /// - Throws: the error of a write that failed.
    func drain() throws {
        let done = DispatchSemaphore(value: 0)
        enqueue(.barrier(done))
        done.wait()
        freeWritten()
        try rethrowFailure()
    }

    /// Writes what is queued and ends the thread; calling it again does nothing more.
    ///
    /// - Throws: the error of a write that failed.
    func stop() throws {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first {
            try? drain()
            enqueue(.stop)
        }
        try rethrowFailure()
    }
}
