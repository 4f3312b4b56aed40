import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The load generator's monotonic clock, in nanoseconds since its first reading.
///
/// Fan-out timestamps travel through the server as JSON numbers, so they are kept small (well
/// below 2^53) by counting from the process's own origin.
enum Monotonic {
    private static let origin = raw()

    /// Nanoseconds since the origin (the first call).
    static func nanoseconds() -> UInt64 { raw() &- origin }

    /// Milliseconds between two readings.
    static func milliseconds(from start: UInt64, to end: UInt64) -> Double {
        Double(Int64(bitPattern: end &- start)) / 1_000_000
    }

    /// Sleeps until `deadline` (a ``nanoseconds()`` reading); returns at once if it has passed.
    static func sleep(until deadline: UInt64) async throws {
        let now = nanoseconds()
        guard deadline > now else { return }
        try await Task.sleep(for: .nanoseconds(Int64(deadline - now)))
    }

    private static func raw() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// Process limits the benchmarks need.
enum SystemLimits {
    /// Raises the soft limit on open files to the hard limit (children inherit it) and returns both.
    @discardableResult
    static func raiseOpenFileLimit() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }
}

/// Reads a process's memory and CPU figures from `/proc/<pid>` (Linux); nil pid means this process.
enum ProcessStats {
    /// The resident set size in bytes (`VmRSS`), or nil when unreadable.
    static func residentBytes(pid: Int32?) -> Int? { field("VmRSS", pid: pid) }

    /// The peak resident set size in bytes (`VmHWM`), or nil when unreadable.
    static func peakResidentBytes(pid: Int32?) -> Int? { field("VmHWM", pid: pid) }

    /// Open file descriptors of the process, or nil when unreadable.
    static func openFiles(pid: Int32?) -> Int? {
        let directory = pid.map { "/proc/\($0)/fd" } ?? "/proc/self/fd"
        return (try? FileManager.default.contentsOfDirectory(atPath: directory))?.count
    }

    /// CPU time (user + system) the process has used, in seconds, or nil when unreadable.
    static func cpuSeconds(pid: Int32?) -> Double? {
        let path = pid.map { "/proc/\($0)/stat" } ?? "/proc/self/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time every process on the machine has used (busy, not idle or iowait), in seconds.
    static func machineBusySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        // user nice system idle iowait irq softirq steal ...
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 8 else { return nil }
        let busy = values[0] + values[1] + values[2] + values[5] + values[6] + values[7]
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func field(_ name: String, pid: Int32?) -> Int? {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }
}

/// Writes the tool's output, unbuffered, so progress shows as it happens.
enum Report {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// Number formatting for the report.
enum Format {
    /// An integer with thousands separators: `23,456`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// A number with `places` decimals.
    static func decimal(_ value: Double, _ places: Int = 2) -> String {
        String(format: "%.\(places)f", value)
    }

    /// Bytes as MiB with one decimal.
    static func mebibytes(_ bytes: Int) -> String { decimal(Double(bytes) / 1_048_576, 1) + " MiB" }
}

/// CPU use of the server and of the load generator over an interval.
struct CPUSample {
    let time: UInt64
    let server: Double?
    let loadgen: Double?
    let machine: Double?

    /// Takes a sample now.
    init(serverPid: Int32?) {
        time = Monotonic.nanoseconds()
        server = serverPid.flatMap { ProcessStats.cpuSeconds(pid: $0) }
        loadgen = ProcessStats.cpuSeconds(pid: nil)
        machine = ProcessStats.machineBusySeconds()
    }

    /// `server 1.21 cores, load generator 0.65, other processes 0.02` between `earlier` and this
    /// sample (other = the machine's busy time minus both).
    func usage(since earlier: CPUSample) -> String {
        let serverCores = serverCores(since: earlier)
        let loadgenCores = cores(loadgen, earlier.loadgen, since: earlier)
        let machineCores = cores(machine, earlier.machine, since: earlier)
        func text(_ value: Double?) -> String { value.map { Format.decimal($0) } ?? "?" }
        var others: Double?
        if let machineCores, let loadgenCores { others = max(0, machineCores - loadgenCores - (serverCores ?? 0)) }
        return "server \(text(serverCores)) cores, load generator \(text(loadgenCores)), other processes \(text(others))"
    }

    /// The server's CPU cores between `earlier` and this sample, when its pid is known.
    func serverCores(since earlier: CPUSample) -> Double? { cores(server, earlier.server, since: earlier) }

    /// CPU seconds per second between two readings taken with `earlier` and this sample.
    private func cores(_ end: Double?, _ start: Double?, since earlier: CPUSample) -> Double? {
        let seconds = Double(time - earlier.time) / 1e9
        guard let end, let start, seconds > 0 else { return nil }
        return (end - start) / seconds
    }
}
