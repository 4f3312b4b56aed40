import ArgumentParser
import Foundation

extension RTDBServerCommand {
    /// Every option's name (as on the command line, without `--`) and what it takes, read from
    /// the command's own declarations so a new option is configurable everywhere at once.
    static func optionKinds() throws -> [String: ConfigurationSources.Kind] {
        var kinds: [String: ConfigurationSources.Kind] = [:]
        for (name, value) in Mirror(reflecting: try RTDBServerCommand.parse([])).optionValues {
            let type = String(describing: Swift.type(of: value))
            let kind: ConfigurationSources.Kind =
                if type.hasPrefix("Flag<") { .flag }
                else if type.contains("<Int>") { .integer }
                else if type.contains("<Double>") { .number }
                else { .string }
            kinds[name] = kind
        }
        for meta in ConfigurationSources.metaOptions { kinds[meta] = nil }
        return kinds
    }

    /// The settings in effect as a config file (JSON), secrets in URLs masked, with a line on
    /// standard error for each one not left at its default.
    func effectiveSettings(_ sources: ConfigurationSources) -> String {
        let kinds = (try? RTDBServerCommand.optionKinds()) ?? [:]
        var fields: [String] = []
        for (name, value) in Mirror(reflecting: self).optionValues where kinds[name] != nil {
            var text = String(describing: value)
            if text == "nil" { continue }
            if text.hasPrefix("Optional("), text.hasSuffix(")") { text = String(text.dropFirst(9).dropLast()) }
            if name == "postgres-url" { text = RTDBServerCommand.maskingPassword(text) }
            let json: String
            switch kinds[name] {
            case .integer?, .number?, .flag?: json = text
            default: json = RTDBServerCommand.quoted(text)
            }
            fields.append("  \(RTDBServerCommand.quoted(name)): \(json)")
            if let source = sources.sources[name] {
                FileHandle.standardError.write(Data("\(name): from \(source)\n".utf8))
            }
        }
        return "{\n" + fields.sorted().joined(separator: ",\n") + "\n}"
    }

    private static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data, as: UTF8.self).dropFirst().dropLast().description
    }

    /// `postgres://user:secret@host/db` as `postgres://user:***@host/db`.
    private static func maskingPassword(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }
}

extension Mirror {
    /// The command's options and flags by command-line name (`maxConnections` → `max-connections`).
    var optionValues: [(name: String, value: Any)] {
        children.compactMap { child in
            guard let label = child.label, label.hasPrefix("_") else { return nil }
            var name = ""
            for character in label.dropFirst() {
                if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
            }
            return (name, child.value)
        }
    }
}
