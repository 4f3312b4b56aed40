import CoreTree
@testable import Persistence
import Testing

/// Storage errors keep what caused them as `underlyingError` and say in words what to do, instead
/// of pasting the cause's description into the message.
@Suite("storage error shape")
struct StorageErrorShapeTests {
    @Test("a queued write that is not JSON keeps the parser's error as its cause")
    func unreadableQueuedWrite() throws {
        let error = try #require(throws: StorageError.self) {
            try UserWriteRecord.decode(writeId: 7, Array("S\n/a\n{not json".utf8))
        }
        #expect(error.code == .invalidRecord)
        #expect(error.underlyingError is CoreTreeError)
        #expect(error.message.contains("queued write 7"), "\(error.message)")
        #expect(error.message.contains("StoreRecovery"), "the message says what to do: \(error.message)")
        #expect(!error.message.contains("CoreTreeError"), "the cause is kept, not pasted: \(error.message)")
    }

    @Test("a queued write with no header has no cause below it")
    func headerlessQueuedWrite() throws {
        let error = try #require(throws: StorageError.self) { try UserWriteRecord.decode(writeId: 3, Array("".utf8)) }
        #expect(error.code == .invalidRecord)
        #expect(error.underlyingError == nil)
    }

    @Test("two storage errors are equal when their code and message are, whatever their causes")
    func equality() {
        let first = StorageError(.io, "the disk went away", underlying: CoreTreeError(.malformedJSON, "x"))
        let second = StorageError(.io, "the disk went away")
        #expect(first == second)
        #expect(first != StorageError(.corrupt, "the disk went away"))
    }

    @Test("a cache size out of range is a coded error")
    func cachePolicyError() throws {
        let error = try #require(throws: CachePolicyError.self) { try CachePolicy(maxBytes: 1) }
        #expect(error.code == .sizeOutOfRange)
        #expect(error.message == error.description)
        #expect(error.underlyingError == nil)
    }
}
