import Foundation
import Persistence
import Synchronization
import TestSupport

/// The store against ``MemoryStore`` as a model: random operations, concurrent callers, closing.
struct StoreModelChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    /// For three seeds: ~900 random puts, deletes and range deletes applied to the store and to a
    /// `MemoryStore`, reopening the store halfway; full scans compared after every batch, bounded,
    /// reverse and early-stopped scans and reads every 100 batches.
    func matchesModel() throws {
        for seed in UInt64(1)...3 {
            let directory = suite.freshDirectory()
            defer { suite.remove(directory) }
            try crossCheck(seed: seed, directory: directory)
        }
    }

    private func crossCheck(seed: UInt64, directory: String) throws {
        var random = SplitMix64(seed: seed)
        // Bytes that exercise unsigned order and prefixes; keys of 1 to 3 of them.
        let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x7F, 0x80, 0xC3, 0xFE, 0xFF]
        func key() -> [UInt8] { (0..<Int.random(in: 1...3, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? 0 } }
        func value() -> [UInt8] { (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        func range() -> KeyRange {
            let lower = key()
            if Int.random(in: 0..<5, using: &random) == 0 { return KeyRange(from: lower, to: nil) }
            if Int.random(in: 0..<5, using: &random) == 0 { return KeyRange(prefix: lower) }
            return KeyRange(from: lower, to: key())
        }
        func compare(_ store: any OrderedKeyValueStore, _ model: MemoryStore, _ step: Int) throws {
            try require(try StoreTestHelpers.collect(store, .all, reverse: true) == StoreTestHelpers.collect(model, .all, reverse: true), "seed \(seed) step \(step): reverse scans differ")
            for _ in 0..<10 {
                let range = range()
                let reverse = Bool.random(using: &random)
                let limit = Int.random(in: 1...200, using: &random)
                try require(try StoreTestHelpers.collect(store, range, reverse: reverse) == StoreTestHelpers.collect(model, range, reverse: reverse),
                            "seed \(seed) step \(step): scans of \(range) (reverse: \(reverse)) differ")
                try require(try StoreTestHelpers.collect(store, range, reverse: reverse, limit: limit) == StoreTestHelpers.collect(model, range, reverse: reverse, limit: limit),
                            "seed \(seed) step \(step): scans stopped after \(limit) differ")
                let probe = key()
                try require(try store.get(probe) == model.get(probe), "seed \(seed) step \(step): get(\(probe)) differs")
            }
        }

        var store = try suite.openStore(directory)
        defer { try? store.close() }
        let model = MemoryStore()
        var initial = WriteBatch()
        for _ in 0..<400 { initial.put(key(), value()) }
        try store.write(initial, durable: false)
        try model.write(initial, durable: false)
        for step in 0..<500 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6: batch.put(key(), value())
                case 6..<8: batch.delete(key())
                default: batch.deleteRange(range())
                }
            }
            try store.write(batch, durable: Int.random(in: 0..<8, using: &random) == 0)
            try model.write(batch, durable: false)
            if step == 250 {
                try store.close()
                store = try suite.openStore(directory)
            }
            try require(try StoreTestHelpers.collect(store, .all) == StoreTestHelpers.collect(model, .all), "seed \(seed): the stores differ after batch \(step): \(batch.operations)")
            if step % 100 == 0 { try compare(store, model, step) }
        }
        try compare(store, model, 500)
    }

    /// Four threads write, read and scan at once; then a scan body reads and writes the store it
    /// scans (so a store must not hold its lock while `body` runs).
    func concurrentAndReentrant() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let store = try suite.openStore(directory)
        defer { try? store.close() }
        let problems = Mutex<[String]>([])
        ConcurrentWriters.run(4) { worker in
            do {
                for round in 0..<50 {
                    let key: [UInt8] = [1, UInt8(worker), UInt8(round)]
                    var batch = WriteBatch()
                    batch.put(key, [UInt8(round)])
                    try store.write(batch, durable: round % 10 == 0)
                    if try store.get(key) != [UInt8(round)] { problems.withLock { $0.append("worker \(worker) lost \(key)") } }
                    let count = try StoreTestHelpers.collect(store, KeyRange(prefix: [1, UInt8(worker)]), reverse: round % 2 == 0).count
                    if count != round + 1 { problems.withLock { $0.append("worker \(worker) scanned \(count) of \(round + 1)") } }
                }
            } catch {
                problems.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        try require(problems.withLock { $0.isEmpty }, "concurrent use failed: \(problems.withLock { $0.prefix(3) })")
        var copied = 0
        try store.scan(KeyRange(prefix: [1]), reverse: false) { key, value in
            try require(try store.get(key) == value, "a read inside a scan differs")
            var batch = WriteBatch()
            batch.put([2] + key.dropFirst(), value)
            try store.write(batch, durable: false)
            copied += 1
            return true
        }
        try require(copied == 200 && (try StoreTestHelpers.collect(store, KeyRange(prefix: [2])).count) == 200, "a scan that writes copied \(copied) of 200")
    }

    /// After `close`, every call throws `closed`; closing twice is harmless.
    func closed() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let store = try suite.openStore(directory)
        try store.close()
        try store.close()
        for (name, call) in [("get", { _ = try store.get([1]) }), ("scan", { try store.scan(.all, reverse: false) { _, _ in true } }),
                             ("write", { try store.write(WriteBatch(), durable: false) })] as [(String, () throws -> Void)] {
            do {
                try call()
                throw ConformanceFailure("\(name) on a closed store succeeded")
            } catch let error as StorageError {
                guard case .closed = error.code else { throw ConformanceFailure("\(name) on a closed store failed with \(error), not closed") }
            }
        }
    }
}
