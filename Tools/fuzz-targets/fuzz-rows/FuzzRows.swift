import CoreTree
import FuzzSupport
import Persistence
import QueryEngine

/// Stored-row decoding, shared by every backend (SQLite, LMDB, LevelDB and the embedded server
/// store all keep `StorageEngine`'s rows behind `ChecksummedStore`). The first byte picks the
/// row kind; the rest is the row.
///
/// Properties: a row that decodes encodes to a row that decodes to the same value (cache leaves
/// and overflow subtrees, queued writes, tracked queries); a row that does not decode is refused
/// with a `StorageError` of code `invalidRecord`; a sealed row opens to its value, and the same
/// row with any one bit flipped is refused as `corrupt`.
public func checkRows(_ input: [UInt8]) {
    guard let control = input.first else { return }
    let row = Array(input.dropFirst())
    switch control % 4 {
    case 0: checkCacheRow(row)
    case 1: checkWriteRecord(row)
    case 2: checkTrackedQuery(row)
    default: checkSealedRow(row, flip: Int(control >> 2))
    }
}

func requireInvalidRecord(_ error: any Error, _ what: String) {
    guard let error = error as? StorageError else { fatalError("\(what) threw \(error), not a StorageError") }
    fuzzRequire(error.code == .invalidRecord, "\(what) was refused as \(error.code), not invalidRecord")
}

func checkCacheRow(_ row: [UInt8]) {
    let node: Node
    do {
        node = try CacheRows.decode(row)
    } catch {
        requireInvalidRecord(error, "a cache row")
        return
    }
    // As the store writes them: a leaf row holds a leaf without its priority (a priority is a row
    // of its own, `CacheRows.forEachLeaf`); anything else, a prioritized leaf included, is an
    // overflow row. (A decoded `{".value":1,".priority":"p"}` written as a leaf row lost its
    // priority: the harness's choice, not the store's.)
    let encoded = node.isLeaf && node.priority == nil ? CacheRows.encodeLeaf(node) : CacheRows.encodeSubtree(node)
    do {
        let again = try CacheRows.decode(encoded)
        fuzzRequire(again == node, "cache row \(node.jsonString(format: .export)) came back as \(again.jsonString(format: .export))")
        let reencoded = again.isLeaf && again.priority == nil ? CacheRows.encodeLeaf(again) : CacheRows.encodeSubtree(again)
        fuzzRequire(reencoded == encoded, "a cache row's encoding is not stable: \(String(decoding: encoded, as: UTF8.self))")
    } catch {
        fatalError("the encoding \(String(decoding: encoded, as: UTF8.self)) of a cache row does not decode: \(error)")
    }
}

func checkWriteRecord(_ row: [UInt8]) {
    let record: Persistence.UserWriteRecord
    do {
        record = try Persistence.UserWriteRecord.decode(writeId: 7, row)
    } catch {
        requireInvalidRecord(error, "a queued write")
        return
    }
    let encoded = record.encoded()
    do {
        let again = try Persistence.UserWriteRecord.decode(writeId: 7, encoded)
        fuzzRequire(again == record, "queued write \(String(decoding: encoded, as: UTF8.self)) came back different")
        fuzzRequire(again.encoded() == encoded, "a queued write's encoding is not stable: \(String(decoding: encoded, as: UTF8.self))")
    } catch {
        fatalError("the encoding \(String(decoding: encoded, as: UTF8.self)) of a queued write does not decode: \(error)")
    }
}

func checkTrackedQuery(_ row: [UInt8]) {
    let query: TrackedQuery
    do {
        query = try TrackedQuery.decode(id: 3, row)
    } catch {
        requireInvalidRecord(error, "a tracked query")
        return
    }
    let encoded = query.encoded()
    do {
        let again = try TrackedQuery.decode(id: 3, encoded)
        // The query compares by its canonical identifier: a row without "vf" reads as a query
        // without an explicit view-from, which the encoding then spells out.
        fuzzRequire(
            again.id == query.id && again.lastUse == query.lastUse && again.isComplete == query.isComplete
                && again.isActive == query.isActive && again.isPinned == query.isPinned && again.query.path == query.query.path
                && again.query.params.identifier == query.query.params.identifier,
            "tracked query \(String(decoding: encoded, as: UTF8.self)) came back different")
        fuzzRequire(again.encoded() == encoded, "a tracked query's encoding is not stable: \(String(decoding: encoded, as: UTF8.self))")
    } catch {
        fatalError("the encoding \(String(decoding: encoded, as: UTF8.self)) of a tracked query does not decode: \(error)")
    }
}

/// The row's first byte is the key's length (mod 16); the key and value follow.
func checkSealedRow(_ row: [UInt8], flip: Int) {
    guard let first = row.first else { return }
    let keyLength = min(Int(first % 16), row.count - 1)
    let key = Array(row[1..<(1 + keyLength)])
    let value = Array(row[(keyLength + 1)...])
    let sealed = ChecksummedStore.seal(key: key, value: value)
    do {
        let opened = try ChecksummedStore.open(key: key, sealed: sealed)
        fuzzRequire(opened == value, "a sealed row opened to a different value")
    } catch {
        fatalError("a row sealed here does not open: \(error)")
    }
    var damaged = sealed
    let bit = (flip * 131) % (damaged.count * 8)
    damaged[bit / 8] ^= 1 << UInt8(bit % 8)
    do {
        _ = try ChecksummedStore.open(key: key, sealed: damaged)
        fatalError("a row with bit \(bit) flipped opened")
    } catch let error as StorageError {
        fuzzRequire(error.code == .corrupt, "a damaged row was refused as \(error.code), not corrupt")
    } catch {
        fatalError("a damaged row threw \(error), not a StorageError")
    }
}
