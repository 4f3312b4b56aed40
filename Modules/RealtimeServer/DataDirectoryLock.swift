import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The data directory, checked and held before the server says it listens: it must exist (or be
/// creatable), be writable, and not be in use by another rtdb-server (an exclusive `flock` on
/// `.rtdb-server.lock`, released when this process ends, however it ends).
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    /// Why a data directory cannot be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Checks and locks `path`.
    ///
    /// - Throws: ``Failure`` saying what is wrong with the directory.
    init(path: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create the data directory \(path): \(error.localizedDescription)")
        }
        let probe = (path as NSString).appendingPathComponent(".rtdb-write-check")
        let probeDescriptor = open(probe, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        guard probeDescriptor >= 0 else {
            throw Failure(description: "the data directory \(path) is not writable: \(String(cString: strerror(errno)))")
        }
        let written = write(probeDescriptor, "ok", 2)
        let synced = fsync(probeDescriptor)
        close(probeDescriptor)
        unlink(probe)
        guard written == 2, synced == 0 else {
            throw Failure(description: "cannot write in the data directory \(path): \(String(cString: strerror(errno)))")
        }
        let lockPath = (path as NSString).appendingPathComponent(".rtdb-server.lock")
        // The descriptor is the object's only once it is locked: a failed init whose stored
        // property was set still runs deinit, and closing it there a second time closed whatever
        // descriptor the number had been given to meanwhile (a socket of the event loop, which
        // then crashed on EBADF).
        let opened = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            throw Failure(description: "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK
                ? "another rtdb-server is using the data directory \(path); stop it or choose another --data-dir"
                : "cannot lock \(lockPath): \(String(cString: strerror(errno)))"
            close(opened)
            throw Failure(description: reason)
        }
        descriptor = opened
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.utf8.count, 0)
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
