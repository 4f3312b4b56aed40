import TestSupport

/// Percentiles of a set of latency samples in milliseconds (nearest rank over the sorted samples).
struct LatencySummary {
    let count: Int
    let mean: Double
    let p50: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let max: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
        p50 = nearestRankPercentile(sorted, 50)
        p90 = nearestRankPercentile(sorted, 90)
        p99 = nearestRankPercentile(sorted, 99)
        p999 = nearestRankPercentile(sorted, 99.9)
        max = sorted.last ?? 0
    }

    /// One line: `p50 1.23  p90 ...  max ...  mean ...  (n=...)`, in ms.
    var line: String {
        "p50 \(Format.decimal(p50))  p90 \(Format.decimal(p90))  p99 \(Format.decimal(p99))  "
            + "p99.9 \(Format.decimal(p999))  max \(Format.decimal(max))  mean \(Format.decimal(mean))  "
            + "(ms, n=\(Format.count(count)))"
    }
}

/// Prints a counter's per-second rate while a benchmark runs.
///
/// `label` names the phase at a given elapsed second (for example "warm-up" or "measure").
struct RateTicker {
    let counter: ProgressCounter
    let unit: String

    /// Prints one line a second until cancelled.
    func run(label: @Sendable (Int) -> String) async {
        var last = counter.current
        var second = 0
        var next = Monotonic.nanoseconds()
        while !Task.isCancelled {
            next += 1_000_000_000
            let now = Monotonic.nanoseconds()
            if next > now {
                do { try await Task.sleep(for: .nanoseconds(Int64(next - now))) } catch { return }
            }
            second += 1
            let current = counter.current
            let phase = label(second)
            Report.line("  [\(second) s\(phase.isEmpty ? "" : " " + phase)] \(Format.count(current - last)) \(unit)")
            last = current
        }
    }
}
