import Foundation
import Persistence
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The ``OrderedKeyValueStore`` contract, checked against a plain sorted-dictionary model.
struct StoreContractChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    private func withStore(_ body: (any OrderedKeyValueStore, String) throws -> Void) throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let store = try suite.openStore(directory)
        defer { try? store.close() }
        try body(store, directory)
    }

    /// Random keys that stress byte order: empty-ish, 0x00, 0xFF, shared prefixes, long keys.
    private static func randomKeys(_ count: Int, _ random: inout SplitMix64) -> [[UInt8]] {
        let alphabet: [UInt8] = [0x00, 0x01, 0x2F, 0x30, 0x61, 0x62, 0x7F, 0x80, 0xFE, 0xFF]
        var keys: Set<[UInt8]> = []
        while keys.count < count {
            let length = Int(random.next() % 12) + 1
            keys.insert((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
        }
        keys.insert(Array(repeating: 0x61, count: 300))
        return Array(keys)
    }

    private static func scanAll(_ store: any OrderedKeyValueStore, _ range: KeyRange = .all, reverse: Bool = false) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try store.scan(range, reverse: reverse) { key, _ in
            keys.append(key)
            return true
        }
        return keys
    }

    func ordering() throws {
        try withStore { store, _ in
            var random = SplitMix64(seed: 11)
            let keys = StoreContractChecks.randomKeys(400, &random)
            var batch = WriteBatch()
            for key in keys { batch.put(key, Array(key.reversed())) }
            try store.write(batch, durable: false)
            let expected = keys.sorted { $0.lexicographicallyPrecedes($1) }
            let forward = try StoreContractChecks.scanAll(store)
            try require(forward == expected, "forward scan is not in unsigned byte order (\(forward.count) keys, expected \(expected.count))")
            let backward = try StoreContractChecks.scanAll(store, reverse: true)
            try require(backward == expected.reversed(), "reverse scan is not the forward scan reversed")
            for key in keys.prefix(50) {
                try require(try store.get(key) == Array(key.reversed()), "get(\(key)) does not return the value put")
            }
            try require(try store.get([0x99, 0x99]) == nil, "get of a missing key is not nil")
        }
    }

    func ranges() throws {
        try withStore { store, _ in
            var random = SplitMix64(seed: 12)
            let keys = StoreContractChecks.randomKeys(300, &random)
            var batch = WriteBatch()
            for key in keys { batch.put(key, [1]) }
            try store.write(batch, durable: false)
            let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
            for _ in 0..<60 {
                let a = sorted[Int(random.next() % UInt64(sorted.count))]
                let b = random.next() % 4 == 0 ? nil : sorted[Int(random.next() % UInt64(sorted.count))]
                let range = KeyRange(from: a, to: b)
                let expected = sorted.filter { range.contains($0) }
                try require(try StoreContractChecks.scanAll(store, range) == expected, "scan of [\(a), \(b.map { "\($0)" } ?? "end")) differs")
                try require(try StoreContractChecks.scanAll(store, range, reverse: true) == expected.reversed(), "reverse bounded scan differs")
            }
            for prefix: [UInt8] in [[0x61], [0xFF], [0x00], [0x61, 0x61], [0xFF, 0xFF]] {
                let expected = sorted.filter { $0.starts(with: prefix) }
                try require(try StoreContractChecks.scanAll(store, KeyRange(prefix: prefix)) == expected, "prefix scan of \(prefix) differs")
            }
            var seen = 0
            try store.scan(.all, reverse: false) { _, _ in
                seen += 1
                return seen < 5
            }
            try require(seen == 5, "a scan did not stop when its body returned false")
        }
    }

    func batches() throws {
        try withStore { store, _ in
            var model: [[UInt8]: [UInt8]] = [:]
            var random = SplitMix64(seed: 13)
            let keys = StoreContractChecks.randomKeys(200, &random)
            for round in 0..<40 {
                var batch = WriteBatch()
                for _ in 0..<20 {
                    let key = keys[Int(random.next() % UInt64(keys.count))]
                    switch random.next() % 6 {
                    case 0:
                        batch.delete(key)
                        model[key] = nil
                    case 1:
                        let other = keys[Int(random.next() % UInt64(keys.count))]
                        let range = key.lexicographicallyPrecedes(other) ? KeyRange(from: key, to: other) : KeyRange(prefix: key)
                        batch.deleteRange(range)
                        for existing in model.keys where range.contains(existing) { model[existing] = nil }
                    default:
                        let value = [UInt8(round), UInt8(truncatingIfNeeded: random.next())]
                        batch.put(key, value)
                        model[key] = value
                    }
                }
                try store.write(batch, durable: round % 5 == 0)
                var actual: [[UInt8]: [UInt8]] = [:]
                try store.scan(.all, reverse: false) { key, value in
                    actual[key] = value
                    return true
                }
                try require(actual == model, "after batch \(round) the store holds \(actual.count) keys, the in-order model \(model.count)")
            }
        }
    }

    func reopen() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        var batch = WriteBatch()
        for index in 0..<1000 { batch.put(Array("key\(index)".utf8), Array(repeating: UInt8(index % 251), count: 100)) }
        var store = try suite.openStore(directory)
        try store.write(batch, durable: true)
        var more = WriteBatch()
        more.deleteRange(KeyRange(prefix: Array("key1".utf8)))
        try store.write(more, durable: false)
        try store.close()
        store = try suite.openStore(directory)
        defer { try? store.close() }
        let keys = try StoreContractChecks.scanAll(store)
        try require(keys.count == 1000 - 111, "after reopen \(keys.count) keys remain, expected \(1000 - 111)")
        try require(try store.get(Array("key5".utf8)) == Array(repeating: 5, count: 100), "a value changed across reopen")
    }

    func inUse() throws {
        if suite.outlivesProcess { try inUseByAnotherProcess() }
        try withStore { _, directory in
            do {
                let second = try suite.openStore(directory)
                try? second.close()
                throw ConformanceFailure("a second open of the same directory succeeded")
            } catch let error as StorageError {
                guard case .inUse = error.code else { throw ConformanceFailure("a second open failed with \(error), not 'in use'") }
                if suite.outlivesProcess {
                    try require(error.message.contains("process \(ProcessInfo.processInfo.processIdentifier)"),
                                "the 'in use' message does not name the owning process: \(error.message)")
                }
            }
        }
    }

    /// A store held by a child process: opening it here names that process.
    private func inUseByAnotherProcess() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let (process, output) = try CrashChecks.launch(["append", suite.backend.name, directory, "1"])
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Wait until the child has the store open (its first append returned).
        _ = output.fileHandleForReading.availableData
        do {
            let store = try suite.openStore(directory)
            try? store.close()
            throw ConformanceFailure("the store was opened while process \(process.processIdentifier) had it open")
        } catch let error as StorageError {
            guard case .inUse(pid: let pid) = error.code, pid == process.processIdentifier else {
                throw ConformanceFailure("opening a store held by process \(process.processIdentifier) failed with \(error)")
            }
            try require(error.message.contains("in use by process \(process.processIdentifier)"), "the message does not name the process: \(error.message)")
        }
    }
}
