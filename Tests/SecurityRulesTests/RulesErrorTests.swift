import CoreTree
import SecurityRules
import Testing

@Suite("rules errors")
struct RulesErrorTests {
    @Test("a document that is not JSON, a document of the wrong shape and a bad expression have their own codes")
    func codes() throws {
        let malformed = try #require(throws: RulesError.self) { try RuleSet(parsing: #"{"rules": {"#) }
        #expect(malformed.code == .malformedDocument)
        let shape = try #require(throws: RulesError.self) { try RuleSet(parsing: #"{"rules": {".read": 3}}"#) }
        #expect(shape.code == .invalidRules)
        let expression = try #require(throws: RulesError.self) { try RuleSet(parsing: #"{"rules": {".read": "auth ==="}}"#) }
        #expect(expression.code == .invalidExpression)
        #expect(expression.underlyingError is RulesError, "the expression's own error, placed in the document, is kept")
    }

    @Test("equality still compares the line and the column")
    func equalityComparesTheLocation() {
        #expect(RulesError("x", line: 1, column: 2) == RulesError("x", line: 1, column: 2))
        #expect(RulesError("x", line: 1, column: 2) != RulesError("x", line: 1, column: 3))
        #expect(Set([RulesError("x", line: 1, column: 2), RulesError("x", line: 2, column: 2)]).count == 2)
    }
}
