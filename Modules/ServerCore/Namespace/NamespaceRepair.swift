public import Foundation

/// The documented recovery for a damaged namespace: move its store aside, so the namespace
/// starts empty on its next use while the damaged copy stays for inspection or salvage.
public enum NamespaceRepair {
    /// Moves namespace `name`'s directory in `dataDirectory` to `<name>.damaged-<UTC time>`
    /// (a name no request can open) and returns the new path.
    ///
    /// It takes the data directory's lock first, so it refuses while a server uses the directory.
    public static func moveAside(_ name: String, dataDirectory: String, now: Date = Date()) throws -> String {
        guard NamespaceRegistry.isValidName(name) else {
            throw ServerError(.invalidArgument, "\"\(name)\" is not a namespace name (1 to 63 letters, digits, '-' and '_')")
        }
        let lock = try DataDirectoryLock(path: dataDirectory)
        defer { withExtendedLifetime(lock) {} }
        let source = (dataDirectory as NSString).appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerError(.invalidArgument, "there is no namespace \(name) in \(dataDirectory)")
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let destination = source + ".damaged-" + formatter.string(from: now)
        do {
            try FileManager.default.moveItem(atPath: source, toPath: destination)
        } catch {
            throw ServerError(.storageFailed, "cannot move \(source) to \(destination): \(error.localizedDescription)", underlying: error)
        }
        return destination
    }
}
