import CoreTree
import Foundation

/// Finds files of the shared spec directory (`../shared/spec` beside the package root).
enum SpecFile {
    /// The package root: the nearest directory above this file that holds Package.swift.
    static var packageRoot: URL {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }

    /// The raw contents of `../shared/spec/<name>`, or a message saying where it was expected.
    static func data(_ name: String) -> Result<Data, SpecFileMissing> {
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/spec/\(name)")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return .failure(SpecFileMissing(message: "Spec file \(url.path) is missing: the tests read it from ../shared/spec beside the package; check out the shared material there."))
        }
        return .success(data)
    }

    /// The parsed contents of `../shared/spec/<name>`, or a message saying where it was expected.
    static func load(_ name: String) -> Result<Node, SpecFileMissing> {
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/spec/\(name)")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return .failure(SpecFileMissing(message: "Spec file \(url.path) is missing: the tests read it from ../shared/spec beside the package; check out the shared material there."))
        }
        do {
            return .success(try Node(json: data))
        } catch {
            return .failure(SpecFileMissing(message: "Spec file \(url.path) could not be parsed: \(error)"))
        }
    }
}

struct SpecFileMissing: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
