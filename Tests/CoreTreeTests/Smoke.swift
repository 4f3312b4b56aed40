import Testing
@testable import CoreTree
@Test func smoke() throws { #expect(try Node(jsonString: "{\"a\":1}").childCount == 1) }
