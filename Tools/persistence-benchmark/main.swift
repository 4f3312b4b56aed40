// persistence-benchmark: durable queue appends per backend, with the syncs each write needed, beside
// the disk's raw write+fsync rate. rtdb-bench compares the backends on every workload.
//
// Run in release mode: `swift run -c release persistence-benchmark [directory]`. Figures compare
// backends within one run on one machine; they are never asserted by tests.
import CoreTree
import Dispatch
import Foundation
import Persistence
import PersistenceConformance
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import StorageBench

#if canImport(Glibc)
import Glibc
#endif

let base = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "persistence-benchmark-\(getpid())"
let singleWrites = 2_000
let writers = 8
let writesPerWriter = 500

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func record(_ id: Int64) -> UserWriteRecord {
    UserWriteRecord(writeId: id, path: TreePath(keys: ["bench", ChildKey("w\(id)")]), kind: .overwrite(Node(children: [
        "id": Node(.number(Double(id))), "text": Node(.string(String(repeating: "x", count: 80))),
    ])))
}

func measure(_ backend: StorageBackend) throws -> (single: Double, concurrent: Double, syncsPerWrite: Double) {
    let directory = base + "/" + backend.name
    try? FileManager.default.removeItem(atPath: directory)
    let engine = try StorageEngine(store: try backend.open(directory))
    defer { try? engine.close() }
    let single = ContinuousClock().measure {
        for id in 1...Int64(singleWrites) { try? engine.appendUserWrite(record(id)) }
    }
    let syncsBefore = engine.syncCount
    let concurrent = ContinuousClock().measure {
        ConcurrentWriters.run(writers) { writer in
            for index in 0..<writesPerWriter {
                try? engine.appendUserWrite(record(Int64(100_000 + writer * writesPerWriter + index)))
            }
        }
    }
    let total = writers * writesPerWriter
    let stored = try engine.userWrites().count
    guard stored == singleWrites + total else { throw StorageError(.engine, "\(backend.name): \(stored) writes stored, expected \(singleWrites + total)") }
    return (Double(singleWrites) / seconds(single), Double(total) / seconds(concurrent), Double(engine.syncCount - syncsBefore) / Double(total))
}

try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
print("persistence-benchmark (release build, one run, this machine; directory \(base))")
let raw = (try? DiskWorkload.fsyncRate(directory: base, count: singleWrites)) ?? 0
print(String(format: "raw 128-byte append + fdatasync: %.0f/s", raw))
for backend in [StorageBackend.sqlite, .lmdb, .leveldb, .memory] {
    do {
        let result = try measure(backend)
        print(String(format: "%@: durable appends %.0f/s single-threaded (%.2fx raw fsync), %.0f/s with %d writers (%.2fx raw, %.2fx one writer; %.2f syncs per write)",
                     backend.name, result.single, result.single / raw, result.concurrent, writers, result.concurrent / raw,
                     result.concurrent / result.single, result.syncsPerWrite))
    } catch {
        print("\(backend.name): failed: \(error)")
    }
}
try? FileManager.default.removeItem(atPath: base)
