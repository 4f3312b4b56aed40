import Foundation

/// What a directory takes on disk: the blocks allocated to its files (LMDB's map is sparse, so
/// file lengths would overstate it).
enum DiskUsage {
    /// Allocated bytes of every regular file below `path`.
    static func allocatedBytes(of path: String) -> Int64 {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            guard stat((path as NSString).appendingPathComponent(relative), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            total += Int64(info.st_blocks) * 512
        }
        return total
    }
}
