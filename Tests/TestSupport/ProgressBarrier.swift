public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Blocking reads of a child process's output until it reports enough progress: the barrier crash
/// tests wait on before SIGKILL, so a slow machine delays the kill instead of leaving the child
/// no time to do anything. Call it off the cooperative pool (it blocks its thread).
public enum ProgressBarrier {
    /// The lines of `data` that start with `prefix`, counted (a partial last line counts too).
    public static func count(_ prefix: String, in data: Data) -> Int {
        String(decoding: data, as: UTF8.self).split(separator: "\n").count { $0.hasPrefix(prefix) }
    }

    /// Reads `output` until `count` lines starting with `prefix` have arrived; returns everything
    /// read. Throws if the child closes its output first or prints nothing for `silence`.
    public static func read(_ output: Pipe, untilLines count: Int, startingWith prefix: String,
                            silence: Duration = .seconds(120)) throws -> Data {
        var data = Data()
        let descriptor = output.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 4096)
        let silenceMilliseconds = Int32(silence.components.seconds * 1000)
        while Self.count(prefix, in: data) < count {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, silenceMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                throw ProgressBarrierError("the child printed nothing for \(silence) (\(Self.count(prefix, in: data)) of \(count) \"\(prefix)\" lines)")
            }
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard got > 0 else {
                throw ProgressBarrierError("the child closed its output after \(Self.count(prefix, in: data)) of \(count) \"\(prefix)\" lines")
            }
            data.append(contentsOf: buffer[0..<got])
        }
        return data
    }
}

/// The child did not reach the progress a crash test waited for.
public struct ProgressBarrierError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
