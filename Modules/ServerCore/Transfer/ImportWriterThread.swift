import CoreTree
import Dispatch
import Foundation
import Persistence
import Synchronization

/// A thread of its own that writes an import's rows into the store while the importing thread
/// parses on, so reading JSON and writing rows use two cores.
///
/// The importing thread hands it either rows it made (a batch) or, when the thread has nothing
/// queued, the pieces themselves, which the thread turns into rows before writing them: where
/// writing is cheap (LMDB, LevelDB), the thread takes a share of the encoding; where it is not
/// (SQLite), the importing thread does it all. At most ``depth`` jobs wait at once (memory stays
/// bounded); a submit blocks while that many do. A failed write stops the thread, and every
/// later call throws its error.
///
/// Everything goes back to be freed by the thread that allocated it: the importing thread's
/// batches (which it refills) and pieces. With glibc's allocator, millions of small blocks freed
/// by another thread than the one that allocated them made both threads wait on the allocator's
/// lock (a third of the parsing thread's time, measured with perf on a 200 MB import).
final class ImportWriterThread: Sendable {
    /// How many jobs may wait for the thread.
    static let depth = 2

    private enum Job: Sendable {
        case rows(WriteBatch, durable: Bool)
        case pieces([JSONStreamItem])
        /// Signalled once every job before it is done.
        case barrier(DispatchSemaphore)
        case stop
    }

    private struct State {
        var jobs: [Job] = []
        /// Written batches and encoded pieces, for the importing thread to free.
        var written: [WriteBatch] = []
        var encoded: [[JSONStreamItem]] = []
        /// Rows this thread made from pieces, and their bytes.
        var rowCount = 0
        var rowBytes = 0
        var failure: (any Error)?
        var stopped = false
    }

    private let store: any OrderedKeyValueStore
    private let serverTime: Int64
    private let state = Mutex(State())
    /// Free places in the queue.
    private let places = DispatchSemaphore(value: ImportWriterThread.depth)
    /// Jobs waiting.
    private let waiting = DispatchSemaphore(value: 0)

    /// Starts the thread, writing into `store` (the rows go under the checksums, sealed), with
    /// server values resolved to `serverTime`.
    init(store: any OrderedKeyValueStore, serverTime: Int64) {
        self.store = store
        self.serverTime = serverTime
        let thread = Thread { [self] in run() }
        thread.name = "rtdb-import-writer"
        thread.start()
    }

    private func run() {
        // The thread's own batch, made from pieces and refilled: allocated and freed here.
        var ownBatch = WriteBatch()
        while true {
            waiting.wait()
            let job = state.withLock { $0.jobs.removeFirst() }
            let failed = state.withLock { $0.failure != nil }
            switch job {
            case .rows(let batch, let durable):
                if !failed { attempt { try store.write(batch, durable: durable) } }
                state.withLock { $0.written.append(batch) }
                places.signal()
            case .pieces(let pieces):
                if !failed {
                    attempt {
                        var bytes = 0
                        for piece in pieces { try ImportRowWriter.addRows(of: piece, serverTime: serverTime, to: &ownBatch, bytes: &bytes) }
                        try store.write(ownBatch, durable: false)
                        let rows = ownBatch.operations.count
                        state.withLock {
                            $0.rowCount += rows
                            $0.rowBytes += bytes
                        }
                    }
                    ownBatch.removeAll(keepingCapacity: true)
                }
                state.withLock { $0.encoded.append(pieces) }
                places.signal()
            case .barrier(let done):
                done.signal()
            case .stop:
                return
            }
        }
    }

    private func attempt(_ work: () throws -> Void) {
        do {
            try work()
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    private func enqueue(_ job: Job) {
        state.withLock { $0.jobs.append(job) }
        waiting.signal()
    }

    private func rethrowFailure() throws {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Whether the thread has nothing queued: pieces handed over now are encoded at once.
    var isIdle: Bool { state.withLock { $0.jobs.isEmpty } }

    /// Rows the thread made from pieces so far, and their bytes (keys and values).
    var encodedRows: (count: Int, bytes: Int) { state.withLock { ($0.rowCount, $0.rowBytes) } }

    /// Queues `batch` (sealed rows), waiting while ``depth`` jobs wait already.
    ///
    /// - Returns: an empty batch to fill next: a written one, its rows freed and its room kept,
    ///   when there is one.
    /// - Throws: the error of an earlier write that failed.
    func submit(_ batch: WriteBatch, durable: Bool = false) throws -> WriteBatch {
        try rethrowFailure()
        places.wait()
        enqueue(.rows(batch, durable: durable))
        return freeReturned() ?? WriteBatch()
    }

    /// Queues pieces for the thread to turn into rows and write (each one that replaces nothing
    /// and whose path fits), waiting while ``depth`` jobs wait already.
    ///
    /// - Throws: the error of an earlier write that failed.
    func submit(pieces: [JSONStreamItem]) throws {
        try rethrowFailure()
        places.wait()
        enqueue(.pieces(pieces))
        freeReturned()
    }

    /// Frees what came back (pieces encoded, rows of written batches), on the calling thread,
    /// and returns one written batch, emptied.
    @discardableResult
    private func freeReturned() -> WriteBatch? {
        var (written, encoded) = state.withLock { state in
            defer {
                state.written = []
                state.encoded = []
            }
            return (state.written, state.encoded)
        }
        encoded.removeAll()
        guard var reused = written.popLast() else { return nil }
        written.removeAll()
        reused.removeAll(keepingCapacity: true)
        return reused
    }

    /// Returns once every job queued so far is done (not to be called once stopped).
    ///
    /// - Throws: the error of a write that failed.
    func drain() throws {
        let done = DispatchSemaphore(value: 0)
        enqueue(.barrier(done))
        done.wait()
        freeReturned()
        try rethrowFailure()
    }

    /// Finishes what is queued and ends the thread; calling it again does nothing more.
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
