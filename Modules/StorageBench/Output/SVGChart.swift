import Foundation

/// The report as an SVG a person reads at a glance: a panel per workload with a bar per backend,
/// through our engine (solid) beside the raw C library (striped), whiskers from min to max, the
/// ratio to raw beside each bar, a log scale where a panel's figures span more than 20×, and the
/// disk's own fsync rate as a dashed line on the append panels. The footprint panel compares
/// logical bytes with bytes on disk.
public enum SVGChart {
    static let width = 1_000.0
    static let panelWidth = 485.0
    static let labelWidth = 92.0
    static let valueWidth = 118.0
    static let rowHeight = 16.0
    static let pairGap = 9.0

    /// Colours per backend, in registration order after these.
    static let palette = ["#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a"]

    /// The chart for `report`.
    public static func render(_ report: BenchReport) -> String {
        let backends = orderedBackends(report)
        var panels: [String] = []
        var heights: [Double] = []
        let disk = report.result(.diskFsync, "disk")
        for workload in Workload.allCases where workload != .diskFsync && workload != .footprint {
            let rows = backends.flatMap { name in
                [report.result(workload, name), report.result(workload, "\(name)-raw")].compactMap { $0 }
            }
            guard !rows.isEmpty else { continue }
            let limit = (workload == .append || workload == .append8) ? disk?.median : nil
            let (svg, height) = timedPanel(workload, rows: rows, backends: backends, limit: limit)
            panels.append(svg)
            heights.append(height)
        }
        if !report.footprint.isEmpty {
            let (svg, height) = footprintPanel(report.footprint, backends: backends)
            panels.append(svg)
            heights.append(height)
        }

        // Two columns; each row of panels as tall as its taller panel.
        let top = 78.0
        var y = top
        var body = ""
        for start in stride(from: 0, to: panels.count, by: 2) {
            let rowHeight = heights[start..<min(start + 2, panels.count)].max() ?? 0
            for column in 0..<min(2, panels.count - start) {
                let x = 10 + Double(column) * (panelWidth + 20)
                body += "<g transform=\"translate(\(x),\(y))\">\(panels[start + column])</g>\n"
            }
            y += rowHeight + 18
        }
        let height = y + 4
        let machine = report.machine
        var header = "<text x=\"10\" y=\"24\" class=\"title\">rtdb-bench: storage backends through our engine and raw</text>\n"
        header += "<text x=\"10\" y=\"44\" class=\"note\">\(escape("\(machine.cores) cores, \(machine.system), \(machine.build) build, median of \(machine.runs) runs, whiskers min–max; \(machine.date)"))</text>\n"
        header += legend(backends, y: 60)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <style>
            .title { font-size: 18px; font-weight: bold; fill: #222; }
            .panel { font-size: 13px; font-weight: bold; fill: #222; }
            .note { font-size: 11px; fill: #555; }
            .label { font-size: 11px; fill: #222; }
            .value { font-size: 10px; fill: #222; }
            .tick { font-size: 9px; fill: #666; }
            </style>
            <defs>\(patterns(backends))</defs>
            <rect width="100%" height="100%" fill="white"/>
            \(header)\(body)</svg>

            """
    }

    // MARK: Panels

    private static func timedPanel(_ workload: Workload, rows: [BenchResult], backends: [String], limit: Double?) -> (String, Double) {
        var values = rows.flatMap { [$0.min, $0.max, $0.median] }.filter { $0 > 0 }
        if let limit { values.append(limit) }
        let scale = Scale(values: values)
        let direction = workload.higherIsBetter ? "higher is better" : "lower is better"
        var svg = "<text x=\"0\" y=\"14\" class=\"panel\">\(escape("\(workload.rawValue) — \(workload.unit), \(direction)"))</text>\n"
        svg += "<text x=\"0\" y=\"29\" class=\"note\">\(escape(workload.summary))</text>\n"
        var y = 40.0
        let plotTop = y
        var previousBackend: String?
        for row in rows {
            let isRaw = row.backend.hasSuffix("-raw")
            let backend = isRaw ? String(row.backend.dropLast(4)) : row.backend
            if let previousBackend, previousBackend != backend { y += pairGap }
            previousBackend = backend
            let color = colour(of: backend, in: backends)
            let fill = isRaw ? "url(#stripes-\(backend))" : color
            let end = scale.position(row.median)
            svg += "<text x=\"\(labelWidth - 6)\" y=\"\(y + rowHeight - 4)\" text-anchor=\"end\" class=\"label\">\(escape(isRaw ? "\(backend) raw" : backend))</text>\n"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 1)\" width=\"\(max(1, end))\" height=\"\(rowHeight - 2)\" fill=\"\(fill)\" stroke=\"\(color)\" stroke-width=\"1\"/>\n"
            let low = labelWidth + scale.position(row.min)
            let high = labelWidth + scale.position(row.max)
            let middle = y + rowHeight / 2
            svg += "<path d=\"M\(low),\(middle) H\(high) M\(low),\(middle - 4) V\(middle + 4) M\(high),\(middle - 4) V\(middle + 4)\" stroke=\"#222\" stroke-width=\"1\"/>\n"
            var text = NumberFormat.figure(row.median)
            if !isRaw, let ratio = row.ratioToRaw { text += " (\(NumberFormat.ratio(ratio)) raw)" }
            svg += "<text x=\"\(labelWidth + max(end, scale.position(row.max)) + 4)\" y=\"\(y + rowHeight - 4)\" class=\"value\">\(escape(text))</text>\n"
            y += rowHeight
        }
        let plotBottom = y + 4
        if let limit {
            let x = labelWidth + scale.position(limit)
            svg += "<path d=\"M\(x),\(plotTop - 4) V\(plotBottom)\" stroke=\"#c00\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n"
            svg += "<text x=\"\(x - 3)\" y=\"\(plotTop - 1)\" text-anchor=\"end\" class=\"tick\" fill=\"#c00\">disk fsync \(escape(NumberFormat.figure(limit)))/s</text>\n"
        }
        svg += axis(scale, top: plotTop, bottom: plotBottom, unit: workload.unit)
        return (svg, plotBottom + 30)
    }

    private static func footprintPanel(_ rows: [FootprintRow], backends: [String]) -> (String, Double) {
        var values: [Double] = []
        for row in rows {
            values.append(Double(row.logicalBytes) / 1_000_000)
            values.append(Double(row.diskBytes) / 1_000_000)
            if let raw = row.rawDiskBytes { values.append(Double(raw) / 1_000_000) }
        }
        let scale = Scale(values: values, forceLinear: true)
        var svg = "<text x=\"0\" y=\"14\" class=\"panel\">footprint — MB, lower is better</text>\n"
        svg += "<text x=\"0\" y=\"29\" class=\"note\">\(escape("logical bytes (grey) against bytes on disk, after the cache workloads"))</text>\n"
        var y = 40.0
        let plotTop = y
        for (index, row) in rows.enumerated() {
            if index > 0 { y += pairGap }
            let color = colour(of: row.backend, in: backends)
            var bars: [(String, Double, String, String)] = [
                ("\(row.backend) logical", Double(row.logicalBytes), "#bbbbbb", "#888888"),
                ("\(row.backend) on disk", Double(row.diskBytes), color, color),
            ]
            if let raw = row.rawDiskBytes { bars.append(("\(row.backend) raw", Double(raw), "url(#stripes-\(row.backend))", color)) }
            for (label, bytes, fill, stroke) in bars {
                let end = scale.position(bytes / 1_000_000)
                svg += "<text x=\"\(labelWidth - 6)\" y=\"\(y + rowHeight - 4)\" text-anchor=\"end\" class=\"label\">\(escape(label))</text>\n"
                svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 1)\" width=\"\(max(1, end))\" height=\"\(rowHeight - 2)\" fill=\"\(fill)\" stroke=\"\(stroke)\" stroke-width=\"1\"/>\n"
                var text = NumberFormat.megabytes(Int64(bytes))
                if label.hasSuffix("on disk") { text += String(format: " (%.2f× logical)", row.overhead) }
                svg += "<text x=\"\(labelWidth + end + 4)\" y=\"\(y + rowHeight - 4)\" class=\"value\">\(escape(text))</text>\n"
                y += rowHeight
            }
        }
        let plotBottom = y + 4
        svg += axis(scale, top: plotTop, bottom: plotBottom, unit: "MB")
        return (svg, plotBottom + 30)
    }

    /// Grid lines, tick labels and the axis title under a panel.
    private static func axis(_ scale: Scale, top: Double, bottom: Double, unit: String) -> String {
        var svg = "<path d=\"M\(labelWidth),\(top - 2) V\(bottom) H\(labelWidth + Scale.length)\" stroke=\"#444\" fill=\"none\" stroke-width=\"1\"/>\n"
        for tick in scale.ticks {
            let x = labelWidth + scale.position(tick)
            svg += "<path d=\"M\(x),\(top - 2) V\(bottom)\" stroke=\"#ddd\" stroke-width=\"0.8\"/>\n"
            svg += "<text x=\"\(x)\" y=\"\(bottom + 11)\" text-anchor=\"middle\" class=\"tick\">\(NumberFormat.axis(tick))</text>\n"
        }
        svg += "<text x=\"\(labelWidth + Scale.length / 2)\" y=\"\(bottom + 24)\" text-anchor=\"middle\" class=\"note\">\(escape(scale.isLog ? "\(unit) (log scale)" : unit))</text>\n"
        return svg
    }

    private static func legend(_ backends: [String], y: Double) -> String {
        var svg = ""
        var x = 10.0
        for backend in backends {
            let color = colour(of: backend, in: backends)
            svg += "<rect x=\"\(x)\" y=\"\(y)\" width=\"14\" height=\"10\" fill=\"\(color)\"/><text x=\"\(x + 18)\" y=\"\(y + 9)\" class=\"label\">\(escape(backend))</text>\n"
            x += 26 + Double(backend.count) * 7
        }
        svg += "<text x=\"\(x + 10)\" y=\"\(y + 9)\" class=\"note\">solid: through our engine · striped: the same rows through the raw C library · (n× raw): our cost per operation over raw</text>\n"
        return svg
    }

    private static func patterns(_ backends: [String]) -> String {
        backends.map { backend in
            let color = colour(of: backend, in: backends)
            return "<pattern id=\"stripes-\(backend)\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"white\"/><rect width=\"3\" height=\"6\" fill=\"\(color)\" fill-opacity=\"0.55\"/></pattern>"
        }.joined()
    }

    private static func orderedBackends(_ report: BenchReport) -> [String] {
        var names: [String] = []
        for name in report.results.map(\.backend) + report.footprint.map(\.backend) where name != "disk" {
            let base = name.hasSuffix("-raw") ? String(name.dropLast(4)) : name
            if !names.contains(base) { names.append(base) }
        }
        return names
    }

    private static func colour(of backend: String, in backends: [String]) -> String {
        palette[(backends.firstIndex(of: backend) ?? 0) % palette.count]
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Maps figures to bar lengths: linear from zero, or logarithmic between powers of ten when the
/// figures span more than 20×.
struct Scale {
    /// The bar area's length in points.
    static let length = SVGChart.panelWidth - SVGChart.labelWidth - SVGChart.valueWidth

    let isLog: Bool
    let lower: Double
    let upper: Double

    init(values: [Double], forceLinear: Bool = false) {
        let positive = values.filter { $0 > 0 }
        let smallest = positive.min() ?? 1
        let largest = positive.max() ?? 1
        if !forceLinear && largest / smallest > 20 {
            isLog = true
            lower = pow(10, floor(log10(smallest)))
            upper = pow(10, ceil(log10(largest * 1.0001)))
        } else {
            isLog = false
            lower = 0
            upper = Scale.niceCeiling(largest)
        }
    }

    /// The bar length for `value`.
    func position(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        if isLog {
            let clamped = min(max(value, lower), upper)
            return Scale.length * (log10(clamped) - log10(lower)) / (log10(upper) - log10(lower))
        }
        return Scale.length * min(value, upper) / upper
    }

    /// Where grid lines go.
    var ticks: [Double] {
        if isLog {
            var ticks: [Double] = []
            var tick = lower
            while tick <= upper * 1.0001 {
                ticks.append(tick)
                tick *= 10
            }
            return ticks
        }
        let step = Scale.niceCeiling(upper / 5)
        return stride(from: 0, through: upper * 1.0001, by: step).map { $0 }
    }

    /// The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 2.5, 5, 10] where factor * power >= value * 0.9999 { return factor * power }
        return 10 * power
    }
}
