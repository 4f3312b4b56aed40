import Foundation

/// The `writes` benchmark: `clients` connections each keep `inFlight` puts outstanding to distinct
/// paths `/bench/writes/<client>/<i>`; a put counts once the server acknowledges it (which it does
/// only when the write is durable). After a warm-up, acknowledgements arriving in the measured
/// window give writes per second and ack latency (put sent → `ok` received).
struct WritesBenchmark {
    let target: ServerTarget
    let clients: Int
    let inFlight: Int
    let duration: Double
    let warmup: Double
    let connectConcurrency: Int

    /// The phases, in ``Monotonic`` nanoseconds: warm-up from `start`, measuring from
    /// `measureStart` until `end`, when clients stop sending and wait for their last acks.
    struct Schedule: Sendable {
        let start: UInt64
        let measureStart: UInt64
        let end: UInt64
    }

    /// What one client did.
    struct ClientResult: Sendable {
        /// Ack latencies (ms) of the acks received in the measured window.
        var latencies: [Double] = []
        var measuredAcks = 0
        var totalAcks = 0
        var sent = 0
        var failedReplies = 0
        var unacknowledged = 0
        var endedEarly = false
    }

    private enum Outcome: Sendable {
        case client(ClientResult)
        case failed
        case watchdog
    }

    /// What one run measured, for comparing builds.
    struct Measured: Sendable {
        /// Acknowledged writes per second in the measured window.
        let writesPerSecond: Double
        /// The server's CPU cores while measuring, when its pid is known.
        let serverCores: Double?
    }

    @discardableResult
    func run() async throws -> Measured {
        Report.line("writes: \(clients) clients × \(inFlight) puts in flight to /bench/writes/<client>/<i>; "
            + "warm-up \(Format.decimal(warmup, 1)) s, measure \(Format.decimal(duration, 1)) s; \(target.webSocketURL)")
        let slots = AsyncSemaphore(permits: connectConcurrency)
        let countdown = Countdown(expected: clients)
        let schedule = Gate<Schedule>()
        let acks = ProgressCounter()
        let connectErrors = ErrorTally()
        let replyErrors = ErrorTally()
        let warmupNs = UInt64(warmup * 1e9)
        let durationNs = UInt64(duration * 1e9)
        let connectStart = Monotonic.nanoseconds()

        let (results, failedClients, plan, (cpuUsage, serverCores)) = await withTaskGroup(of: Outcome.self) { group in
            for client in 0..<clients {
                await slots.acquire()
                let start = ClientStart(slots: slots, countdown: countdown)
                group.addTask {
                    do {
                        return .client(try await runClient(
                            client, start: start, schedule: schedule, acks: acks, replyErrors: replyErrors))
                    } catch {
                        start.ready(false)
                        connectErrors.record(error)
                        return .failed
                    }
                }
            }
            let ready = await countdown.done.wait() ?? 0
            let connectMs = Monotonic.milliseconds(from: connectStart, to: Monotonic.nanoseconds())
            Report.line("connected \(ready) of \(clients) clients in \(Format.decimal(connectMs, 0)) ms")
            let now = Monotonic.nanoseconds()
            let plan = Schedule(start: now, measureStart: now + warmupNs, end: now + warmupNs + durationNs)
            schedule.open(plan)
            let serverPid = target.pid
            let cpu = Task { () -> (String, Double?) in
                try? await Monotonic.sleep(until: plan.measureStart)
                let first = CPUSample(serverPid: serverPid)
                try? await Monotonic.sleep(until: plan.end)
                let last = CPUSample(serverPid: serverPid)
                return (last.usage(since: first), last.serverCores(since: first))
            }
            let warmup = self.warmup, duration = self.duration
            let ticker = Task {
                await RateTicker(counter: acks, unit: "acks/s").run { second in
                    Double(second) <= warmup ? "warm-up" : Double(second) <= warmup + duration ? "measure" : "drain"
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(warmup + duration + 60))
                return .watchdog
            }
            var results: [ClientResult] = []
            var failed = 0
            for await outcome in group {
                switch outcome {
                case .client(let result): results.append(result)
                case .failed: failed += 1
                case .watchdog:
                    if results.count + failed < clients {
                        Report.line("watchdog: clients still waiting for acks 60 s after the end; closing them")
                    }
                    group.cancelAll()
                }
                if results.count + failed == clients { group.cancelAll() }
            }
            ticker.cancel()
            return (results, failed, plan, await cpu.value)
        }

        let measuredSeconds = Double(plan.end - plan.measureStart) / 1e9
        let measured = results.reduce(0) { $0 + $1.measuredAcks }
        let latencies = LatencySummary(results.flatMap(\.latencies))
        Report.line("")
        Report.line("RESULT writes (\(clients) clients × \(inFlight) in flight):")
        Report.line("  acknowledged durable writes/s: \(Format.decimal(Double(measured) / measuredSeconds, 0))"
            + "  (\(Format.count(measured)) acks in \(Format.decimal(measuredSeconds)) s)")
        Report.line("  ack latency: \(latencies.line)")
        Report.line("  CPU while measuring: \(cpuUsage) (of \(ProcessInfo.processInfo.activeProcessorCount))")
        Report.line("  totals: \(Format.count(results.reduce(0) { $0 + $1.sent })) puts sent, "
            + "\(Format.count(results.reduce(0) { $0 + $1.totalAcks })) acknowledged ok, "
            + "\(Format.count(results.reduce(0) { $0 + $1.failedReplies })) non-ok replies, "
            + "\(Format.count(results.reduce(0) { $0 + $1.unacknowledged })) never acknowledged, "
            + "\(results.filter(\.endedEarly).count) connections closed by the server, \(failedClients) clients failed")
        connectErrors.report("client errors")
        replyErrors.report("non-ok replies")
        return Measured(writesPerSecond: Double(measured) / measuredSeconds, serverCores: serverCores)
    }

    private func runClient(
        _ client: Int, start: ClientStart, schedule: Gate<Schedule>, acks: ProgressCounter, replyErrors: ErrorTally
    ) async throws -> ClientResult {
        let inFlight = self.inFlight
        return try await BenchClient.run(url: target.webSocketURL(forClient: client)) { connection in
            var receiver = connection.makeReceiver()
            try await connection.awaitHandshake(&receiver)
            start.ready(true)
            guard let plan = await schedule.wait() else { return ClientResult() }
            var result = ClientResult()
            var pending: [Int: UInt64] = [:]
            pending.reserveCapacity(inFlight * 2)
            var request = 0
            func nextPut() -> String {
                request += 1
                pending[request] = Monotonic.nanoseconds()
                result.sent += 1
                return WireMessages.put(
                    request: request, path: "/bench/writes/\(client)/\(request)",
                    valueJSON: "{\"i\":\(request),\"s\":\"loadgen\"}")
            }
            for _ in 0..<inFlight { try await connection.send(nextPut()) }
            while !pending.isEmpty {
                guard let message = try await receiver.next() else {
                    result.endedEarly = true
                    break
                }
                guard case .reply(let number, let status) = WireMessages.classify(message),
                      let sentAt = pending.removeValue(forKey: number) else { continue }
                let now = Monotonic.nanoseconds()
                if status == "ok" {
                    result.totalAcks += 1
                    acks.add()
                    if now >= plan.measureStart && now < plan.end {
                        result.measuredAcks += 1
                        result.latencies.append(Monotonic.milliseconds(from: sentAt, to: now))
                    }
                } else {
                    result.failedReplies += 1
                    replyErrors.record("status \(status): \(message.prefix(200))")
                }
                if now < plan.end { try await connection.send(nextPut()) }
            }
            result.unacknowledged = pending.count
            return result
        }
    }
}
