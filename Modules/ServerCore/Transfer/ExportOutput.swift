#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an export's JSON goes: a buffer of about `chunkBytes`, handed on whole each time it
/// fills (to a file, or to a stream a server sends).
package final class ExportOutput {
    private let deliver: ([UInt8]) throws(ServerError) -> Void
    private let chunkBytes: Int
    private var buffer: [UInt8] = []

    /// Bytes written (or buffered) so far.
    package private(set) var bytes = 0

    /// An output that hands `deliver` each full buffer (at least `chunkBytes`) and, at
    /// ``flush()``, the rest.
    package init(chunkBytes: Int = 1 << 20, deliver: @escaping ([UInt8]) throws(ServerError) -> Void) {
        self.chunkBytes = chunkBytes
        self.deliver = deliver
        buffer.reserveCapacity(chunkBytes)
    }

    /// Buffers `data`, handing the buffer on once it is full.
    package func write(_ data: [UInt8]) throws(ServerError) {
        buffer += data
        bytes += data.count
        if buffer.count >= chunkBytes { try flush() }
    }

    /// Hands on what is buffered.
    package func flush() throws(ServerError) {
        guard !buffer.isEmpty else { return }
        let chunk = buffer
        buffer.removeAll(keepingCapacity: true)
        try deliver(chunk)
    }
}

/// The file an export writes: `FILE.partial-PID` beside the destination, synced and renamed into
/// place once complete, so a failed export leaves no partial file (or standard output, written
/// as it comes).
package final class ExportFile {
    private let destination: String?
    private let partial: String?
    private var descriptor: Int32

    /// Creates the partial file of `destination` (standard output when `nil`).
    ///
    /// - Throws: ``ServerError`` `storageFailed` when the file cannot be created.
    package init(destination: String?) throws(ServerError) {
        self.destination = destination
        partial = destination.map { $0 + ".partial-\(getpid())" }
        if let partial {
            descriptor = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ServerError(.storageFailed, "cannot create \(partial): \(String(cString: strerror(errno)))") }
        } else {
            descriptor = STDOUT_FILENO
        }
    }

    deinit { abandon() }

    /// What the file is, for messages.
    package var name: String { destination ?? "standard output" }

    /// Writes `bytes` at the end.
    ///
    /// - Throws: ``ServerError`` `storageFailed` when the write fails.
    package func write(_ bytes: [UInt8]) throws(ServerError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ServerError(.storageFailed, "cannot write to \(name): \(String(cString: strerror(errno)))")
            }
            written += count
        }
    }

    /// Syncs the partial file and renames it to the destination.
    ///
    /// - Throws: ``ServerError`` `storageFailed` when the sync or the rename fails (the partial
    ///   file is then removed).
    package func complete() throws(ServerError) {
        guard let destination, let partial, descriptor >= 0 else { return }
        defer { abandon() }
        guard fsync(descriptor) == 0 else { throw ServerError(.storageFailed, "cannot sync \(partial): \(String(cString: strerror(errno)))") }
        close(descriptor)
        descriptor = -1
        guard rename(partial, destination) == 0 else {
            unlink(partial)
            throw ServerError(.storageFailed, "cannot rename \(partial) to \(destination): \(String(cString: strerror(errno)))")
        }
    }

    /// Closes and removes the partial file, unless it was completed.
    package func abandon() {
        guard let partial, descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        unlink(partial)
    }
}

/// `write(2)`, named apart from the method that calls it.
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
