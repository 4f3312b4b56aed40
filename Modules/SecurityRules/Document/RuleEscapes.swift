/// One-letter escapes in the strings of rules documents and expressions (JavaScript's set).
enum RuleEscapes {
    /// The character `\<escaped>` stands for, or nil for `u` (four hex digits follow) and for a
    /// character that stands for itself (`\'`, `\"`, `\\`, `\/` ...).
    static func character(_ escaped: Unicode.Scalar) -> Unicode.Scalar? {
        switch escaped {
        case "n": "\n"
        case "t": "\t"
        case "r": "\r"
        case "b": "\u{8}"
        case "f": "\u{C}"
        case "v": "\u{B}"
        case "0": "\0"
        default: nil
        }
    }
}
