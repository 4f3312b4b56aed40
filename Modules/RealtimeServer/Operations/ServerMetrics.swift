import CoreMetrics
import Foundation
import Prometheus
import ServerCore

/// The server's metrics (swift-metrics), kept in a Prometheus registry of its own and served at
/// `/metrics` in the text exposition format. Names and labels are listed in the README
/// ("Metrics"); every series is created up front, so a scrape shows zeros before traffic.
final class ServerMetrics: NamespaceMetrics {
    /// How a client reached the server.
    enum Transport: String, CaseIterable {
        case webSocket = "websocket"
        case rest
    }

    /// How a write ended.
    enum WriteResult: String, CaseIterable {
        case ok, denied, stale, failed
    }

    private let registry: PrometheusCollectorRegistry
    private let writes: [String: CoreMetrics.Counter]
    private let reads: [Transport: CoreMetrics.Counter]
    private let listens: [Transport: CoreMetrics.Meter]
    private let slowDisconnects: [Transport: CoreMetrics.Counter]
    private let denials: [String: CoreMetrics.Counter]
    private let connectionsAccepted: CoreMetrics.Counter
    private let openConnections: CoreMetrics.Meter
    private let openWebSockets: CoreMetrics.Meter
    private let openEventStreams: CoreMetrics.Meter
    private let queuedBytes: CoreMetrics.Meter
    /// Time from a write's arrival to its acknowledgement (durable), by transport.
    private let ackLatency: [Transport: CoreMetrics.Timer]
    /// Time one store commit (a group of writes) takes.
    let storeCommit: CoreMetrics.Timer
    /// Sweeps for the onDisconnect writes of dead nodes that finished (shared stores only).
    private let orphanSweeps: CoreMetrics.Counter
    /// What open namespaces keep resident (estimated bytes, of them held by listeners, subtrees).
    private let cacheBytes: CoreMetrics.Meter
    private let cacheHeldBytes: CoreMetrics.Meter
    private let cacheEntries: CoreMetrics.Meter
    /// Data lookups answered from memory, and those loaded from the store.
    private let cacheHits: CoreMetrics.Counter
    private let cacheMisses: CoreMetrics.Counter
    /// Finished background checks of namespace stores, by result.
    private let storeChecks: [StoreCheckResult: CoreMetrics.Counter]
    /// Namespaces marked damaged.
    private let damagedNamespaces: CoreMetrics.Counter

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // From 100 µs to 10 s: a group commit on a fast disk is about 1 ms, a slow fsync 100 ms.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        var writes: [String: CoreMetrics.Counter] = [:]
        for transport in Transport.allCases {
            for result in WriteResult.allCases {
                writes["\(transport.rawValue)/\(result.rawValue)"] = CoreMetrics.Counter(
                    label: "rtdb_writes_total", dimensions: [("transport", transport.rawValue), ("result", result.rawValue)], factory: factory)
            }
        }
        self.writes = writes
        reads = Dictionary(uniqueKeysWithValues: Transport.allCases.map {
            ($0, CoreMetrics.Counter(label: "rtdb_reads_total", dimensions: [("transport", $0.rawValue)], factory: factory))
        })
        listens = Dictionary(uniqueKeysWithValues: Transport.allCases.map {
            ($0, CoreMetrics.Meter(label: "rtdb_listens", dimensions: [("transport", $0.rawValue)], factory: factory))
        })
        slowDisconnects = Dictionary(uniqueKeysWithValues: Transport.allCases.map {
            ($0, CoreMetrics.Counter(label: "rtdb_slow_client_disconnects_total", dimensions: [("transport", $0.rawValue)], factory: factory))
        })
        denials = Dictionary(uniqueKeysWithValues: ["read", "write"].map {
            ($0, CoreMetrics.Counter(label: "rtdb_rule_denials_total", dimensions: [("operation", $0)], factory: factory))
        })
        ackLatency = Dictionary(uniqueKeysWithValues: Transport.allCases.map {
            ($0, CoreMetrics.Timer(label: "rtdb_write_ack_seconds", dimensions: [("transport", $0.rawValue)], preferredDisplayUnit: .seconds, factory: factory))
        })
        connectionsAccepted = CoreMetrics.Counter(label: "rtdb_connections_accepted_total", factory: factory)
        openConnections = CoreMetrics.Meter(label: "rtdb_open_connections", factory: factory)
        openWebSockets = CoreMetrics.Meter(label: "rtdb_open_websockets", factory: factory)
        openEventStreams = CoreMetrics.Meter(label: "rtdb_open_event_streams", factory: factory)
        queuedBytes = CoreMetrics.Meter(label: "rtdb_outbound_queued_bytes", factory: factory)
        storeCommit = CoreMetrics.Timer(label: "rtdb_store_commit_seconds", preferredDisplayUnit: .seconds, factory: factory)
        orphanSweeps = CoreMetrics.Counter(label: "rtdb_orphan_sweeps_total", factory: factory)
        cacheBytes = CoreMetrics.Meter(label: "rtdb_cache_bytes", factory: factory)
        cacheHeldBytes = CoreMetrics.Meter(label: "rtdb_cache_held_bytes", factory: factory)
        cacheEntries = CoreMetrics.Meter(label: "rtdb_cache_entries", factory: factory)
        cacheHits = CoreMetrics.Counter(label: "rtdb_cache_hits_total", factory: factory)
        cacheMisses = CoreMetrics.Counter(label: "rtdb_cache_misses_total", factory: factory)
        storeChecks = Dictionary(uniqueKeysWithValues: StoreCheckResult.allCases.map {
            ($0, CoreMetrics.Counter(label: "rtdb_store_checks_total", dimensions: [("result", $0.rawValue)], factory: factory))
        })
        damagedNamespaces = CoreMetrics.Counter(label: "rtdb_damaged_namespaces_total", factory: factory)
    }

    /// Counts a finished background check of a namespace's store.
    func storeChecked(_ result: StoreCheckResult) { storeChecks[result]?.increment() }

    /// Counts a namespace marked damaged.
    func namespaceDamaged() { damagedNamespaces.increment() }

    /// Records what the open namespaces keep resident together.
    func cacheUsage(_ total: CacheBudget.Usage) {
        cacheBytes.set(total.bytes)
        cacheHeldBytes.set(total.heldBytes)
        cacheEntries.set(total.entries)
    }

    /// Counts data lookups answered from memory and loaded from the store.
    func cacheLookups(hits: Int, misses: Int) {
        if hits > 0 { cacheHits.increment(by: hits) }
        if misses > 0 { cacheMisses.increment(by: misses) }
    }

    /// Counts a finished sweep for dead nodes' onDisconnect writes (whatever it claimed and ran
    /// has run): a test's barrier that later sweeps claimed nothing more.
    func orphanSweepFinished() { orphanSweeps.increment() }

    /// Records one store commit's duration.
    func storeCommitted(in duration: Duration) {
        let (seconds, attoseconds) = duration.components
        storeCommit.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Counts a write that ended with `result`, acknowledged `elapsed` after it arrived.
    func wrote(_ transport: Transport, _ result: WriteResult, since start: ContinuousClock.Instant) {
        writes["\(transport.rawValue)/\(result.rawValue)"]?.increment()
        if result == .ok { ackLatency[transport]?.recordInterval(since: start) }
    }

    func read(_ transport: Transport) { reads[transport]?.increment() }
    func listenAdded(_ transport: Transport) { listens[transport]?.increment() }
    func listenRemoved(_ transport: Transport) { listens[transport]?.decrement() }
    func slowClientDisconnected(_ transport: Transport) { slowDisconnects[transport]?.increment() }
    func denied(_ operation: String) { denials[operation]?.increment() }
    func connectionAccepted() { connectionsAccepted.increment() }

    /// The exposition text, with the gauges read from `activity` now.
    func exposition(activity: ServerActivity) -> [UInt8] {
        openConnections.set(activity.openConnections)
        openWebSockets.set(activity.openWebSockets)
        openEventStreams.set(activity.openEventStreams)
        queuedBytes.set(activity.outbound.queuedBytes)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8192)
        registry.emit(into: &buffer)
        return buffer
    }
}

extension CoreMetrics.Timer {
    /// Records the time from `start` to now.
    func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = start.duration(to: .now)
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        recordNanoseconds(nanoseconds)
    }
}
