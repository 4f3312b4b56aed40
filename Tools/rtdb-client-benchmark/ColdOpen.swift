import ArgumentParser
import Foundation
import RealtimeDatabase

/// What each location's tracked query is.
enum ColdQuery: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// `.value` at the location: the default query, which loads all its data.
    case value
    /// `queryOrderedByKey().queryLimited(toLast: 5)` at the location: a filtered query, whose
    /// cached keys are tracked.
    case last5 = "last-5"

    /// The query at `ref`.
    func query(at ref: DatabaseReference) -> DatabaseQuery {
        switch self {
        case .value: ref
        case .last5: ref.queryOrderedByKey().queryLimited(toLast: 5)
        }
    }

    /// How many children the query's value has when the location has `children`.
    func expectedChildren(of children: Int) -> Int {
        switch self {
        case .value: children
        case .last5: min(5, children)
        }
    }
}

/// One cold open of a persisted cache: a new offline client on an existing directory, timed
/// until the first cached `.value` event of one location.
enum ColdOpen {
    /// The figures of one cold open, in microseconds from creating the `Database`.
    struct Timing: Sendable {
        /// Until `goOffline()` and the first `reference(withPath:)` returned (the store is open).
        let openMicros: Double
        /// Until the observer block got the cached value.
        let firstEventMicros: Double
        /// How many children the cached value had.
        let children: Int

        /// The line the child process prints and the parent parses.
        var line: String {
            "cold-open open_us=\(openMicros) first_event_us=\(firstEventMicros) children=\(children)"
        }

        init(openMicros: Double, firstEventMicros: Double, children: Int) {
            self.openMicros = openMicros
            self.firstEventMicros = firstEventMicros
            self.children = children
        }

        /// Parses ``line`` from a child's output.
        init?(line: String) {
            var fields: [String: String] = [:]
            for part in line.split(separator: " ").dropFirst() {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
            }
            guard line.hasPrefix("cold-open "), let open = fields["open_us"].flatMap(Double.init),
                  let first = fields["first_event_us"].flatMap(Double.init), let children = fields["children"].flatMap(Int.init)
            else { return nil }
            self.init(openMicros: open, firstEventMicros: first, children: children)
        }
    }

    /// Opens the cache in `directory` and waits for the cached value at `path`; shuts the client down.
    static func measure(
        url: String, store: StoreKind, directory: String, path: String, query kind: ColdQuery, cacheBytes: UInt, timeout: Duration
    ) async throws -> Timing {
        let signal = Signal()
        let children = ChildCount()
        let clock = ContinuousClock()
        let start = clock.now
        let database = try ClientSetup.makeDatabase(url: url, store: store, directory: directory, cacheBytes: cacheBytes)
        database.goOffline()
        let ref = database.reference(withPath: path)
        let opened = clock.now
        let query = kind.query(at: ref)
        let handle = query.observe(.value) { snapshot in
            let now = ContinuousClock.now
            guard snapshot.exists() else { return }
            children.set(Int(snapshot.childrenCount))
            signal.fire(at: now)
        }
        let seen = await signal.wait(timeout: timeout)
        query.removeObserver(withHandle: handle)
        database.shutdown()
        guard let seen else {
            throw BenchmarkTimeout("cold open (\(store.label)): no cached .value event at \(path) within \(timeout)")
        }
        return Timing(openMicros: (opened - start).microseconds, firstEventMicros: (seen - start).microseconds, children: children.value)
    }
}

/// The child count a listener block saw, read by the waiting task.
private final class ChildCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func set(_ value: Int) { lock.withLock { count = value } }
    var value: Int { lock.withLock { count } }
}

/// `cold-open` (hidden): one cold open in a fresh process, for ``ColdStartBenchmark``; prints
/// one ``ColdOpen/Timing`` line.
struct ColdOpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cold-open", abstract: "One cold open of a persisted cache (run by coldstart in a child process).",
        shouldDisplay: false)

    @Option(help: "The database URL the cache was built with.") var url: String
    @Option(help: "The persistence backend.") var store: StoreKind
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "The location to observe.") var path: String
    @Option(help: "The query at the location: value or last-5.") var query: ColdQuery = .value
    @Option(help: "The cache budget in bytes.") var cacheBytes: UInt
    @Option(help: "Seconds to wait for the event.") var timeout: Int = 30

    func run() async throws {
        ClientSetup.registerBackends()
        let timing = try await ColdOpen.measure(
            url: url, store: store, directory: directory, path: path, query: query, cacheBytes: cacheBytes,
            timeout: .seconds(timeout))
        Report.line(timing.line)
    }
}
