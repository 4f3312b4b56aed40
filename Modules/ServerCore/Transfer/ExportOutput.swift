#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an export's JSON goes: a file descriptor, written through a buffer of about a megabyte.
final class ExportOutput {
    private let descriptor: Int32
    /// What the output is, for errors ("standard output", a path).
    let name: String
    private var buffer: [UInt8] = []
    private static let bufferBytes = 1 << 20

    /// Bytes written (or buffered) so far.
    private(set) var bytes = 0

    /// An output to `descriptor`, which stays open.
    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
        buffer.reserveCapacity(ExportOutput.bufferBytes)
    }

    /// Buffers `data`, writing the buffer out once it is full.
    func write(_ data: [UInt8]) throws(ServerError) {
        buffer += data
        bytes += data.count
        if buffer.count >= ExportOutput.bufferBytes { try flush() }
    }

    /// Writes what is buffered.
    func flush() throws(ServerError) {
        var written = 0
        while written < buffer.count {
            let count = buffer.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ServerError(.storageFailed, "cannot write to \(name): \(String(cString: strerror(errno)))")
            }
            written += count
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// `write(2)`, named apart from the method that calls it.
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
