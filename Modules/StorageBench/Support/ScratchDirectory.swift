public import CoreTree
import Foundation
import Synchronization

/// The directory a run works in, inside the directory being measured; removed when the run ends,
/// and by ``removeAll()`` when the run is stopped (the tool calls it on Ctrl-C), so nothing is
/// left behind.
public final class ScratchDirectory: Sendable {
    /// The directory's path.
    public let path: String

    private static let active = Mutex<Set<String>>([])
    private static let stopping = Mutex(false)

    /// Whether ``removeAll()`` began: the run is being stopped, and errors its threads meet from
    /// now on (their directory vanished) are the stop's, not failures to report.
    public static var isStopping: Bool { stopping.withLock { $0 } }

    /// Creates a new, empty directory inside `parent` (which must exist).
    public init(inside parent: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BenchError("the directory to measure, \(parent), does not exist or is not a directory", code: .invalidConfiguration)
        }
        path = (parent as NSString).appendingPathComponent("rtdb-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        ScratchDirectory.active.withLock { _ = $0.insert(path) }
    }

    /// A new, empty subdirectory called `name`; an error once ``removeAll()`` began, so a stopped
    /// run starts no new step and unwinds.
    func subdirectory(_ name: String) throws -> String {
        guard !ScratchDirectory.isStopping else { throw BenchError("the run was stopped", code: .io) }
        let child = (path as NSString).appendingPathComponent(name)
        try? FileManager.default.removeItem(atPath: child)
        // Never re-creates the scratch directory itself: after ``removeAll()`` it stays gone.
        try FileManager.default.createDirectory(atPath: child, withIntermediateDirectories: false)
        return child
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
        ScratchDirectory.active.withLock { _ = $0.remove(path) }
    }

    /// Removes every scratch directory still in use (for a signal handler about to exit, while
    /// the run's threads may still be creating files in it). Each is first renamed in one atomic
    /// step, so a store the run opens or writes by path afterwards finds nothing there, and the
    /// renamed tree is removed. A store creates its directory's missing parents, though, so a run
    /// opening one just then makes the scratch directory again: this waits (at most `bound`) for
    /// each run to unwind (``subdirectory(_:)`` refuses from now on, and the run's own
    /// ``remove()`` removes its directory, made again or not), then removes what is left.
    public static func removeAll(waitingForRunsUpTo bound: Duration = .seconds(10)) {
        stopping.withLock { $0 = true }
        for path in active.withLock({ $0 }) { renameAndRemove(path) }
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        while !active.withLock({ $0.isEmpty }) && clock.now < deadline { usleep(5_000) }
        for path in active.withLock({ $0 }) { renameAndRemove(path) }
        active.withLock { $0.removeAll() }
    }

    private static func renameAndRemove(_ path: String) {
        let doomed = path + ".removing"
        if rename(path, doomed) == 0 {
            try? FileManager.default.removeItem(atPath: doomed)
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// A run that cannot go on, with what to do about it.
public struct BenchError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The run was asked for something it cannot do (no backend, no runs, a missing directory).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A workload read back something other than what it wrote: the figures would be wrong.
        public static let wrongResult = Code("wrongResult")
        /// The operating system refused a file operation.
        public static let io = Code("io")
        public var description: String { name }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// The error that caused this one, if any.
    public let underlyingError: (any Error)?

    init(_ message: String, code: Code = .wrongResult, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    /// The message.
    public var description: String { message }
}
