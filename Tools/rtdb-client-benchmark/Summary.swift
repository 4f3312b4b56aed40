import StorageBench

/// The compact table `all` ends with: one row per store, ratios against SQLite (the default
/// backend), which mean more than absolute figures on a shared machine.
struct Summary {
    let latency: [LatencyResult]
    let writes: [WritesResult]
    let coldStart: [ColdStartResult]

    func print() {
        Report.line("== summary (ratios are against sqlite, the default backend; lower is better for µs/ms, higher for writes/s)")
        let stores: [StoreKind] = StoreKind.allCases.filter { store in
            latency.contains { $0.store == store } || writes.contains { $0.store == store } || coldStart.contains { $0.store == store }
        }
        let baseLatency = latency.first { $0.store == .sqlite }?.event.p50
        let baseWrites = writes.first { $0.store == .sqlite }?.loopRate
        let baseCold = coldStart.first { $0.store == .sqlite }.map(coldMedian)
        var table = Table([
            "store", "event p50 µs", "p99 µs", "max µs", "×sqlite", "writes/s", "×sqlite", "events w/s", "acked w/s", "disk",
            "cold open ms", "×sqlite",
        ])
        for store in stores {
            var row = [store.label]
            if let result = latency.first(where: { $0.store == store }) {
                row += [
                    Format.micros(result.event.p50), Format.micros(result.event.p99), Format.micros(result.event.max),
                    baseLatency.map { Format.ratio(result.event.p50, to: $0) } ?? "-",
                ]
            } else {
                row += ["-", "-", "-", "-"]
            }
            if let result = writes.first(where: { $0.store == store }) {
                row += [
                    Format.number(result.loopRate), baseWrites.map { Format.ratio(result.loopRate, to: $0) } ?? "-",
                    result.eventsRate.map { Format.number($0) } ?? "-", result.ack.map { Format.number($0.rate) } ?? "-",
                    result.diskUsage.map { Format.bytes($0.apparentBytes) } ?? "-",
                ]
            } else {
                row += ["-", "-", "-", "-", "-"]
            }
            if let result = coldStart.first(where: { $0.store == store }) {
                let median = coldMedian(result)
                row += [Format.millis(median), baseCold.map { Format.ratio(median, to: $0) } ?? "-"]
            } else {
                row += ["-", "-"]
            }
            table.add(row)
        }
        table.print()
        Report.line("  event: local setValue → .value observer (offline); writes/s: setValue loop (durable on return);"
            + " events w/s: until the last .childAdded; disk: apparent size after the writes;"
            + " cold open: median time to the first cached .value event in a fresh process (in this process when none ran)")
    }

    /// The cold open median that counts: in a fresh process when measured, else in this process.
    private func coldMedian(_ result: ColdStartResult) -> Double {
        result.child.isEmpty
            ? ColdStartBenchmark.firstEvents(result.inProcess).median
            : ColdStartBenchmark.firstEvents(result.child).median
    }
}
