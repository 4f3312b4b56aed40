import CRenameExchange
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directories an import uses for one namespace in the data directory, and the switch that
/// puts a staged store in the namespace's place so that a process killed at any moment leaves
/// the namespace with its old data or its new data, never a mix and never nothing.
///
/// - `NAME`: the namespace's store, as the server opens it.
/// - `NAME.import-staging`: the store an import writes; after an exchange, the old store on its
///   way out. Never a namespace name (it has a `.`), so no request can open it.
/// - `NAME.import-previous`: the old store moved aside, where the file system cannot exchange
///   two directories.
///
/// Everything here runs under the data directory's lock (``DataDirectoryLock``). Its errors name
/// paths: they go to the operator (the import and export commands, the server's start-up log),
/// never to a client.
package struct NamespaceDirectories: Sendable {
    static let stagingSuffix = ".import-staging"
    static let previousSuffix = ".import-previous"

    /// The data directory.
    package let dataDirectory: String
    /// The namespace.
    package let namespace: String

    /// The directories of `namespace` in `dataDirectory`.
    package init(dataDirectory: String, namespace: String) {
        self.dataDirectory = dataDirectory
        self.namespace = namespace
    }

    /// The namespace's store directory.
    package var live: String { path(namespace) }
    /// Where an import writes the new store.
    package var staging: String { path(namespace + NamespaceDirectories.stagingSuffix) }
    /// Where the old store waits while a switch without exchange runs.
    var previous: String { path(namespace + NamespaceDirectories.previousSuffix) }

    private func path(_ name: String) -> String { (dataDirectory as NSString).appendingPathComponent(name) }

    /// Whether the namespace has a store directory.
    package var exists: Bool { NamespaceDirectories.isDirectory(live) }

    // MARK: - Recovery

    /// Leaves the namespace as the last finished import (or its writes since) left it: an old
    /// store moved aside with no new one in its place goes back; staging and moved-aside
    /// directories are removed.
    ///
    /// - Throws: ``ServerError`` (`storageFailed`) when a directory cannot be moved or removed.
    package func recover() throws(ServerError) {
        if !exists && NamespaceDirectories.isDirectory(previous) {
            try NamespaceDirectories.move(previous, to: live)
            try NamespaceDirectories.syncDirectory(dataDirectory)
        }
        try NamespaceDirectories.remove(staging)
        try NamespaceDirectories.remove(previous)
    }

    /// Recovers every namespace of `dataDirectory` an interrupted import left directories for:
    /// what a server does when it starts, before it opens any namespace.
    ///
    /// - Returns: the namespaces recovered.
    /// - Throws: ``ServerError`` (`storageFailed`) when a directory cannot be moved or removed.
    @discardableResult
    package static func recoverInterruptedImports(in dataDirectory: String) throws(ServerError) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        var namespaces = Set<String>()
        for name in names {
            for suffix in [stagingSuffix, previousSuffix] where name.hasSuffix(suffix) {
                namespaces.insert(String(name.dropLast(suffix.count)))
            }
        }
        for namespace in namespaces.sorted() {
            try NamespaceDirectories(dataDirectory: dataDirectory, namespace: namespace).recover()
        }
        return namespaces.sorted()
    }

    // MARK: - The switch

    /// Puts the store in ``staging`` (complete and synced) in the namespace's place and removes
    /// the old one.
    ///
    /// Both directories are swapped in one step where the file system can (`renameat2` with
    /// `RENAME_EXCHANGE` on Linux, `renamex_np` on macOS); elsewhere, or with `exchange` false,
    /// the old store is first moved to ``previous`` (a crash then puts it back: ``recover()``).
    /// The data directory is synced after each step.
    ///
    /// - Throws: ``ServerError`` (`storageFailed`) when a rename or a sync fails.
    package func switchIn(exchange: Bool = true) throws(ServerError) {
        if !exists {
            try NamespaceDirectories.move(staging, to: live)
            try NamespaceDirectories.syncDirectory(dataDirectory)
            return
        }
        if exchange && rtdb_rename_exchange(staging, live) == 0 {
            try NamespaceDirectories.syncDirectory(dataDirectory)
            // `staging` now holds the old store.
            try NamespaceDirectories.remove(staging)
            return
        }
        if exchange && errno != EINVAL && errno != ENOSYS && errno != ENOTSUP {
            throw NamespaceDirectories.failure("cannot exchange \(staging) and \(live)")
        }
        try NamespaceDirectories.move(live, to: previous)
        try NamespaceDirectories.syncDirectory(dataDirectory)
        try NamespaceDirectories.move(staging, to: live)
        try NamespaceDirectories.syncDirectory(dataDirectory)
        try NamespaceDirectories.remove(previous)
    }

    // MARK: - File system

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    private static func failure(_ what: String) -> ServerError {
        ServerError(.storageFailed, "\(what): \(String(cString: strerror(errno)))")
    }

    private static func move(_ from: String, to: String) throws(ServerError) {
        guard rename(from, to) == 0 else { throw failure("cannot rename \(from) to \(to)") }
    }

    /// Removes `path` and everything below it, if it exists.
    static func remove(_ path: String) throws(ServerError) {
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw ServerError(.storageFailed, "cannot remove \(path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Flushes a directory's entries (renames, new files) to disk.
    static func syncDirectory(_ path: String) throws(ServerError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open \(path) to sync it") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync \(path)") }
    }

    /// Flushes every file below `path` and the directories holding them, so a store written
    /// without syncs is on disk before it is switched in.
    static func syncTree(_ path: String) throws(ServerError) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for name in names {
            let child = (path as NSString).appendingPathComponent(name)
            if isDirectory(child) {
                try syncTree(child)
                continue
            }
            let descriptor = open(child, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("cannot open \(child) to sync it") }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw failure("cannot sync \(child)") }
        }
        try syncDirectory(path)
    }
}
