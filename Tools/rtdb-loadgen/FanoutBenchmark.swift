import Foundation
import Synchronization

/// The `fanout` benchmark: `listeners` connections listen on `/bench/fanout`; one writer puts
/// `{"seq": k, "t": <monotonic ns>}` there every `intervalMilliseconds`. Every push a listener
/// receives gives one latency sample, receive time − `t` (both from this process's clock).
struct FanoutBenchmark {
    let target: ServerTarget
    let listeners: Int
    let intervalMilliseconds: Double
    let duration: Double
    let connectConcurrency: Int

    static let path = "/bench/fanout"

    /// How many puts the writer makes.
    var writes: Int { max(1, Int((duration * 1000 / intervalMilliseconds).rounded())) }

    /// What one listener received.
    struct ListenerResult: Sendable {
        var latencies: [Double] = []
        /// The node it listened on (0: the writer's).
        var node = 0
        /// The connection ended before the benchmark closed it.
        var endedEarly = false
    }

    /// What the writer did.
    struct WriterResult: Sendable {
        var acknowledged = 0
        var failed = 0
        /// Put sent → `ok` received, ms.
        var ackLatencies: [Double] = []
        /// How late each put left against its schedule, ms (the load generator's own lag).
        var sendLag: [Double] = []
    }

    private enum Outcome: Sendable {
        case listener(ListenerResult)
        case writer(WriterResult)
        case failedListener
        case failedWriter
        case watchdog
    }

    /// Send times the writer's sending task shares with its reading task.
    private final class SendLog: Sendable {
        let times: Mutex<[UInt64]>
        let lag = Mutex<[Double]>([])

        init(count: Int) { times = Mutex(Array(repeating: 0, count: count)) }
    }

    func run() async throws {
        let writes = self.writes
        Report.line("fanout: \(listeners) listeners on \(Self.path); 1 writer puts {seq, t} every "
            + "\(Format.decimal(intervalMilliseconds, 1)) ms for \(Format.decimal(duration, 1)) s (\(writes) puts); \(target.webSocketURL)")
        let slots = AsyncSemaphore(permits: connectConcurrency)
        let countdown = Countdown(expected: listeners)
        let writerReady = Gate<Bool>()
        let startGate = Gate<UInt64>()
        let writerDone = Gate<Int>()
        let stop = Gate<Void>()
        let deliveries = ProgressCounter()
        let listenerErrors = ErrorTally()
        let writerErrors = ErrorTally()

        var cpuUsage = "?"
        let outcomes: [Outcome] = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do {
                    let result = try await runWriter(
                        writes: writes, ready: writerReady, start: startGate, errors: writerErrors)
                    writerDone.open(result.acknowledged)
                    return .writer(result)
                } catch {
                    writerErrors.record(error)
                    writerReady.open(false)
                    writerDone.open(0)
                    return .failedWriter
                }
            }
            guard await writerReady.wait() == true else {
                stop.open(())
                startGate.open(0)
                return await group.reduce(into: []) { $0.append($1) }
            }
            let connectStart = Monotonic.nanoseconds()
            for listener in 0..<listeners {
                await slots.acquire()
                let start = ClientStart(slots: slots, countdown: countdown)
                group.addTask {
                    do {
                        return .listener(try await runListener(listener, start: start, stop: stop, deliveries: deliveries))
                    } catch {
                        start.ready(false)
                        listenerErrors.record(error)
                        return .failedListener
                    }
                }
            }
            let ready = await countdown.done.wait() ?? 0
            let connectMs = Monotonic.milliseconds(from: connectStart, to: Monotonic.nanoseconds())
            Report.line("listening: \(ready) of \(listeners) listeners (connect + handshake + listen ok) in \(Format.decimal(connectMs, 0)) ms")

            let ticker = Task {
                await RateTicker(counter: deliveries, unit: "deliveries/s").run { _ in "" }
            }
            startGate.open(Monotonic.nanoseconds() + 100_000_000)
            let cpuStart = CPUSample(serverPid: target.pid)
            let acknowledged = await writerDone.wait() ?? 0
            cpuUsage = CPUSample(serverPid: target.pid).usage(since: cpuStart)
            // Wait for the last pushes: every ready listener should get every acknowledged put.
            let expected = ready * acknowledged
            let waitStart = Monotonic.nanoseconds()
            while deliveries.current < expected && Monotonic.nanoseconds() - waitStart < 15_000_000_000 {
                try? await Task.sleep(for: .milliseconds(10))
            }
            ticker.cancel()
            stop.open(())
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return .watchdog
            }
            var outcomes: [Outcome] = []
            var finished = 0
            for await outcome in group {
                if case .watchdog = outcome {
                    if finished < listeners + 1 { Report.line("watchdog: clients still open 30 s after stop; closing them") }
                    group.cancelAll()
                    continue
                }
                outcomes.append(outcome)
                finished += 1
                if finished == listeners + 1 { group.cancelAll() }
            }
            return outcomes
        }

        var listenerResults: [ListenerResult] = []
        var writer = WriterResult()
        var failedListeners = 0
        for outcome in outcomes {
            switch outcome {
            case .listener(let result): listenerResults.append(result)
            case .writer(let result): writer = result
            case .failedListener: failedListeners += 1
            case .failedWriter, .watchdog: break
            }
        }
        let latencies = LatencySummary(listenerResults.flatMap(\.latencies))
        let expected = listenerResults.count * writer.acknowledged
        Report.line("")
        Report.line("RESULT fanout (\(listeners) listeners, a put every \(Format.decimal(intervalMilliseconds, 1)) ms):")
        Report.line("  delivery latency (put sent → push received): \(latencies.line)")
        if target.nodePorts.count > 1 {
            let sameNode = LatencySummary(listenerResults.filter { $0.node == 0 }.flatMap(\.latencies))
            let otherNodes = LatencySummary(listenerResults.filter { $0.node != 0 }.flatMap(\.latencies))
            Report.line("  listeners on the writer's node: \(sameNode.line)")
            Report.line("  listeners on the other \(target.nodePorts.count - 1) node(s): \(otherNodes.line)")
        }
        Report.line("  deliveries: \(Format.count(latencies.count)) of \(Format.count(expected)) expected "
            + "(\(listenerResults.count) listeners × \(writer.acknowledged) acknowledged puts)"
            + (latencies.count == expected ? "" : ", missing \(Format.count(expected - latencies.count))"))
        Report.line("  writer: \(writes) puts, \(writer.acknowledged) acknowledged, \(writer.failed) non-ok; "
            + "ack latency \(LatencySummary(writer.ackLatencies).line)")
        let lag = LatencySummary(writer.sendLag)
        Report.line("  writer timer lateness (load generator): p50 \(Format.decimal(lag.p50)) ms, p99 \(Format.decimal(lag.p99)) ms, max \(Format.decimal(lag.max)) ms")
        Report.line("  CPU while writing: \(cpuUsage) (of \(ProcessInfo.processInfo.activeProcessorCount))")
        Report.line("  listeners: \(failedListeners) failed to connect or listen, "
            + "\(listenerResults.filter(\.endedEarly).count) disconnected by the server before the end")
        writerErrors.report("writer errors")
        listenerErrors.report("listener errors")
    }

    private func runWriter(
        writes: Int, ready: Gate<Bool>, start: Gate<UInt64>, errors: ErrorTally
    ) async throws -> WriterResult {
        let intervalNs = UInt64(intervalMilliseconds * 1e6)
        return try await BenchClient.run(url: target.webSocketURL) { connection in
            var receiver = connection.makeReceiver()
            try await connection.awaitHandshake(&receiver)
            // Start from null, so the data each listener first receives carries no timestamp.
            try await connection.send(WireMessages.put(request: 1, path: Self.path, valueJSON: "null"))
            while true {
                guard let message = try await receiver.next() else {
                    throw LoadgenError.connectionEnded("writer closed before its reset put was acknowledged")
                }
                if case .reply(1, let status) = WireMessages.classify(message) {
                    guard status == "ok" else { throw LoadgenError.server("reset put failed: \(message.prefix(200))") }
                    break
                }
            }
            ready.open(true)
            guard let startAt = await start.wait() else { return WriterResult() }
            let log = SendLog(count: writes)
            var result = WriterResult()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for seq in 0..<writes {
                        let due = startAt + UInt64(seq) * intervalNs
                        try await Monotonic.sleep(until: due)
                        let sentAt = Monotonic.nanoseconds()
                        log.times.withLock { $0[seq] = sentAt }
                        log.lag.withLock { $0.append(Monotonic.milliseconds(from: due, to: sentAt)) }
                        try await connection.send(WireMessages.put(
                            request: seq + 2, path: Self.path, valueJSON: "{\"seq\":\(seq),\"t\":\(sentAt)}"))
                    }
                }
                var answered = 0
                while answered < writes {
                    guard let message = try await receiver.next() else {
                        throw LoadgenError.connectionEnded("writer closed with \(writes - answered) puts unanswered")
                    }
                    guard case .reply(let number, let status) = WireMessages.classify(message),
                          number >= 2, number < writes + 2 else { continue }
                    let now = Monotonic.nanoseconds()
                    answered += 1
                    if status == "ok" {
                        result.acknowledged += 1
                        let sentAt = log.times.withLock { $0[number - 2] }
                        result.ackLatencies.append(Monotonic.milliseconds(from: sentAt, to: now))
                    } else {
                        result.failed += 1
                        errors.record("status \(status): \(message.prefix(200))")
                    }
                }
                try await group.waitForAll()
            }
            result.sendLag = log.lag.withLock { $0 }
            return result
        }
    }

    private func runListener(_ listener: Int, start: ClientStart, stop: Gate<Void>, deliveries: ProgressCounter) async throws -> ListenerResult {
        try await BenchClient.run(url: target.webSocketURL(forClient: listener)) { connection in
            let (latencies, endedEarly) = try await connection.read(until: stop) { connection in
                var receiver = connection.makeReceiver()
                try await connection.awaitHandshake(&receiver)
                start.connected()
                try await connection.send(WireMessages.listen(request: 1, path: Self.path))
                while true {
                    guard let message = try await receiver.next() else {
                        throw LoadgenError.connectionEnded("listener closed before its listen was acknowledged")
                    }
                    if case .reply(1, let status) = WireMessages.classify(message) {
                        guard status == "ok" else { throw LoadgenError.server("listen failed: \(message.prefix(200))") }
                        break
                    }
                }
                start.ready(true)
                var latencies: [Double] = []
                while let message = try await receiver.next() {
                    let now = Monotonic.nanoseconds()
                    guard case .push = WireMessages.classify(message),
                          let sentAt = WireMessages.sentNanoseconds(in: message) else { continue }
                    latencies.append(Monotonic.milliseconds(from: sentAt, to: now))
                    deliveries.add()
                }
                return latencies
            }
            return ListenerResult(latencies: latencies, node: target.node(forClient: listener), endedEarly: endedEarly)
        }
    }
}
