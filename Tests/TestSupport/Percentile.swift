/// The nearest-rank percentile `p` (0–100) of samples sorted in ascending order; 0 when empty.
/// Shared by the benchmarks so every tool reports percentiles the same way.
public func nearestRankPercentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[max(0, min(sorted.count - 1, rank - 1))]
}
