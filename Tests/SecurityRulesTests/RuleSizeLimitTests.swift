import CoreTree
import SecurityRules
import Testing

/// Expressions too long or too deeply nested are refused with a located error instead of
/// exhausting the stack of the parser or the evaluator (found while writing `Tools/fuzz rules`).
@Suite("rule size limits")
struct RuleSizeLimitTests {
    @Test("Deeply nested parentheses, ! and - are refused", arguments: [
        String(repeating: "(", count: 100_000) + "true" + String(repeating: ")", count: 100_000),
        String(repeating: "!", count: 100_000) + "true",
        "1 == " + String(repeating: "-", count: 100_000) + "1",
        String(repeating: "(", count: 65) + "true" + String(repeating: ")", count: 65),
    ])
    func deepNestingIsRefused(_ source: String) {
        #expect {
            _ = try RuleExpression(source, kind: .read)
        } throws: { error in
            // The longest ones pass the token limit first.
            let message = (error as? RulesError)?.message ?? ""
            return message.contains("nests deeper than") || message.contains("more than 2000 tokens")
        }
    }

    @Test("A chain of 100,000 operators is refused")
    func longChainIsRefused() {
        let source = "true" + String(repeating: " || false", count: 100_000)
        #expect {
            _ = try RuleExpression(source, kind: .read)
        } throws: { error in
            (error as? RulesError)?.message.contains("more than 2000 tokens") == true
        }
    }

    @Test("Expressions within the limits compile and are judged")
    func expressionsWithinLimitsWork() throws {
        let nested = String(repeating: "(", count: 40) + "auth != null" + String(repeating: ")", count: 40)
        let chain = "false" + String(repeating: " || false", count: 990) + " || auth != null"
        // Evaluated in a loop down the chain, not by recursion (a 990-term chain overflowed the
        // stack under ThreadSanitizer): the results are still those of left-to-right evaluation.
        let andChain = "true" + String(repeating: " && true", count: 990) + " && auth != null"
        let sum = "1" + String(repeating: " + 1", count: 990) + " == 991 && auth != null"
        let mixed = "false" + String(repeating: " || 2 - 1 - 1 == 1", count: 200) + " || auth != null"
        for source in [nested, chain, andChain, sum, mixed] {
            let document = "{\"rules\": {\".read\": \(Node(.string(source)).jsonString())}}"
            let rules = try RuleSet(parsing: document)
            #expect(rules.canRead("a", root: .empty, auth: Node(.string("u")), now: 0))
            #expect(!rules.canRead("a", root: .empty, auth: nil, now: 0))
        }
    }
}
