#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a store directory, held from open to close, so that a second process
/// (or a second handle in this one) gets a clear "in use by process N" error instead of two
/// writers corrupting one store.
///
/// It is an `flock` on `rtdb.lock` in the directory, which also holds the owner's process id.
/// The operating system releases it when the process dies, so a killed process never leaves a
/// stale lock.
public final class DirectoryLock: Sendable {
    /// The lock file's name inside the directory.
    public static let fileName = "rtdb.lock"

    private let descriptor: Int32

    /// Creates `directory` if needed and locks it.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/inUse(pid:)`` with the owner's process id when the
    ///   directory is locked; ``StorageError/Code-swift.enum/io`` when it cannot be created.
    public init(directory: String, backend: String) throws {
        try DirectoryLock.createDirectory(directory, backend: backend)
        let path = directory + "/" + DirectoryLock.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StorageError(.io, "cannot open the lock file \(path): \(String(cString: strerror(errno)))", backend: backend, engineStatus: errno)
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let owner = DirectoryLock.readOwner(descriptor)
            close(descriptor)
            let who = owner.map { "process \($0)" } ?? "another process"
            throw StorageError(
                .inUse(pid: owner),
                "the store in \(directory) is in use by \(who); close it there first, or use another directory",
                backend: backend)
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static func readOwner(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 31, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count].filter { (0x30...0x39).contains($0) }, as: UTF8.self))
    }

    /// Creates `path` and its missing parents.
    static func createDirectory(_ path: String, backend: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw StorageError(.io, "cannot create the directory \(current): \(String(cString: strerror(errno)))", backend: backend, engineStatus: errno)
            }
        }
    }
}
