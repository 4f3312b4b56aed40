import Foundation
import RealtimeDatabase

/// Builds the cold start's cache: writes `data/q<i>` through the server, then lets a client with
/// persistence on listen to every location until all of it is cached on disk.
struct CacheBuilder {
    let locations: Int
    let childrenPerLocation: Int
    let childBytes: Int
    let query: ColdQuery
    let cacheBytes: UInt
    let timeout: Duration

    /// Writes `data/q<i>` for every location through one online client without persistence.
    func writeData(url: String) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let database = try ClientSetup.makeDatabase(url: url, store: .off, directory: "")
        defer { database.shutdown() }
        let data = database.reference(withPath: "data")
        for index in 0..<locations {
            var payload: [String: Any] = [:]
            for child in 0..<childrenPerLocation { payload["c\(child)"] = childString(index, child) }
            if index == locations - 1 {
                // The server acknowledges in order: once the last is acknowledged, all are.
                try await data.child("q\(index)").setValue(payload)
            } else {
                data.child("q\(index)").setValueLocally(payload)
            }
        }
        Report.line("  wrote the data through the server in \(Format.number((clock.now - start).seconds, digits: 2)) s")
    }

    /// The string at `data/q<index>/c<child>`: `childBytes` pseudo-random letters (so a
    /// compressing backend gets no easy win), the same on every call.
    func childString(_ index: Int, _ child: Int) -> String {
        var state = UInt64(truncatingIfNeeded: index &* 1_000_003 &+ child &* 7_919 &+ 1)
        var bytes = [UInt8]()
        bytes.reserveCapacity(childBytes)
        for _ in 0..<childBytes {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(97 + UInt8((state >> 33) % 26))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Listens to every location with persistence on until every value arrived, then shuts the
    /// client down; returns the seconds that took.
    func buildCache(_ store: StoreKind, url: String, directory: String) async throws -> Double {
        let database = try ClientSetup.makeDatabase(url: url, store: store, directory: directory, cacheBytes: cacheBytes)
        defer { database.shutdown() }
        let data = database.reference(withPath: "data")
        let counter = KeyCounter(target: locations)
        let expected = UInt(query.expectedChildren(of: childrenPerLocation))
        let clock = ContinuousClock()
        let start = clock.now
        var handles: [(DatabaseQuery, DatabaseHandle)] = []
        for index in 0..<locations {
            let located = query.query(at: data.child("q\(index)"))
            let handle = located.observe(.value) { snapshot in
                if snapshot.childrenCount == expected { counter.saw(snapshot.key) }
            }
            handles.append((located, handle))
        }
        guard let done = await counter.reached.wait(timeout: timeout) else {
            throw BenchmarkTimeout("coldstart (\(store.label)): \(counter.current) of \(locations) locations delivered within \(timeout)")
        }
        // The server answers in order, so once a read's answer is back every listen's answer
        // before it has been applied and every query recorded complete. A read, not a write: an
        // acknowledged write outside an active default query is tracked as a query of its own, a
        // 1,001st, one over the prunable limit, and the next check would prune 20% of them.
        _ = try await data.child("q0/c0").getData()
        for (ref, handle) in handles { ref.removeObserver(withHandle: handle) }
        return (done - start).seconds
    }
}
