import CoreTree
import FuzzSupport
import SecurityRules

/// The rules parser and evaluator. The first byte picks the mode: even, the rest is a whole rules
/// document; odd, it is one expression for a `.read`, `.write` or `.validate` rule at a `$key`
/// location.
///
/// Properties: a document is compiled or refused with a `RulesError` that has a line and column
/// inside the text; a compiled document's strict JSON compiles to rules that decide every sample
/// request the same way; an expression that compiles on its own compiles inside a document and
/// is evaluated against sample data without trapping.
public func checkRules(_ input: [UInt8]) {
    guard let control = input.first, let text = String(validating: input.dropFirst(), as: UTF8.self) else { return }
    if control & 1 == 0 {
        checkDocument(text)
    } else {
        checkExpression(text, kind: RuleKind.allCases[Int(control >> 1) % RuleKind.allCases.count])
    }
}

func checkDocument(_ text: String) {
    let rules: RuleSet
    do {
        rules = try RuleSet(parsing: text)
    } catch {
        checkLocated(error, in: text)
        return
    }
    let strict = rules.strictJSON
    do {
        let again = try RuleSet(parsing: strict)
        fuzzRequire(again.strictJSON == strict, "strict JSON \(strict) wrote back as \(again.strictJSON)")
        for request in RuleSamples.requests {
            fuzzRequire(
                request.judge(rules) == request.judge(again),
                "\(request) is judged differently by \(text.debugDescription) and its strict JSON \(strict)")
        }
    } catch {
        fatalError("the strict JSON \(strict) of \(text.debugDescription) does not compile: \(error)")
    }
}

func checkExpression(_ source: String, kind: RuleKind) {
    do {
        _ = try RuleExpression(source, kind: kind, wildcards: ["$key"])
    } catch {
        fuzzRequire(error.line >= 1 && error.column >= 1, "a refusal without a place: \(error)")
        return
    }
    let document = "{\"rules\": {\"$key\": {\"\(kind.rawValue)\": \(Node(.string(source)).jsonString())}}}"
    do {
        let rules = try RuleSet(parsing: document)
        for request in RuleSamples.requests { _ = request.judge(rules) }
    } catch {
        fatalError("\(source.debugDescription) compiles alone but not in \(document): \(error)")
    }
}

/// A refusal names a place inside the text (lines and columns from 1). Lines are counted
/// generously: every scalar that may end a line starts another.
func checkLocated(_ error: RulesError, in text: String) {
    let breaks: Set<Unicode.Scalar> = ["\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"]
    let lines = 1 + text.unicodeScalars.filter { breaks.contains($0) }.count
    // A problem inside an expression written with escapes (\n in the JSON string) is located by
    // the expression's own lines: only documents without backslashes are held to their lines.
    if !text.unicodeScalars.contains("\\") {
        fuzzRequire(error.line >= 1 && error.line <= max(1, lines), "\(error) names line \(error.line) of \(lines)")
    }
    fuzzRequire(error.column >= 1, "\(error) names column \(error.column)")
}
