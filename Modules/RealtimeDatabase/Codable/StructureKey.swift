/// A coding key made by the structure coders: a dictionary's key, an array index, `super`.
struct StructureKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    /// The key of an unkeyed container's element, as Foundation's coders name it.
    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    static let `super` = StructureKey(stringValue: "super")
}

/// The key conversions of the `convertToSnakeCase` and `convertFromSnakeCase` strategies.
enum SnakeCase {
    /// `myURLValue` as `my_url_value`: an underscore goes before an upper-case letter that follows
    /// a letter or digit other than an upper-case one, and before the last upper-case letter of a
    /// run when a lower-case letter follows it; everything is then lower-cased. Leading
    /// underscores are kept, and no underscore is added after one.
    static func fromCamelCase(_ key: String) -> String {
        let characters = Array(key)
        guard characters.contains(where: \.isUppercase) else { return key }
        var result = ""
        result.reserveCapacity(characters.count + 4)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0, characters[index - 1] != "_" {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if !previous.isUppercase || next?.isLowercase == true { result.append("_") }
            }
            result += character.lowercased()
        }
        return result
    }

    /// `my_url_value` as `myUrlValue`: the words between underscores after the first are
    /// capitalized (upper-case first letter, lower-case rest) and joined; the first is
    /// lower-cased. A key without an underscore between words is returned as it is; leading and
    /// trailing underscores are kept.
    static func toCamelCase(_ key: String) -> String {
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        let last = key.lastIndex(where: { $0 != "_" })!
        let words = key[first...last].split(separator: "_")
        guard words.count > 1 else { return key }
        var result = String(key[..<first]) + words[0].lowercased()
        for word in words.dropFirst() {
            result += word.prefix(1).uppercased() + word.dropFirst().lowercased()
        }
        return result + key[key.index(after: last)...]
    }
}
