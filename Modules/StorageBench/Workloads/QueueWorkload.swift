import CoreTree
import Foundation
import Persistence
import Synchronization

/// Durable write-queue appends: one writer, or ``BenchScale/writers`` at once.
enum QueueWorkload {
    /// The queued write number `id`: a set of a small object, ~130 bytes stored.
    static func record(_ id: Int64) -> UserWriteRecord {
        UserWriteRecord(writeId: id, path: TreePath(keys: ["bench", ChildKey("w\(id)")]), kind: .overwrite(Node(children: [
            "id": Node(.number(Double(id))),
            "text": Node(.string(String(repeating: "x", count: 80))),
        ])))
    }

    /// Appends through the engine (checksums, group commit); returns writes per second.
    static func ours(_ backend: StorageBackend, directory: String, scale: BenchScale, concurrent: Bool) throws -> Double {
        let engine = try StorageEngine(store: try backend.open(directory))
        defer { try? engine.close() }
        let records = (0...Int64(max(scale.appends, BenchScale.writers * scale.appendsPerWriter))).map(record)
        let (total, seconds) = try run(scale: scale, concurrent: concurrent) { id in try engine.appendUserWrite(records[Int(id)]) }
        let stored = try engine.userWrites().count
        guard stored == total else { throw BenchError("\(backend.name): \(stored) queued writes stored, \(total) appended") }
        return Double(total) / seconds
    }

    /// The same rows put straight through the C library, each durable; returns writes per second.
    static func raw(_ name: String, directory: String, scale: BenchScale, concurrent: Bool) throws -> Double? {
        guard let engine = try RawEngines.open(name, directory: directory) else { return nil }
        defer { engine.close() }
        let batches = (0...Int64(max(scale.appends, BenchScale.writers * scale.appendsPerWriter))).map { id in
            let row = StorageEngine.userWriteRow(record(id))
            var batch = WriteBatch()
            batch.put(row.key, row.value)
            return batch
        }
        let (total, seconds) = try run(scale: scale, concurrent: concurrent) { id in try engine.write(batches[Int(id)], durable: true) }
        return Double(total) / seconds
    }

    /// Runs `append` for each id, on one thread or several; returns the count and the seconds.
    private static func run(scale: BenchScale, concurrent: Bool, _ append: @escaping @Sendable (Int64) throws -> Void) throws -> (Int, Double) {
        if !concurrent {
            let seconds = try measureSeconds {
                for id in 1...Int64(scale.appends) { try append(id) }
            }
            return (scale.appends, seconds)
        }
        let failures = FirstError()
        let perWriter = scale.appendsPerWriter
        let seconds = measureSeconds {
            Threads.run(BenchScale.writers) { writer in
                for index in 0..<perWriter {
                    do { try append(Int64(1 + writer * perWriter + index)) } catch { failures.record(error) }
                }
            }
        }
        if let error = failures.error { throw error }
        return (BenchScale.writers * perWriter, seconds)
    }
}

/// The first error any thread hit.
final class FirstError: Sendable {
    private let first = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { first.withLock { if $0 == nil { $0 = error } } }
    var error: (any Error)? { first.withLock { $0 } }
}

/// The disk's own limit: 128-byte appends to a plain file, each followed by `fdatasync`.
public enum DiskWorkload {
    /// Writes per second of `count` appends in a file made (and removed) in `directory`.
    public static func fsyncRate(directory: String, count: Int) throws -> Double {
        let path = directory + "/raw-fsync"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))", code: .io) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let chunk = [UInt8](repeating: 0x61, count: 128)
        let seconds = measureSeconds {
            for _ in 0..<count {
                _ = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                fdatasync(descriptor)
            }
        }
        return Double(count) / seconds
    }
}
