public import Foundation

/// Files of the shared, read-only spec directory (`../shared/spec` beside the package root), which
/// tests read in place and never copy.
public enum SharedSpec {
    /// A spec file that is not where the tests expect it.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The package root: the nearest directory above `filePath` holding Package.swift.
    public static func packageRoot(from filePath: String = #filePath) -> URL {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory }
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }

    /// The contents of `../shared/spec/<relativePath>`.
    public static func data(_ relativePath: String) throws -> Data {
        let url = packageRoot().deletingLastPathComponent().appendingPathComponent("shared/spec/\(relativePath)")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw Missing(description: "\(url.path) is missing: the tests read it from ../shared/spec beside the package")
        }
        return data
    }

    /// The names of the files in `../shared/spec/<relativeDirectory>`.
    public static func files(in relativeDirectory: String) throws -> [String] {
        let url = packageRoot().deletingLastPathComponent().appendingPathComponent("shared/spec/\(relativeDirectory)")
        return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}
