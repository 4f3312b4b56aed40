import ServerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's file descriptor budget, and how the server divides it: stores first (each open
/// namespace holds a few descriptors), the rest for client connections.
public struct ResourceLimits: Sendable, Equatable {
    /// Descriptors the process may have open (the soft limit, after raising it to the hard limit).
    public let fileDescriptors: Int
    /// Descriptors set aside for each open namespace's store (database, journal, lock and table files).
    public static let descriptorsPerNamespace = 8
    /// Descriptors set aside for the process itself (standard streams, listening sockets, logs).
    public static let reservedDescriptors = 64

    /// The limits of this process, raising the soft descriptor limit to the hard one first (as
    /// servers do: the soft default of 1024 is far below what a server can hold).
    public static func current() -> ResourceLimits {
        var limit = rlimit()
        guard getrlimit(resourceNOFILE, &limit) == 0 else { return ResourceLimits(fileDescriptors: 1024) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resourceNOFILE, &raised) == 0 { limit = raised }
        }
        let descriptors = limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
        return ResourceLimits(fileDescriptors: descriptors)
    }

    /// Limits with `fileDescriptors` descriptors.
    public init(fileDescriptors: Int) { self.fileDescriptors = fileDescriptors }

    /// The descriptors left for connections once `openNamespaces` stores and the process have theirs.
    public func connectionDescriptors(openNamespaces: Int) -> Int {
        max(16, fileDescriptors - ResourceLimits.reservedDescriptors - openNamespaces * ResourceLimits.descriptorsPerNamespace)
    }

    /// The default connection cap: what the descriptors allow, at most 10,000; the tenth held
    /// back above the cap lets refused clients still get their 503 before accepting pauses.
    public func defaultMaxConnections(openNamespaces: Int) -> Int {
        let available = connectionDescriptors(openNamespaces: openNamespaces)
        return max(8, min(10_000, available - available / 10))
    }

    #if canImport(Glibc)
    private static let resourceNOFILE = __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue))
    #else
    private static let resourceNOFILE = RLIMIT_NOFILE
    #endif
}
