import Foundation

/// The report as Markdown tables: results (backend × workload) and footprints.
public enum MarkdownReport {
    /// Both tables, with a line on where and how they were measured.
    public static func render(_ report: BenchReport) -> String {
        let machine = report.machine
        var lines = [
            "Measured \(machine.date) on \(machine.cores) cores, \(String(format: "%.1f", Double(machine.memoryBytes) / 1e9)) GB of memory, \(machine.system); \(machine.build) build; median of \(machine.runs) runs (min–max). Ratio to raw: our time per operation ÷ the raw C library's (1.00× = no overhead).",
            "",
            "| workload | backend | median | min – max | unit | ratio to raw |",
            "|---|---|---:|---:|---|---:|",
        ]
        for result in report.results {
            lines.append(
                "| \(result.workload) | \(result.backend) | \(NumberFormat.figure(result.median)) | \(NumberFormat.figure(result.min)) – \(NumberFormat.figure(result.max)) | \(result.unit) | \(result.backend.hasSuffix("-raw") ? "" : NumberFormat.ratio(result.ratioToRaw)) |")
        }
        if !report.footprint.isEmpty {
            lines += [
                "",
                "| backend | logical bytes | on disk | disk ÷ logical | raw engine on disk | after the prune: logical / on disk |",
                "|---|---:|---:|---:|---:|---:|",
            ]
            for row in report.footprint {
                lines.append(
                    "| \(row.backend) | \(NumberFormat.megabytes(row.logicalBytes)) | \(NumberFormat.megabytes(row.diskBytes)) | \(String(format: "%.2f×", row.overhead)) | \(row.rawDiskBytes.map(NumberFormat.megabytes) ?? "–") | \(row.logicalBytesAfterPrune.map(NumberFormat.megabytes) ?? "–") / \(row.diskBytesAfterPrune.map(NumberFormat.megabytes) ?? "–") |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
