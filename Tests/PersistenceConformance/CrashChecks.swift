import Foundation
import Persistence
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Durability with a real child process: killed with SIGKILL mid-append, or run out of file space.
struct CrashChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    /// The child process binary, built next to the test binary.
    static func writerBinary() throws -> URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the test binary is `<Package>PackageTests.xctest`; elsewhere it may be in a bundle.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("persistence-crash-writer")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw ConformanceFailure("persistence-crash-writer is not built next to \(testBinary.path); run `swift build --build-tests` first")
    }

    /// Runs the writer and returns it with its output pipe.
    static func launch(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = try CrashChecks.writerBinary()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// The ids the writer reported as appended, from its output lines `acked <id>`.
    private static func ackedIds(_ data: Data) -> [Int64] {
        String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.hasPrefix("acked ") ? Int64(line.dropFirst(6)) : nil
        }
    }

    /// Checks the queue holds exactly 1…n for some n ≥ every acknowledged id, each write whole.
    private func verifyQueue(_ directory: String, acked: [Int64], round: Int) throws -> Int64 {
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let records = try engine.userWrites()
        let ids = records.map(\.writeId)
        try require(ids == (0..<ids.count).map { Int64($0) + 1 },
                    "round \(round): queue ids are not 1…n in order (gap or duplicate): first \(ids.prefix(5)), count \(ids.count)")
        for record in records where record != ConformanceRecords.record(record.writeId) {
            throw ConformanceFailure("round \(round): write \(record.writeId) is partial or changed")
        }
        let last = ids.last ?? 0
        if let highestAcked = acked.max() {
            try require(last >= highestAcked, "round \(round): write \(highestAcked) was acknowledged but the queue ends at \(last)")
        }
        return last
    }

    func durabilityUnderSIGKILL() throws {
        guard suite.outlivesProcess else {
            throw Conformance.NotApplicable(reason: "the in-memory store does not outlive its process")
        }
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        var random = SplitMix64(seed: 31)
        var next: Int64 = 1
        var totalAcked = 0
        for round in 1...20 {
            let (process, output) = try CrashChecks.launch(["append", suite.backend.name, directory, String(next)])
            // The writer's progress is the barrier: SIGKILL waits for a random number of acknowledged
            // appends (0 in some rounds, so a kill can land during open or the first append), however
            // slowly a loaded machine starts the process. The short delay after it only picks where
            // in the next append the kill lands.
            let wanted = Int(random.next() % 24)
            var seen: Data
            do {
                seen = try ProgressBarrier.read(output, untilLines: wanted, startingWith: "acked ")
            } catch {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw ConformanceFailure("round \(round): \(error)")
            }
            usleep(useconds_t(random.next() % 3_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try require(process.terminationReason == .uncaughtSignal, "round \(round): the writer exited by itself (status \(process.terminationStatus))")
            seen.append(output.fileHandleForReading.readDataToEndOfFile())
            let acked = CrashChecks.ackedIds(seen)
            totalAcked += acked.count
            next = try verifyQueue(directory, acked: acked, round: round) + 1
        }
        try require(totalAcked > 0, "the writer never acknowledged a write in 20 rounds")
    }

    func diskFull() throws {
        guard suite.outlivesProcess else {
            throw Conformance.NotApplicable(reason: "the in-memory store has no disk to fill")
        }
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let (process, output) = try CrashChecks.launch(["fill", suite.backend.name, directory, "262144"])
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        try require(process.terminationStatus == 0, "the filling writer failed (status \(process.terminationStatus)): \(text.suffix(300))")
        let acked = CrashChecks.ackedIds(data)
        try require(!acked.isEmpty, "no write fitted before the disk was full: \(text.suffix(300))")
        try require(text.contains("full diskFull"), "the write that did not fit failed with something else: \(text.suffix(300))")
        let last = try verifyQueue(directory, acked: acked, round: 0)
        try require(last == acked.max(), "the write that did not fit is in the queue anyway (queue ends at \(last), last acked \(acked.max() ?? 0))")
    }
}
