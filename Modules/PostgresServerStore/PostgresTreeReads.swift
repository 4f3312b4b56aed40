import CoreTree
import Logging
import PostgresNIO
import ServerCore

/// Reads of part of a namespace's rows (``TreeRows``), inside the caller's transaction.
enum PostgresTreeReads {
    /// The data at `path`.
    ///
    /// - Throws: ``ServerCore/ServerError/readTooLarge`` once the rows read exceed `limit` bytes.
    static func subtree(at path: TreePath, namespace: String, limit: Int, on connection: PostgresConnection,
                        logger: Logger) async throws -> Node {
        if try await hasLeafAbove(path, namespace: namespace, on: connection, logger: logger) { return .empty }
        let (from, to) = TreeRows.belowRange(path)
        var builder = TreeRows.Builder()
        var total = 0
        let rows = try await connection.query("""
            SELECT path, kind, value FROM rtdb_data WHERE namespace = \(namespace)
            AND (path = \(TreeRows.text(path)) OR (path >= \(from) AND path < \(to)))
            """, logger: logger)
        for try await (rowPath, kind, value) in rows.decode((String, Int16, String).self) {
            total += rowPath.utf8.count + value.utf8.count
            if total > limit { throw ServerError.readTooLarge }
            try builder.add(path: rowPath, kind: kind, value: value)
        }
        return builder.finish().child(at: path)
    }

    /// The children of `path` one level deep, found by seeking from one child's rows to the
    /// next (a loose index scan), so a child's size does not matter.
    static func shallow(at path: TreePath, namespace: String, limit: Int, on connection: PostgresConnection,
                        logger: Logger) async throws -> StoredShallowData {
        if try await hasLeafAbove(path, namespace: namespace, on: connection, logger: logger) { return StoredShallowData(leaf: nil, children: [:]) }
        let text = TreeRows.text(path)
        for try await value in try await connection.query("""
            SELECT value FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = \(text)
            """, logger: logger).decode(String.self) {
            return StoredShallowData(leaf: try TreeRows.decodeLeaf(value, at: text).withPriority(nil), children: [:])
        }
        let base = text + "/"
        let (from, to) = TreeRows.belowRange(path)
        let offset = Int32(base.utf8.count + 1)
        // Each step finds the first row after the rows of the child the previous step found: after
        // its own row, or after its descendants' range. A child's own row and its descendants are
        // not always neighbours (keys extending its name with a byte below '/' sort between), so a
        // child may be found twice; the walk only moves forward.
        let children = try await connection.query("""
            WITH RECURSIVE walk(found) AS (
                SELECT (SELECT min(path) FROM rtdb_data WHERE namespace = \(namespace) AND path >= \(from) AND path < \(to))
              UNION ALL
                SELECT (SELECT min(path) FROM rtdb_data WHERE namespace = \(namespace) AND path < \(to) AND path >= (
                    CASE WHEN strpos(substr(walk.found, \(offset)), '/') = 0 THEN walk.found || chr(1)
                    ELSE \(base) || split_part(substr(walk.found, \(offset)), '/', 1) || '0' END))
                FROM walk WHERE walk.found IS NOT NULL
            )
            SELECT DISTINCT split_part(substr(found, \(offset)), '/', 1) FROM walk WHERE found IS NOT NULL
            """, logger: logger)
        var names: [String] = []
        var total = 0
        for try await name in children.decode(String.self) {
            total += name.utf8.count + 6
            if total > limit { throw ServerError.readTooLarge }
            names.append(name)
        }
        var result: [ChildKey: Node?] = [:]
        for name in names { result[ChildKey(name)] = Optional<Node>.none }
        guard !names.isEmpty else { return StoredShallowData(leaf: nil, children: [:]) }
        let leaves = try await connection.query("""
            SELECT path, value FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = ANY(\(names.map { base + $0 }))
            """, logger: logger)
        for try await (leafPath, value) in leaves.decode((String, String).self) {
            total += value.utf8.count
            if total > limit { throw ServerError.readTooLarge }
            result[ChildKey(String(leafPath.dropFirst(base.count)))] = try TreeRows.decodeLeaf(value, at: leafPath).withPriority(nil)
        }
        result[.priority] = nil
        return StoredShallowData(leaf: nil, children: result)
    }

    /// Whether an ancestor of `path` is stored as a leaf (nothing lies below a leaf).
    private static func hasLeafAbove(_ path: TreePath, namespace: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard !path.isRoot else { return false }
        var ancestors: [String] = []
        var current = path.parent
        while let ancestor = current {
            ancestors.append(TreeRows.text(ancestor))
            current = ancestor.parent
        }
        for try await _ in try await connection.query("""
            SELECT 1 FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = ANY(\(ancestors)) LIMIT 1
            """, logger: logger).decode(Int.self) {
            return true
        }
        return false
    }
}
