import Foundation
import RealtimeDatabase
import StorageBench

/// The figures of one local-writes run.
struct WritesResult: Sendable {
    let store: StoreKind
    let count: Int
    /// Until the `setValue` loop ended (each call returns once the write is durable locally).
    let loopSeconds: Double
    /// Until the observer had been told of the last write (nil without an observer).
    let eventsSeconds: Double?
    /// The persistence directory after the loop.
    let diskUsage: DiskUsage?
    /// The loop's writes/s in each tenth of the writes, in order (shows any slowdown as the
    /// queue of unacknowledged writes grows).
    let tenthRates: [Double]
    /// The acknowledgement phase, when measured.
    let ack: AckResult?

    var loopRate: Double { Double(count) / loopSeconds }
    var eventsRate: Double? { eventsSeconds.map { Double(count) / $0 } }
}

/// The server's acknowledgement of a queue of offline writes.
struct AckResult: Sendable {
    let count: Int
    /// From `goOnline()` until the server acknowledged the last write.
    let seconds: Double

    var rate: Double { Double(count) / seconds }

    /// Calls `start` and times until `acknowledged` fires (the last of `count` writes acknowledged).
    static func timing(
        _ count: Int, until acknowledged: Signal, timeout: Duration, of what: String, start: () -> Void
    ) async throws -> AckResult {
        let started = ContinuousClock.now
        start()
        guard let acked = await acknowledged.wait(timeout: timeout) else {
            throw BenchmarkTimeout("\(what): the server did not acknowledge the last of \(count) writes within \(timeout)")
        }
        return AckResult(count: count, seconds: (acked - started).seconds)
    }
}

/// What the writes benchmark observes while it writes.
enum WritesObserver: String, CaseIterable, Sendable {
    /// `.childAdded` at the parent: one event per write, as a list view would see them.
    case childAdded = "child-added"
    /// `.value` at the last location only: one event in all.
    case last
    /// Nothing: the events time is not measured.
    case none
}

/// `writes`: an offline client with persistence on makes `count` writes to distinct children
/// (`bench/<i>`) as fast as it can. Then, optionally, a second client queues `ackCount` writes
/// the same way, goes online to an in-process server and times the acknowledgement of them all
/// (a separate, smaller queue: the client's acknowledgement work grows with the queue's length).
struct WritesBenchmark {
    let stores: [StoreKind]
    let count: Int
    let observer: WritesObserver
    /// Writes to queue and have acknowledged per store; nil to skip the online phase.
    let ackCount: Int?
    let timeout: Duration

    func run() async throws -> [WritesResult] {
        Report.line("== writes: \(Format.number(Double(count))) local writes to bench/<i> (offline client, observer: \(observer.rawValue))"
            + (ackCount.map { "; then \(Format.number(Double($0))) queued writes acknowledged by an in-process server" } ?? ""))
        let server = ackCount == nil ? nil : try await InProcessServer.start()
        var results: [WritesResult] = []
        var bare: AckResult?
        do {
            if let server, let ackCount {
                let baseline = try await BareConnectionAcks.measure(count: ackCount, server: server, timeout: timeout)
                bare = baseline
                Report.line("  baseline: a bare connection (no cache, no write queue, no listeners) got \(Format.number(Double(ackCount))) writes"
                    + " acknowledged at \(Format.number(baseline.rate)) writes/s (\(Format.number(baseline.seconds, digits: 2)) s)")
            }
            for store in stores {
                var result = try await measure(store)
                if let server, let ackCount {
                    result = WritesResult(
                        store: result.store, count: result.count, loopSeconds: result.loopSeconds, eventsSeconds: result.eventsSeconds,
                        diskUsage: result.diskUsage, tenthRates: result.tenthRates,
                        ack: try await measureAcks(store, count: ackCount, server: server))
                }
                Report.line("  \(Format.pad(store.label, 16, left: true)) loop \(Format.number(result.loopRate)) writes/s"
                    + (result.eventsRate.map { "  events \(Format.number($0)) writes/s" } ?? "")
                    + (result.diskUsage.map { "  disk \($0.text)" } ?? "")
                    + (result.ack.map { "  acked \(Format.number($0.rate)) writes/s (\(Format.number(Double($0.count))) in \(Format.number($0.seconds, digits: 2)) s)" } ?? "")
                    + (result.ack.flatMap { ack in bare.map { " = \(Format.ratio(ack.rate, to: $0.rate)) the bare connection" } } ?? ""))
                Report.line("  \(Format.pad("", 16)) loop writes/s per tenth: "
                    + result.tenthRates.map { Format.number($0) }.joined(separator: " → "))
                results.append(result)
            }
        } catch {
            await server?.stop()
            throw error
        }
        await server?.stop()
        Self.printTable(results, bare: bare)
        return results
    }

    private func measure(_ store: StoreKind) async throws -> WritesResult {
        let scratch = try ScratchDirectory("writes-\(store.rawValue)")
        defer { scratch.remove() }
        let database = try ClientSetup.offlineDatabase(store: store, directory: scratch.sub("store"))
        defer { database.shutdown() }
        let root = database.reference(withPath: "bench")
        let counter = EventCounter(target: observer == .last ? 1 : count)
        let last = count - 1
        let handle: (DatabaseReference, DatabaseHandle)? = switch observer {
        case .childAdded: (root, root.observe(.childAdded) { _ in counter.increment() })
        case .last:
            (root.child("\(last)"), root.child("\(last)").observe(.value) { snapshot in
                if (snapshot.value as? NSNumber)?.intValue == last { counter.increment() }
            })
        case .none: nil
        }
        defer { if let (ref, observerHandle) = handle { ref.removeObserver(withHandle: observerHandle) } }
        let clock = ContinuousClock()

        let tenth = max(1, count / 10)
        var marks: [ContinuousClock.Instant] = []
        let start = clock.now
        marks.append(start)
        for index in 0..<count {
            root.child("\(index)").setValueLocally(index)
            if (index + 1) % tenth == 0 { marks.append(clock.now) }
        }
        let loopEnd = clock.now
        if marks.count <= 10 { marks.append(loopEnd) }
        let tenthRates = zip(marks, marks.dropFirst()).map { Double(tenth) / ($1 - $0).seconds }
        var eventsSeconds: Double?
        if handle != nil {
            guard let delivered = await counter.reached.wait(timeout: timeout) else {
                throw BenchmarkTimeout("writes (\(store.label)): \(counter.current) of \(counter.target) events delivered after \(timeout)")
            }
            eventsSeconds = (delivered - start).seconds
        }
        let usage = store == .off || store == .memory ? nil : DiskUsage(of: scratch.path)
        return WritesResult(
            store: store, count: count, loopSeconds: (loopEnd - start).seconds, eventsSeconds: eventsSeconds,
            diskUsage: usage, tenthRates: tenthRates, ack: nil)
    }

    /// Queues `count` writes offline (the last with a completion block), goes online and times
    /// until that block runs: the server acknowledges in order, so then it has them all.
    private func measureAcks(_ store: StoreKind, count: Int, server: InProcessServer) async throws -> AckResult {
        let scratch = try ScratchDirectory("acks-\(store.rawValue)")
        defer { scratch.remove() }
        let database = try ClientSetup.offlineDatabase(
            store: store, directory: scratch.sub("store"), url: server.url(namespace: "acks-\(store.rawValue)"))
        defer { database.shutdown() }
        let root = database.reference(withPath: "bench")
        let acknowledged = Signal()
        for index in 0..<(count - 1) {
            root.child("\(index)").setValueLocally(index)
        }
        root.child("\(count - 1)").setValue(count - 1) { error, _ in
            if let error { Report.line("  the last write failed: \(error)") }
            acknowledged.fire(at: ContinuousClock.now)
        }
        return try await AckResult.timing(count, until: acknowledged, timeout: timeout, of: "writes (\(store.label))") {
            database.goOnline()
        }
    }

    static func printTable(_ results: [WritesResult], bare: AckResult? = nil) {
        let base = results.first(where: { $0.store == .memory })?.loopRate
        var table = Table([
            "store", "loop writes/s", "vs memory", "first 10% w/s", "last 10% w/s", "events writes/s", "disk (apparent)",
            "disk (allocated)", "acked writes/s", "vs bare connection",
        ])
        for result in results {
            table.add([
                result.store.label, Format.number(result.loopRate), base.map { Format.ratio(result.loopRate, to: $0) } ?? "-",
                result.tenthRates.first.map { Format.number($0) } ?? "-", result.tenthRates.last.map { Format.number($0) } ?? "-",
                result.eventsRate.map { Format.number($0) } ?? "-",
                result.diskUsage.map { Format.bytes($0.apparentBytes) } ?? "-",
                result.diskUsage.map { Format.bytes($0.allocatedBytes) } ?? "-",
                result.ack.map { Format.number($0.rate) } ?? "-",
                result.ack.flatMap { ack in bare.map { Format.ratio(ack.rate, to: $0.rate) } } ?? "-",
            ])
        }
        table.print()
    }
}
