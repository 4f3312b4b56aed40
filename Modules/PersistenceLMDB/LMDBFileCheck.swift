import Foundation
import Persistence

/// Checks an LMDB data file before it is mapped, so a truncated or overwritten file is refused
/// with ``StorageError/Code-swift.enum/corrupt`` instead of crashing the process (LMDB maps the
/// file and trusts it: a page past the end of a truncated file is a SIGBUS, a wild page number a
/// SIGSEGV).
///
/// It reads the two meta pages (LMDB's on-disk format: a 16-byte page header, then the meta's
/// magic, version, map address and size, two database records of 48 bytes, the last page number
/// and the transaction id), takes the valid one with the newest transaction, and checks that the
/// file holds every page it names; ``LMDBTreeCheck`` then walks both trees.
enum LMDBFileCheck {
    private static let magic: UInt32 = 0xBEEF_C0DE
    private static let dataVersion: UInt32 = 1
    private static let pageHeaderSize = 16
    /// The largest map a sound file asks for (64 TiB): more is a flipped bit, and LMDB would try to map it.
    private static let largestMap: UInt64 = 1 << 46

    private struct Meta {
        let pageSize: UInt64
        let lastPage: UInt64
        let transaction: UInt64
        let mapSize: UInt64
        let free: LMDBTreeCheck.DatabaseRecord
        let main: LMDBTreeCheck.DatabaseRecord
    }

    /// Throws when the data file in `directory` exists and is damaged; returns for a sound file
    /// and for a directory with no data file yet (a new environment).
    ///
    /// - Parameter walkingTrees: whether to walk both trees after the meta pages (``LMDBTreeCheck``,
    ///   a read of the whole file); without, only the meta pages and the file's length are checked.
    /// - Returns: The pages the newest meta page names (0 when there is no data file).
    @discardableResult
    static func verify(directory: String, walkingTrees: Bool = true) throws -> UInt64 {
        let path = (directory as NSString).appendingPathComponent("data.mdb")
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 0)
        guard size > 0 else {
            throw corrupt("the data file is empty, though LMDB writes its meta pages when it creates one")
        }
        let first = try handle.read(upToCount: 4096) ?? Data()
        guard let meta0 = meta(in: first) else {
            throw corrupt("the first page is not an LMDB meta page")
        }
        var metas = [meta0]
        if size >= meta0.pageSize * 2 {
            try handle.seek(toOffset: meta0.pageSize)
            if let meta1 = meta(in: try handle.read(upToCount: 4096) ?? Data()), meta1.pageSize == meta0.pageSize {
                metas.append(meta1)
            }
        }
        let newest = metas.max { $0.transaction < $1.transaction }!
        let needed = (newest.lastPage + 1).multipliedReportingOverflow(by: newest.pageSize)
        guard !needed.overflow, size >= needed.partialValue else {
            throw corrupt("the data file has \(size) bytes but its meta page names \(newest.lastPage + 1) pages of \(newest.pageSize)")
        }
        guard newest.mapSize <= largestMap else {
            throw corrupt("the meta page asks for a map of \(newest.mapSize) bytes")
        }
        if walkingTrees {
            try LMDBTreeCheck.verify(descriptor: handle.fileDescriptor, pageSize: newest.pageSize, lastPage: newest.lastPage,
                                     free: newest.free, main: newest.main)
        }
        return newest.lastPage + 1
    }

    /// The meta record of a page, when the page holds a valid one.
    private static func meta(in page: Data) -> Meta? {
        let bytes = [UInt8](page)
        let base = pageHeaderSize
        guard bytes.count >= base + 136 else { return nil }
        func u32(_ offset: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[base + offset + $1]) << (8 * UInt32($1)) }
        }
        func u64(_ offset: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[base + offset + $1]) << (8 * UInt64($1)) }
        }
        guard u32(0) == magic, u32(4) == dataVersion else { return nil }
        let pageSize = UInt64(u32(24))  // the free database's md_pad holds the page size
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[base + offset]) | UInt16(bytes[base + offset + 1]) << 8 }
        func record(_ offset: Int) -> LMDBTreeCheck.DatabaseRecord {
            LMDBTreeCheck.DatabaseRecord(flags: u16(offset + 4), depth: u16(offset + 6), branchPages: u64(offset + 8),
                                         leafPages: u64(offset + 16), overflowPages: u64(offset + 24),
                                         entries: u64(offset + 32), root: u64(offset + 40))
        }
        return Meta(pageSize: pageSize, lastPage: u64(120), transaction: u64(128), mapSize: u64(16),
                    free: record(24), main: record(72))
    }

    private static func corrupt(_ detail: String) -> StorageError {
        StorageError(.corrupt, "the LMDB store is damaged: \(detail); move the directory aside to start empty, or restore it from a backup",
                     backend: LMDBStore.backendName)
    }
}
