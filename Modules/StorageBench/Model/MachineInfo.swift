import CLMDB
import CLevelDB
import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a run measured its figures: on a shared machine, ratios within one run matter more than
/// absolute figures, and these say which machine and build the figures came from.
public struct MachineInfo: Sendable, Codable, Equatable {
    /// Processor cores the process may use.
    public var cores: Int
    /// Physical memory in bytes.
    public var memoryBytes: UInt64
    /// Operating system and kernel (`uname`).
    public var system: String
    /// `release` or `debug` (debug figures are not worth comparing).
    public var build: String
    /// The directory whose disk was measured.
    public var directory: String
    /// When the run started (ISO 8601).
    public var date: String
    /// How many times each workload ran.
    public var runs: Int
    /// The C libraries' versions.
    public var engines: [String: String]

    enum CodingKeys: String, CodingKey {
        case cores, system, build, directory, date, runs, engines
        case memoryBytes = "memory_bytes"
    }

    /// A description of a machine.
    public init(cores: Int, memoryBytes: UInt64, system: String, build: String, directory: String, date: String, runs: Int, engines: [String: String]) {
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.system = system
        self.build = build
        self.directory = directory
        self.date = date
        self.runs = runs
        self.engines = engines
    }

    /// This machine, now.
    static func current(directory: String, runs: Int) -> MachineInfo {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        return MachineInfo(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            system: "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))",
            build: build,
            directory: directory,
            date: ISO8601DateFormatter().string(from: Date()),
            runs: runs,
            engines: [
                "sqlite": String(cString: sqlite3_libversion()),
                "lmdb": String(cString: mdb_version(nil, nil, nil)),
                "leveldb": "\(leveldb_major_version()).\(leveldb_minor_version())",
            ])
    }
}
