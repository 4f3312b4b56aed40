import Foundation

/// Runs this executable again with other arguments, without blocking a cooperative thread.
enum ChildProcess {
    /// What a child printed and how long it ran (spawn to exit, seen from the parent).
    struct Outcome: Sendable {
        let status: Int32
        let output: String
        let errorOutput: String
        let wallMicros: Double
    }

    /// This executable's path.
    static var executablePath: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    }

    /// Runs this executable with `arguments` and waits for it to exit.
    static func run(_ arguments: [String]) async throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let clock = ContinuousClock()
        let ended = Signal()
        process.terminationHandler = { _ in ended.fire(at: ContinuousClock.now) }
        let start = clock.now
        try process.run()
        // The child prints a line or two, well under a pipe's buffer, so reading after exit cannot stall it.
        guard let end = await ended.wait(timeout: .seconds(60)) else {
            process.terminate()
            throw BenchmarkTimeout("the child process \(arguments.first ?? "") did not exit within 60 s")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Outcome(status: process.terminationStatus, output: text, errorOutput: errorText, wallMicros: (end - start).microseconds)
    }
}
