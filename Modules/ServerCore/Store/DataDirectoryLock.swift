import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The data directory, checked and held before the server says it listens: it must exist (or be
/// creatable), be writable, and not be in use by another rtdb-server (an exclusive `flock` on
/// `.rtdb-server.lock`, released by ``release()``, or when this process ends, however it ends).
package final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    private let released = Mutex(false)

    /// Checks and locks `path`.
    ///
    /// - Throws: ``ServerError`` (`storageFailed`) saying what is wrong with the directory.
    package init(path: String) throws(ServerError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ServerError(.storageFailed, "cannot create the data directory \(path): \(error.localizedDescription)", underlying: error)
        }
        let probe = (path as NSString).appendingPathComponent(".rtdb-write-check")
        let probeDescriptor = open(probe, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        guard probeDescriptor >= 0 else {
            throw ServerError(.storageFailed, "the data directory \(path) is not writable: \(String(cString: strerror(errno)))")
        }
        let written = write(probeDescriptor, "ok", 2)
        let synced = fsync(probeDescriptor)
        close(probeDescriptor)
        unlink(probe)
        guard written == 2, synced == 0 else {
            throw ServerError(.storageFailed, "cannot write in the data directory \(path): \(String(cString: strerror(errno)))")
        }
        let lockPath = (path as NSString).appendingPathComponent(".rtdb-server.lock")
        // The descriptor is the object's only once it is locked: a failed init whose stored
        // property was set still runs deinit, and closing it there a second time closed whatever
        // descriptor the number had been given to meanwhile (a socket of the event loop, which
        // then crashed on EBADF).
        let opened = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            throw ServerError(.storageFailed, "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK
                ? "another rtdb-server is using the data directory \(path); stop it or choose another --data-dir"
                : "cannot lock \(lockPath): \(String(cString: strerror(errno)))"
            close(opened)
            throw ServerError(.storageFailed, reason)
        }
        descriptor = opened
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.utf8.count, 0)
    }

    /// Records the address clients of this machine reach the server at (`http://127.0.0.1:8080`)
    /// in the lock file, after the process id, so tools that find the directory held (an
    /// `rtdb-server export`) can ask the server instead.
    package func record(address: String) {
        let text = "\(getpid())\n\(address)\n"
        // Under the flag's lock: once released, the number may belong to another file.
        released.withLock { released in
            guard !released else { return }
            _ = ftruncate(descriptor, 0)
            _ = pwrite(descriptor, text, text.utf8.count, 0)
        }
    }

    /// The address the server holding `path` recorded (``record(address:)``), or `nil` when no
    /// server holds the directory or the one that does has recorded none.
    package static func serverAddress(in path: String) -> String? {
        let lockPath = (path as NSString).appendingPathComponent(".rtdb-server.lock")
        let descriptor = open(lockPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A lock taken here means nobody holds it: whatever the file says is stale.
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        guard let text = try? String(contentsOfFile: lockPath, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        return lines.count >= 2 ? String(lines[1]) : nil
    }

    /// Unlocks the directory now (the first call; later ones do nothing). A server calls it when
    /// its stores are closed, not when the last reference goes: a connection's task still winding
    /// down may hold one, and a server started next on the directory found it still locked.
    package func release() {
        released.withLock { released in
            guard !released else { return }
            released = true
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }

    deinit {
        release()
    }
}
