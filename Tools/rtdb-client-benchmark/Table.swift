/// A table of text cells printed with aligned columns (the first column left-aligned).
struct Table {
    let headers: [String]
    private(set) var rows: [[String]] = []

    init(_ headers: [String]) { self.headers = headers }

    mutating func add(_ cells: [String]) { rows.append(cells) }

    /// Prints the table, indented by `indent` spaces.
    func print(indent: Int = 2) {
        let all = [headers] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        let prefix = String(repeating: " ", count: indent)
        func render(_ row: [String]) -> String {
            row.enumerated().map { index, cell in Format.pad(cell, widths[index], left: index == 0) }
                .joined(separator: "  ")
        }
        Report.line(prefix + render(headers))
        Report.line(prefix + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        for row in rows { Report.line(prefix + render(row)) }
    }
}
