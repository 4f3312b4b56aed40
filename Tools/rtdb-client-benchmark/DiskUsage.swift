import StorageBench

extension DiskUsage {
    /// `12.3 MB (alloc 4.5 MB)`.
    var text: String {
        "\(Format.bytes(apparentBytes)) (alloc \(Format.bytes(allocatedBytes)))"
    }
}
