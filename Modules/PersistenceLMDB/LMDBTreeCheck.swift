import Foundation
import Persistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks both B+trees of an LMDB data file (the free-page database and the main database) with
/// bounds-checked reads before LMDB maps the file, so a flipped bit is refused instead of
/// crashing the process or serving part of the data.
///
/// LMDB follows page numbers and node offsets from the file without checking them: a wild page
/// number is a SIGSEGV, a shortened node count silently hides rows. This check reads every page
/// the newest meta page reaches (LMDB's on-disk format: a 16-byte page header of page number,
/// flags, and lower and upper bounds; 2-byte node offsets after it; nodes of an 8-byte header,
/// the key and the data) and requires that
/// - every page number lies inside the file, is reached once, and matches the number in its header;
/// - every page has the type its place in the tree needs, and all leaves lie at the recorded depth;
/// - every node lies inside its page without overlapping another;
/// - keys ascend strictly and each subtree's keys lie between its parent's separators;
/// - the pages and entries counted match the counts in the meta page;
/// - values kept on overflow pages point at overflow pages large enough to hold them;
/// - the free list names only pages inside the file.
///
/// It reads the whole file once, so opening a store costs one sequential read of its data.
struct LMDBTreeCheck {
    /// One database record of a meta page (LMDB's `MDB_db`).
    struct DatabaseRecord {
        let flags: UInt16
        let depth: UInt16
        let branchPages: UInt64
        let leafPages: UInt64
        let overflowPages: UInt64
        let entries: UInt64
        let root: UInt64
    }

    static let invalidPage = UInt64.max
    private static let pageHeaderSize = 16
    private static let nodeHeaderSize = 8
    private static let branchFlag: UInt16 = 0x01
    private static let leafFlag: UInt16 = 0x02
    private static let overflowFlag: UInt16 = 0x04
    /// The flags that give a page its type (branch, leaf, overflow, meta, leaf2, sub-page).
    private static let typeFlags: UInt16 = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40
    private static let bigDataFlag: UInt16 = 0x01
    /// LMDB refuses longer keys at this page size and older builds; nothing longer is ever written.
    private static let longestKey = 511
    /// Deeper than this, LMDB's cursor stack (32 entries) overflows.
    private static let deepestTree = 32

    private let descriptor: Int32
    private let pageSize: Int
    private let lastPage: UInt64
    /// Pages already reached, one bit each: a page reached twice is a cycle or a shared page.
    private var reached: [UInt64]

    /// Checks the free-page and main trees the meta page describes, in the open file `descriptor`.
    static func verify(descriptor: Int32, pageSize: UInt64, lastPage: UInt64,
                       free: DatabaseRecord, main: DatabaseRecord) throws {
        var check = LMDBTreeCheck(descriptor: descriptor, pageSize: Int(pageSize), lastPage: lastPage)
        try check.walk(free, name: "free-page", isFreeList: true)
        try check.walk(main, name: "main", isFreeList: false)
    }

    private init(descriptor: Int32, pageSize: Int, lastPage: UInt64) {
        self.descriptor = descriptor
        self.pageSize = pageSize
        self.lastPage = lastPage
        reached = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
    }

    // MARK: - Trees

    /// What a walk of one tree counted.
    private struct Tally {
        var branchPages: UInt64 = 0
        var leafPages: UInt64 = 0
        var overflowPages: UInt64 = 0
        var entries: UInt64 = 0
    }

    private mutating func walk(_ record: DatabaseRecord, name: String, isFreeList: Bool) throws {
        // The free-page database keeps integer keys (MDB_INTEGERKEY); the unnamed main database,
        // opened without flags, keeps none. Other flags would change how LMDB reads the tree.
        let expectedFlags: UInt16 = isFreeList ? 0x08 : 0
        guard record.flags == expectedFlags else {
            throw Self.corrupt("the \(name) database records flags \(record.flags) instead of \(expectedFlags)")
        }
        guard record.root != Self.invalidPage else {
            guard record.entries == 0, record.depth == 0, record.branchPages == 0, record.leafPages == 0,
                  record.overflowPages == 0 else {
                throw Self.corrupt("the \(name) database has no root page but records \(record.entries) entries")
            }
            return
        }
        guard record.depth >= 1, Int(record.depth) <= Self.deepestTree else {
            throw Self.corrupt("the \(name) database records a depth of \(record.depth)")
        }
        var tally = Tally()
        try walkPage(record.root, level: 1, depth: Int(record.depth), lower: nil, upper: nil,
                     isFreeList: isFreeList, tally: &tally)
        guard tally.entries == record.entries, tally.branchPages == record.branchPages,
              tally.leafPages == record.leafPages, tally.overflowPages == record.overflowPages else {
            throw Self.corrupt("the \(name) database holds \(tally.entries) entries in \(tally.branchPages) branch, "
                + "\(tally.leafPages) leaf and \(tally.overflowPages) overflow pages, but its record says "
                + "\(record.entries) in \(record.branchPages), \(record.leafPages) and \(record.overflowPages)")
        }
    }

    /// Checks page `number` at `level` (the root is 1) and everything below it; its keys must lie
    /// in `lower ..< upper` (either bound absent means unbounded).
    private mutating func walkPage(_ number: UInt64, level: Int, depth: Int, lower: Key?, upper: Key?,
                                   isFreeList: Bool, tally: inout Tally) throws {
        let page = try claim(number)
        let flags = page.u16(10) & Self.typeFlags
        let isLeaf = level == depth
        guard flags == (isLeaf ? Self.leafFlag : Self.branchFlag) else {
            throw Self.corrupt("page \(number) has type flags \(flags), but a \(isLeaf ? "leaf" : "branch") page belongs at level \(level) of \(depth)")
        }
        let nodes = try nodeOffsets(of: page, number: number)
        guard !nodes.isEmpty || (isLeaf && level == 1) else {
            throw Self.corrupt("page \(number) holds no nodes")
        }
        var spans: [(start: Int, end: Int)] = []
        var previousKey: Key? = nil
        if isLeaf {
            tally.leafPages += 1
            for offset in nodes {
                let node = try leafNode(page, number: number, at: offset)
                spans.append((offset, offset + node.size))
                try checkOrder(node.key, after: previousKey, lower: lower, upper: upper, integerKeys: isFreeList, page: number)
                previousKey = node.key
                tally.entries += 1
                let value = try leafValue(node, number: number, readingOverflow: isFreeList, tally: &tally)
                if isFreeList { try checkFreeList(value, key: node.key, page: number) }
            }
            try checkDisjoint(spans, page: number)
        } else {
            tally.branchPages += 1
            var children: [(page: UInt64, key: Key?)] = []
            for (index, offset) in nodes.enumerated() {
                let node = try branchNode(page, number: number, at: offset)
                spans.append((offset, offset + node.size))
                if index == 0 {
                    children.append((node.child, nil))
                } else {
                    try checkOrder(node.key, after: previousKey, lower: lower, upper: upper, integerKeys: isFreeList, page: number)
                    previousKey = node.key
                    children.append((node.child, node.key))
                }
            }
            try checkDisjoint(spans, page: number)
            for (index, child) in children.enumerated() {
                let childLower = child.key ?? lower
                let childUpper = index + 1 < children.count ? children[index + 1].key : upper
                try walkPage(child.page, level: level + 1, depth: depth, lower: childLower, upper: childUpper,
                             isFreeList: isFreeList, tally: &tally)
            }
        }
    }

    // MARK: - Nodes

    /// A key, sliced out of its page.
    private typealias Key = ArraySlice<UInt8>

    private struct LeafNode {
        let key: Key
        let size: Int
        let isBig: Bool
        let dataSize: Int
        /// The data in the page, or the overflow page number's 8 bytes when `isBig`.
        let inline: ArraySlice<UInt8>
    }

    private func nodeOffsets(of page: Page, number: UInt64) throws -> [Int] {
        let lowerBound = Int(page.u16(12)), upperBound = Int(page.u16(14))
        guard lowerBound >= Self.pageHeaderSize, lowerBound % 2 == 0, lowerBound <= upperBound, upperBound <= pageSize else {
            throw Self.corrupt("page \(number) has bounds \(lowerBound) and \(upperBound)")
        }
        return try (0..<(lowerBound - Self.pageHeaderSize) / 2).map { index in
            let offset = Int(page.u16(Self.pageHeaderSize + 2 * index))
            guard offset >= upperBound, offset % 2 == 0, offset + Self.nodeHeaderSize <= pageSize else {
                throw Self.corrupt("node \(index) of page \(number) starts at \(offset), outside \(upperBound)..<\(pageSize)")
            }
            return offset
        }
    }

    private func leafNode(_ page: Page, number: UInt64, at offset: Int) throws -> LeafNode {
        let dataSize = Int(page.u16(offset)) | Int(page.u16(offset + 2)) << 16
        let flags = page.u16(offset + 4)
        let keySize = Int(page.u16(offset + 6))
        guard flags & ~Self.bigDataFlag == 0 else {
            throw Self.corrupt("a node of page \(number) has flags \(flags), which this store never writes")
        }
        guard keySize >= 1, keySize <= Self.longestKey else {
            throw Self.corrupt("a node of page \(number) has a key of \(keySize) bytes")
        }
        let isBig = flags & Self.bigDataFlag != 0
        let keyStart = offset + Self.nodeHeaderSize
        let inlineSize = isBig ? 8 : dataSize
        let end = keyStart + keySize + inlineSize
        guard end <= pageSize else {
            throw Self.corrupt("a node of page \(number) runs past the page's end")
        }
        return LeafNode(key: page.bytes[keyStart..<(keyStart + keySize)], size: end - offset,
                        isBig: isBig, dataSize: dataSize, inline: page.bytes[(keyStart + keySize)..<end])
    }

    private func branchNode(_ page: Page, number: UInt64, at offset: Int) throws -> (key: Key, child: UInt64, size: Int) {
        let child = UInt64(page.u16(offset)) | UInt64(page.u16(offset + 2)) << 16 | UInt64(page.u16(offset + 4)) << 32
        let keySize = Int(page.u16(offset + 6))
        guard keySize <= Self.longestKey, offset + Self.nodeHeaderSize + keySize <= pageSize else {
            throw Self.corrupt("a branch node of page \(number) has a key of \(keySize) bytes at \(offset)")
        }
        let keyStart = offset + Self.nodeHeaderSize
        return (page.bytes[keyStart..<(keyStart + keySize)], child, Self.nodeHeaderSize + keySize)
    }

    /// Claims a leaf node's overflow pages, if it has them, and returns its value when
    /// `readingOverflow` (the free list's values are checked; the main database's are checksummed
    /// rows, which the store checks as it reads them).
    private mutating func leafValue(_ node: LeafNode, number: UInt64, readingOverflow: Bool, tally: inout Tally) throws -> Key {
        guard node.isBig else { return node.inline }
        let first = node.inline.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let head = try claim(first)
        guard head.u16(10) & Self.typeFlags == Self.overflowFlag else {
            throw Self.corrupt("page \(first), named as a value's overflow page by page \(number), is not one")
        }
        let pages = UInt64(head.u32(12))
        let needed = UInt64((Self.pageHeaderSize - 1 + node.dataSize) / pageSize + 1)
        guard pages >= needed, first + pages - 1 <= lastPage else {
            throw Self.corrupt("the overflow run at page \(first) has \(pages) pages; its value of \(node.dataSize) bytes needs \(needed), and the file ends at page \(lastPage)")
        }
        for extra in (first + 1)..<(first + pages) { try mark(extra) }
        tally.overflowPages += pages
        guard readingOverflow else { return [] }
        var value = Array(head.bytes[Self.pageHeaderSize...])
        var next = first + 1
        while value.count < node.dataSize {
            value += try read(next).bytes
            next += 1
        }
        return value.prefix(node.dataSize)
    }

    /// A free-list entry's value: a count, then that many page numbers, each 8 bytes.
    private func checkFreeList(_ value: Key, key: Key, page: UInt64) throws {
        guard key.count == 8, value.count >= 8, value.count % 8 == 0 else {
            throw Self.corrupt("a free-list entry of page \(page) has a key of \(key.count) and a value of \(value.count) bytes")
        }
        var words: [UInt64] = []
        for start in stride(from: value.startIndex, to: value.endIndex, by: 8) {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(value[start + byte]) << UInt64(8 * byte) }
            words.append(word)
        }
        guard words[0] == UInt64(words.count - 1) else {
            throw Self.corrupt("a free-list entry of page \(page) counts \(words[0]) pages but holds \(words.count - 1)")
        }
        for freed in words.dropFirst() where freed < 2 || freed > lastPage {
            throw Self.corrupt("the free list names page \(freed), outside the file's pages 2...\(lastPage)")
        }
    }

    private func checkOrder(_ key: Key, after previous: Key?, lower: Key?, upper: Key?,
                            integerKeys: Bool, page: UInt64) throws {
        func order(_ left: Key, _ right: Key) -> Bool {
            integerKeys ? Self.integerPrecedes(left, right) : Self.bytesPrecedes(left, right)
        }
        if let previous, !order(previous, key) {
            throw Self.corrupt("the keys of page \(page) are out of order")
        }
        if let lower, order(key, lower) {
            throw Self.corrupt("a key of page \(page) sorts before its parent's separator")
        }
        if let upper, !order(key, upper) {
            throw Self.corrupt("a key of page \(page) sorts at or after the next separator of its parent")
        }
    }

    /// Throws when two of `spans` (byte ranges of one page, starting at even offsets) overlap:
    /// each span marks the 2-byte units it covers in a bitmap of the page.
    private func checkDisjoint(_ spans: [(start: Int, end: Int)], page: UInt64) throws {
        var covered = [UInt64](repeating: 0, count: pageSize / 128 + 1)
        for span in spans {
            for unit in (span.start / 2)..<((span.end + 1) / 2) {
                let (word, bit) = (unit / 64, UInt64(1) << UInt64(unit % 64))
                guard covered[word] & bit == 0 else { throw Self.corrupt("two nodes of page \(page) overlap") }
                covered[word] |= bit
            }
        }
    }

    /// LMDB's default key order: bytes compared, then the shorter first.
    private static func bytesPrecedes(_ left: Key, _ right: Key) -> Bool {
        let common = min(left.count, right.count)
        let order = common == 0 ? 0 : left.withUnsafeBytes { l in right.withUnsafeBytes { r in memcmp(l.baseAddress!, r.baseAddress!, common) } }
        return order != 0 ? order < 0 : left.count < right.count
    }

    /// The free list's key order: the keys as native (little-endian) unsigned integers.
    private static func integerPrecedes(_ left: Key, _ right: Key) -> Bool {
        func value(_ bytes: Key) -> UInt64 {
            bytes.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        return left.count == right.count ? value(left) < value(right) : left.count < right.count
    }

    // MARK: - Pages

    private struct Page {
        let bytes: [UInt8]
        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        func u32(_ offset: Int) -> UInt32 { UInt32(u16(offset)) | UInt32(u16(offset + 2)) << 16 }
        func u64(_ offset: Int) -> UInt64 { UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32 }
    }

    /// Marks page `number` reached and reads it; its header must name it.
    private mutating func claim(_ number: UInt64) throws -> Page {
        try mark(number)
        let page = try read(number)
        guard page.u64(0) == number else {
            throw Self.corrupt("page \(number) calls itself page \(page.u64(0))")
        }
        return page
    }

    private mutating func mark(_ number: UInt64) throws {
        guard number >= 2, number <= lastPage else {
            throw Self.corrupt("a tree names page \(number), outside the file's pages 2...\(lastPage)")
        }
        let (word, bit) = (Int(number / 64), UInt64(1) << (number % 64))
        guard reached[word] & bit == 0 else {
            throw Self.corrupt("page \(number) is reached twice")
        }
        reached[word] |= bit
    }

    private func read(_ number: UInt64) throws -> Page {
        var bytes = [UInt8](repeating: 0, count: pageSize)
        let count = bytes.withUnsafeMutableBytes { buffer in
            pread(descriptor, buffer.baseAddress, pageSize, off_t(number) * off_t(pageSize))
        }
        guard count == pageSize else {
            throw Self.corrupt("page \(number) cannot be read whole (\(count) of \(pageSize) bytes)")
        }
        return Page(bytes: bytes)
    }

    static func corrupt(_ detail: String) -> StorageError {
        StorageError(.corrupt, "the LMDB store is damaged: \(detail); move the directory aside to start empty, or restore it from a backup",
                     backend: LMDBStore.backendName)
    }
}
