// persistence-crash-writer: the child process of the persistence conformance suite.
//
//   persistence-crash-writer append <backend> <directory> <first id>
//       Appends the suite's queue records from <first id> on, as fast as it can, printing
//       `acked <id>` after each append returns, until it is killed.
//   persistence-crash-writer fill <backend> <directory> <extra bytes>
//       Limits file sizes (RLIMIT_FSIZE) to the largest store file plus <extra bytes>, then appends
//       large records until one fails, printing `acked <id>` for each that succeeded and
//       `full <error code>` for the failure, and exits 0.
import Foundation
import Persistence
import PersistenceConformance
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite

#if canImport(Glibc)
import Glibc
#endif

let backends = StorageBackends([.sqlite, .lmdb, .leveldb, .memory])

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("persistence-crash-writer: " + message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let number = Int64(arguments[4]) else {
    fail("usage: persistence-crash-writer append|fill <backend> <directory> <number>")
}
let (mode, backendName, directory) = (arguments[1], arguments[2], arguments[3])

do {
    let engine = try StorageEngine(store: try backends.open(backendName, directory: directory))
    switch mode {
    case "append":
        var id = number
        while true {
            try engine.appendUserWrite(ConformanceRecords.record(id))
            say("acked \(id)")
            id += 1
        }
    case "fill":
        var largest: UInt64 = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            largest = max(largest, (attributes?[.size] as? UInt64) ?? 0)
        }
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(largest) + rlim_t(number), rlim_max: rlim_t.max)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit failed: \(errno)") }
        var id: Int64 = 1
        while true {
            do {
                try engine.appendUserWrite(ConformanceRecords.record(id))
            } catch let error as StorageError {
                if case .diskFull = error.code { say("full diskFull") } else { say("full other \(error)") }
                exit(0)
            }
            say("acked \(id)")
            id += 1
            if id > 100_000 { fail("the file size limit was never reached") }
        }
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
