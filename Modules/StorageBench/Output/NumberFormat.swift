import Foundation

/// How figures are written in the table and the chart.
enum NumberFormat {
    /// A figure with a sensible number of digits: `25,960`, `412`, `3.41`, `0.052`.
    static func figure(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000 { return grouped(Int(value.rounded())) }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }

    /// `1234567` as `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// A ratio: `1.08×`.
    static func ratio(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(format: "%.2f×", value)
    }

    /// Bytes in MB (10⁶), one decimal: `10.4 MB`.
    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }

    /// A short axis label: `1k`, `10k`, `1M`, `0.1`.
    static func axis(_ value: Double) -> String {
        if value >= 1_000_000 { return trimmed(value / 1_000_000) + "M" }
        if value >= 1_000 { return trimmed(value / 1_000) + "k" }
        return trimmed(value)
    }

    private static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}
