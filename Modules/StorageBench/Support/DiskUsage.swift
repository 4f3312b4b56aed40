import Foundation

/// The size of a directory tree on disk: the files' lengths and the blocks allocated to them
/// (they differ for sparse files such as LMDB's memory map, and for preallocated logs).
public struct DiskUsage: Sendable {
    /// The regular files' lengths, summed.
    public private(set) var apparentBytes: Int64 = 0
    /// The blocks allocated to them, in bytes: what the disk holds.
    public private(set) var allocatedBytes: Int64 = 0

    /// Sums every regular file below `path`.
    public init(of path: String) {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return }
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            guard stat((path as NSString).appendingPathComponent(relative), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            apparentBytes += Int64(info.st_size)
            allocatedBytes += Int64(info.st_blocks) * 512
        }
    }
}
