import Testing
@testable import CoreTree

/// A reader given the location its document is written at checks the data as written there, as
/// `Validation.validateWrite` does: the REST server relies on it to check a body's data once.
@Suite("JSON stream reader: the location checked")
struct JSONStreamReaderLocationTests {
    private static let deep = TreePath(unchecked: (1...30).map { "l\($0)" }.joined(separator: "/"))

    private static func read(_ text: String, with reader: JSONStreamReader) throws(CoreTreeError) -> [JSONStreamItem] {
        var reader = reader
        return try reader.read(Array(text.utf8)) + reader.finish()
    }

    @Test("data within the limits at the root breaks them at a deep location, whole or member by member, value or update")
    func limitsCountTheLocation() throws {
        let document = #"{"b":{"c":{"d":1}}}"#
        _ = try Self.read(document, with: JSONStreamReader())
        // 30 + 3 levels: refused, naming the byte; small windows read it member by member.
        for subtreeBytes in [1, 1 << 20] {
            #expect {
                _ = try Self.read(document, with: JSONStreamReader(subtreeBytes: subtreeBytes, location: Self.deep))
            } throws: { error in
                let error = error as? CoreTreeError
                return error?.code == .pathTooDeep && error?.message.hasPrefix("At byte ") == true
            }
            #expect(throws: CoreTreeError.self) {
                _ = try Self.read(#"{"b/c":{"d":1}}"#, with: .update(subtreeBytes: subtreeBytes, location: Self.deep))
            }
        }
        _ = try Self.read(#"{"b/c":{"d":1}}"#, with: .update())
        // 29 + 3 = 32 levels: at the limit, accepted; the items' paths stay relative to the document.
        let edge = TreePath(unchecked: (1...29).map { "l\($0)" }.joined(separator: "/"))
        let items = try Self.read(document, with: JSONStreamReader(location: edge))
        #expect(items.map(\.path) == [.root])
        // The location's own path counts toward 768 bytes.
        let long = TreePath(unchecked: String(repeating: "k", count: 700))
        #expect(throws: CoreTreeError.self) {
            _ = try Self.read(#"{"\#(String(repeating: "m", count: 80))":1}"#, with: JSONStreamReader(location: long))
        }
        // A priority written at a `.priority` location must be one.
        #expect(throws: CoreTreeError.self) {
            _ = try Self.read("true", with: JSONStreamReader(location: TreePath(unchecked: "x/.priority")))
        }
        _ = try Self.read("3", with: JSONStreamReader(location: TreePath(unchecked: "x/.priority")))
    }
}
