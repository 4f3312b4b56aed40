import Foundation
import TestSupport

/// Percentiles of a set of samples (nearest rank over the sorted samples), in microseconds.
struct Percentiles: Sendable {
    let count: Int
    let min: Double
    let p50: Double
    let p99: Double
    let max: Double
    let mean: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        min = sorted.first ?? 0
        p50 = nearestRankPercentile(sorted, 50)
        p99 = nearestRankPercentile(sorted, 99)
        max = sorted.last ?? 0
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
    }

    /// The median (nearest rank, lower middle for an even count).
    var median: Double { p50 }
}

extension Duration {
    /// The duration in microseconds.
    var microseconds: Double {
        let parts = components
        return Double(parts.seconds) * 1_000_000 + Double(parts.attoseconds) / 1_000_000_000_000
    }

    /// The duration in seconds.
    var seconds: Double { microseconds / 1_000_000 }
}

/// Number formatting for the printed tables.
enum Format {
    /// `1234.5` → `1,234.5` style with `digits` decimals (by hand: Foundation's formatter on
    /// Linux does not honour the fraction digits).
    static func number(_ value: Double, digits: Int = 0) -> String {
        guard value.isFinite else { return "-" }
        let text = String(format: "%.\(digits)f", abs(value))
        let parts = text.split(separator: ".", maxSplits: 1)
        var integer = ""
        for (index, character) in parts[0].reversed().enumerated() {
            if index > 0 && index % 3 == 0 { integer.append(",") }
            integer.append(character)
        }
        let sign = value < 0 && text.contains(where: { $0 != "0" && $0 != "." }) ? "-" : ""
        return sign + String(integer.reversed()) + (parts.count > 1 ? "." + parts[1] : "")
    }

    /// Microseconds with one decimal below 100 µs, none above.
    static func micros(_ value: Double) -> String {
        number(value, digits: value < 100 ? 1 : 0)
    }

    /// Milliseconds with two decimals below 10 ms, one below 100 ms, none above.
    static func millis(_ microseconds: Double) -> String {
        let value = microseconds / 1000
        return number(value, digits: value < 10 ? 2 : (value < 100 ? 1 : 0))
    }

    /// A byte count as `12.3 MB` / `456 KB` (decimal units, as `du --si`).
    static func bytes(_ value: Int64) -> String {
        let bytes = Double(value)
        if bytes >= 1_000_000_000 { return number(bytes / 1_000_000_000, digits: 1) + " GB" }
        if bytes >= 1_000_000 { return number(bytes / 1_000_000, digits: 1) + " MB" }
        if bytes >= 1_000 { return number(bytes / 1_000, digits: 0) + " KB" }
        return "\(value) B"
    }

    /// A ratio as `1.00×`, `-` when undefined.
    static func ratio(_ value: Double, to base: Double) -> String {
        guard base > 0, value.isFinite, base.isFinite else { return "-" }
        return number(value / base, digits: 2) + "×"
    }

    /// `text` padded with spaces to `width` (right-aligned unless `left`).
    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let padding = String(repeating: " ", count: width - count)
        return left ? text + padding : padding + text
    }
}

/// Prints a line at once (stdout is a pipe when a child process or `tee` reads it).
enum Report {
    static func line(_ text: String = "") {
        print(text)
        fflush(nil)  // all streams: naming `stdout` is not concurrency-safe in Swift 6
    }
}
