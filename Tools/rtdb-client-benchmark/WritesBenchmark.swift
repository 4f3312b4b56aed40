import Foundation
import RealtimeDatabase

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
    /// From `goOnline()` until the server acknowledged the last write (nil when not measured).
    let ackSeconds: Double?
    /// The loop's writes/s in each tenth of the writes, in order (shows any slowdown as the
    /// queue of unacknowledged writes grows).
    let tenthRates: [Double]

    var loopRate: Double { Double(count) / loopSeconds }
    var eventsRate: Double? { eventsSeconds.map { Double(count) / $0 } }
    var ackRate: Double? { ackSeconds.map { Double(count) / $0 } }
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
/// (`bench/<i>`) as fast as it can; then, optionally, goes online and times the server's
/// acknowledgement of them all.
struct WritesBenchmark {
    let stores: [StoreKind]
    let count: Int
    let observer: WritesObserver
    let online: Bool
    let timeout: Duration

    func run() async throws -> [WritesResult] {
        Report.line("== writes: \(Format.number(Double(count))) local writes to bench/<i> (offline client, observer: \(observer.rawValue)"
            + (online ? ", then online until the server acknowledged all" : "") + ")")
        let server = online ? try await InProcessServer.start() : nil
        var results: [WritesResult] = []
        do {
            for store in stores {
                let result = try await measure(store, server: server)
                Report.line("  \(Format.pad(store.label, 16, left: true)) loop \(Format.number(result.loopRate)) writes/s"
                    + (result.eventsRate.map { "  events \(Format.number($0)) writes/s" } ?? "")
                    + (result.diskUsage.map { "  disk \($0.text)" } ?? "")
                    + (result.ackRate.map { "  acked \(Format.number($0)) writes/s (\(Format.number(result.ackSeconds ?? 0, digits: 2)) s)" } ?? ""))
                Report.line("  \(Format.pad("", 16)) loop writes/s per tenth: "
                    + result.tenthRates.map { Format.number($0) }.joined(separator: " → "))
                results.append(result)
            }
        } catch {
            await server?.stop()
            throw error
        }
        await server?.stop()
        Self.printTable(results)
        return results
    }

    private func measure(_ store: StoreKind, server: InProcessServer?) async throws -> WritesResult {
        let scratch = try ScratchDirectory("writes-\(store.rawValue)")
        defer { scratch.remove() }
        let url = server?.url(namespace: "writes-\(store.rawValue)") ?? ClientSetup.offlineURL
        let database = try ClientSetup.offlineDatabase(store: store, directory: scratch.sub("store"), url: url)
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
        let acknowledged = Signal()
        let clock = ContinuousClock()

        let tenth = max(1, count / 10)
        var marks: [ContinuousClock.Instant] = []
        let start = clock.now
        marks.append(start)
        for index in 0..<last {
            root.child("\(index)").setValueLocally(index)
            if (index + 1) % tenth == 0 { marks.append(clock.now) }
        }
        if online {
            root.child("\(last)").setValue(last) { error, _ in
                if let error { Report.line("  the last write failed: \(error)") }
                acknowledged.fire(at: ContinuousClock.now)
            }
        } else {
            root.child("\(last)").setValueLocally(last)
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
        if let (ref, observerHandle) = handle { ref.removeObserver(withHandle: observerHandle) }

        var ackSeconds: Double?
        if online {
            let onlineStart = clock.now
            database.goOnline()
            guard let acked = await acknowledged.wait(timeout: timeout) else {
                throw BenchmarkTimeout("writes (\(store.label)): the server did not acknowledge the last write within \(timeout)")
            }
            ackSeconds = (acked - onlineStart).seconds
        }
        return WritesResult(
            store: store, count: count, loopSeconds: (loopEnd - start).seconds, eventsSeconds: eventsSeconds,
            diskUsage: usage, ackSeconds: ackSeconds, tenthRates: tenthRates)
    }

    static func printTable(_ results: [WritesResult]) {
        let base = results.first(where: { $0.store == .memory })?.loopRate
        var table = Table(["store", "loop writes/s", "vs memory", "first 10% w/s", "last 10% w/s", "events writes/s", "disk (apparent)", "disk (allocated)", "acked writes/s"])
        for result in results {
            table.add([
                result.store.label, Format.number(result.loopRate), base.map { Format.ratio(result.loopRate, to: $0) } ?? "-",
                result.tenthRates.first.map { Format.number($0) } ?? "-", result.tenthRates.last.map { Format.number($0) } ?? "-",
                result.eventsRate.map { Format.number($0) } ?? "-",
                result.diskUsage.map { Format.bytes($0.apparentBytes) } ?? "-",
                result.diskUsage.map { Format.bytes($0.allocatedBytes) } ?? "-",
                result.ackRate.map { Format.number($0) } ?? "-",
            ])
        }
        table.print()
    }
}
