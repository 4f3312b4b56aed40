import CoreTree

/// A regular expression literal of a rule (`/pattern/flags`), checked the way Firebase checks
/// them when rules are deployed and compiled once.
///
/// Firebase accepts only the flag `i`, `^` only at the start of the pattern and `$` only at its
/// end, and no empty alternative (`a|`, `(|a)`); the recorded fixtures reject
/// `/(^foo$|bar)/`, `/^(foo|)$/` and `/bar/ig`.
final class RuleRegex: @unchecked Sendable {
    // @unchecked: `Regex` is an immutable value once built and matching does not change it.
    let pattern: String
    let ignoresCase: Bool
    private let regex: Regex<AnyRegexOutput>

    struct Invalid: CodedError {
        var code: String { "invalidRegularExpression" }
        let message: String
        var underlyingError: (any Error)? = nil
    }

    init(pattern: String, flags: String) throws(Invalid) {
        for flag in flags where flag != "i" {
            throw Invalid(message: "regular expressions take only the flag i, not \(flag)")
        }
        try Self.checkShape(pattern)
        self.pattern = pattern
        ignoresCase = flags.contains("i")
        do {
            let compiled = try Regex(pattern)
            regex = ignoresCase ? compiled.ignoresCase() : compiled
        } catch {
            throw Invalid(message: "/\(pattern)/ is not a valid regular expression", underlyingError: error)
        }
    }

    /// Whether `text` contains a match.
    func matches(_ text: String) -> Bool {
        (try? regex.firstMatch(in: text)) != nil
    }

    private static func checkShape(_ pattern: String) throws(Invalid) {
        let characters = Array(pattern)
        var index = 0
        var inClass = false
        var alternativeIsEmpty = true
        while index < characters.count {
            let character = characters[index]
            defer { index += 1 }
            if character == "\\" {
                index += 1
                alternativeIsEmpty = false
                continue
            }
            if inClass {
                if character == "]" { inClass = false }
                continue
            }
            switch character {
            case "[":
                inClass = true
                alternativeIsEmpty = false
            case "^" where index != 0:
                throw Invalid(message: "^ may only start a regular expression")
            case "$" where index != characters.count - 1:
                throw Invalid(message: "$ may only end a regular expression")
            case "|", ")":
                if alternativeIsEmpty { throw Invalid(message: "a regular expression may not have an empty alternative") }
                alternativeIsEmpty = character == "|"
            case "(":
                alternativeIsEmpty = true
            case "^", "$":
                break
            default:
                alternativeIsEmpty = false
            }
        }
        if alternativeIsEmpty && pattern.contains("|") && pattern.last == "|" {
            throw Invalid(message: "a regular expression may not have an empty alternative")
        }
    }
}
