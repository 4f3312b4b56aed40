import ArgumentParser
import Configuration
import SystemPackage
import Foundation

/// Every rtdb-server option from three places, the first that sets it winning: the command line,
/// environment variables (`RTDB_` and the option's name in capitals with `_` for `-`, as
/// `RTDB_MAX_CONNECTIONS`), and a JSON config file (`--config FILE`, or `RTDB_CONFIG`) whose keys are
/// the options' names (`{"port": 9000, "max-connections": 1000, "exactly-once": false}`).
///
/// The file and the environment are read with swift-configuration; what they set becomes
/// command-line arguments in front of the real ones, so ArgumentParser checks every value the same
/// way. An unknown key in the file, or a value of the wrong type, is an error that names the key
/// and where it came from.
struct ConfigurationSources {
    /// Where a setting came from.
    enum Source: CustomStringConvertible {
        case commandLine, environment(String), file(String)

        var description: String {
            switch self {
            case .commandLine: "the command line"
            case .environment(let name): "the environment (\(name))"
            case .file(let path): "the config file \(path)"
            }
        }
    }

    /// What each option takes.
    enum Kind { case string, integer, number, flag }

    /// The arguments to parse, and which options the file and the environment set.
    private(set) var arguments: [String] = []
    private(set) var sources: [String: Source] = [:]

    /// Options that say where the configuration comes from, never read from it.
    static let metaOptions: Set<String> = ["config", "print-config"]

    /// Merges `environment` and the config file under `commandLine`.
    ///
    /// - Throws: ``ValidationError`` naming the key for an unreadable file, an unknown key, or a
    ///   value of the wrong type.
    init(commandLine: [String], environment: [String: String], options: [String: Kind]) async throws {
        let given = Set(commandLine.compactMap(ConfigurationSources.optionName))
        for name in given where options[name] != nil { sources[name] = .commandLine }
        let configPath = ConfigurationSources.value(of: "--config", in: commandLine) ?? environment["RTDB_CONFIG"]

        let environmentReader = ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: environment))
        var prefix: [String] = []
        for (name, kind) in options.sorted(by: { $0.key < $1.key }) where sources[name] == nil {
            let variable = "RTDB_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            guard let text = environmentReader.string(forKey: ConfigKey(["rtdb", name])) else { continue }
            prefix += try ConfigurationSources.arguments(name, kind, text: text, from: .environment(variable))
            sources[name] = .environment(variable)
        }
        if let configPath {
            prefix += try await fileArguments(configPath, options: options)
        }
        arguments = prefix + commandLine
    }

    private mutating func fileArguments(_ path: String, options: [String: Kind]) async throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read the config file \(path)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ValidationError("the config file \(path) is not a JSON object of option names and values")
        }
        for key in object.keys.sorted() where options[key] == nil {
            let hint = ConfigurationSources.metaOptions.contains(key) ? " (it is only read from the command line)" : ""
            throw ValidationError("the config file \(path) has an unknown key \"\(key)\"\(hint); keys are rtdb-server's option names, such as \"max-connections\"")
        }
        let reader = ConfigReader(provider: try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
        var result: [String] = []
        for (name, kind) in options.sorted(by: { $0.key < $1.key }) where object[name] != nil && sources[name] == nil {
            let key = ConfigKey([name])
            let text: String?
            switch kind {
            case .string: text = try? reader.requiredString(forKey: key)
            case .integer: text = (try? reader.requiredInt(forKey: key)).map(String.init)
            case .number: text = (try? reader.requiredDouble(forKey: key)).map { String($0) }
            case .flag: text = (try? reader.requiredBool(forKey: key)).map(String.init)
            }
            guard let text else {
                throw ValidationError("the config file \(path): \"\(name)\" must be \(ConfigurationSources.expected(kind))")
            }
            result += try ConfigurationSources.arguments(name, kind, text: text, from: .file(path))
            sources[name] = .file(path)
        }
        return result
    }

    /// The command-line form of one setting, checked for its kind.
    private static func arguments(_ name: String, _ kind: Kind, text: String, from source: Source) throws -> [String] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .string:
            return ["--\(name)", text]
        case .integer where Int(trimmed) != nil, .number where Double(trimmed) != nil:
            return ["--\(name)", trimmed]
        case .flag:
            switch trimmed.lowercased() {
            case "true", "1", "yes", "on": return ["--enable-\(name)"]
            case "false", "0", "no", "off": return ["--disable-\(name)"]
            default: break
            }
        default:
            break
        }
        throw ValidationError("\(name) from \(source) must be \(expected(kind)), not \"\(text)\"")
    }

    private static func expected(_ kind: Kind) -> String {
        switch kind {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .flag: "true or false"
        }
    }

    /// The option a command-line argument names (`--port 1`, `--port=1`, `--enable-exactly-once`).
    private static func optionName(_ argument: String) -> String? {
        guard argument.hasPrefix("--") else { return nil }
        var name = String(argument.dropFirst(2).prefix { $0 != "=" })
        for prefix in ["enable-", "disable-"] where name.hasPrefix(prefix) { name.removeFirst(prefix.count) }
        return name
    }

    /// The value given to `option` on the command line, if any.
    private static func value(of option: String, in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
        }
        return nil
    }
}
