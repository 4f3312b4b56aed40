/// The `idle` benchmark: opens `connections` WebSocket connections that only wait (answering the
/// server's pings), and compares the server's resident memory before and after.
///
/// One warm-up connection opens first and stays open, so the namespace's one-time costs (opening
/// its store) fall before the "before" reading rather than on the idle connections.
struct IdleBenchmark {
    let target: ServerTarget
    let connections: Int
    let settleSeconds: Double
    let connectConcurrency: Int

    private enum Outcome: Sendable {
        /// A connection that was held; `endedEarly` if the server closed it first.
        case held(endedEarly: Bool)
        case failed
        case watchdog
    }

    func run() async throws {
        guard let pid = target.pid else { throw LoadgenError.server("the server's pid is unknown (give --server-pid)") }
        Report.line("idle: \(Format.count(connections)) idle connections to \(target.webSocketURL) (server pid \(pid))")
        let stop = Gate<Void>()
        let errors = ErrorTally()
        let rssStart = ProcessStats.residentBytes(pid: pid) ?? 0

        let outcomes: [Outcome] = await withTaskGroup(of: Outcome.self) { group in
            // The warm-up connection.
            let warmSlots = AsyncSemaphore(permits: 1)
            let warmCountdown = Countdown(expected: 1)
            await warmSlots.acquire()
            let warmStart = ClientStart(slots: warmSlots, countdown: warmCountdown)
            group.addTask { await hold(start: warmStart, stop: stop, errors: errors) }
            let warmReady = await warmCountdown.done.wait() ?? 0
            try? await Task.sleep(for: .milliseconds(500))
            let rssBefore = ProcessStats.residentBytes(pid: pid) ?? 0
            let fdsBefore = ProcessStats.openFiles(pid: pid)
            Report.line("server RSS: \(Format.mebibytes(rssStart)) at start, \(Format.mebibytes(rssBefore)) with the warm-up connection (\(warmReady == 1 ? "open" : "FAILED"))")

            let slots = AsyncSemaphore(permits: connectConcurrency)
            let countdown = Countdown(expected: connections)
            let connectStart = Monotonic.nanoseconds()
            let progress = Task {
                var last = 0
                while !Task.isCancelled {
                    do { try await Task.sleep(for: .seconds(1)) } catch { return }
                    let done = countdown.succeeded + countdown.failed
                    if done != last {
                        Report.line("  \(Format.count(countdown.succeeded)) open, \(Format.count(countdown.failed)) failed")
                        last = done
                    }
                }
            }
            for _ in 0..<connections {
                await slots.acquire()
                let start = ClientStart(slots: slots, countdown: countdown)
                group.addTask { await hold(start: start, stop: stop, errors: errors) }
            }
            let open = await countdown.done.wait() ?? 0
            progress.cancel()
            let connectSeconds = Monotonic.milliseconds(from: connectStart, to: Monotonic.nanoseconds()) / 1000
            Report.line("opened \(Format.count(open)) of \(Format.count(connections)) connections (handshake received) in "
                + "\(Format.decimal(connectSeconds)) s; \(Format.count(countdown.failed)) failed")
            try? await Task.sleep(for: .seconds(settleSeconds))
            let rssAfter = ProcessStats.residentBytes(pid: pid) ?? 0
            let peak = ProcessStats.peakResidentBytes(pid: pid) ?? 0
            let fdsAfter = ProcessStats.openFiles(pid: pid)
            let ownRSS = ProcessStats.residentBytes(pid: nil) ?? 0
            let delta = rssAfter - rssBefore
            Report.line("")
            Report.line("RESULT idle (\(Format.count(open)) connections open):")
            Report.line("  server RSS before: \(Format.mebibytes(rssBefore)) (\(Format.count(rssBefore)) bytes)")
            Report.line("  server RSS after:  \(Format.mebibytes(rssAfter)) (\(Format.count(rssAfter)) bytes), peak \(Format.mebibytes(peak))")
            if open > 0 {
                Report.line("  per connection: \(Format.count(delta / open)) bytes (\(Format.decimal(Double(delta) / Double(open) / 1024, 1)) KiB)")
            }
            Report.line("  server open files: \(fdsBefore.map(String.init) ?? "?") before, \(fdsAfter.map(String.init) ?? "?") after; "
                + "load generator RSS \(Format.mebibytes(ownRSS))")
            errors.report("connection errors")

            let closeStart = Monotonic.nanoseconds()
            stop.open(())
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return .watchdog
            }
            var outcomes: [Outcome] = []
            for await outcome in group {
                if case .watchdog = outcome {
                    if outcomes.count < connections + 1 { Report.line("watchdog: connections still open 60 s after stop; dropping them") }
                    group.cancelAll()
                    continue
                }
                outcomes.append(outcome)
                if outcomes.count == connections + 1 { group.cancelAll() }
            }
            let closeSeconds = Monotonic.milliseconds(from: closeStart, to: Monotonic.nanoseconds()) / 1000
            Report.line("closed all connections in \(Format.decimal(closeSeconds)) s")
            return outcomes
        }
        let endedEarly = outcomes.filter { if case .held(true) = $0 { true } else { false } }.count
        if endedEarly > 0 {
            Report.line("  \(Format.count(endedEarly)) connections were closed by the server before the end")
        }
    }

    /// Opens one connection, reports it ready after the handshake, and reads (so pings are
    /// answered) until `stop` opens, then closes it.
    private func hold(start: ClientStart, stop: Gate<Void>, errors: ErrorTally) async -> Outcome {
        do {
            let endedEarly = try await BenchClient.run(url: target.webSocketURL) { connection in
                try await connection.read(until: stop) { connection in
                    var receiver = connection.makeReceiver()
                    try await connection.awaitHandshake(&receiver)
                    start.ready(true)
                    while try await receiver.next() != nil {}
                }.endedEarly
            }
            return .held(endedEarly: endedEarly)
        } catch {
            start.ready(false)
            errors.record(error)
            return .failed
        }
    }
}
