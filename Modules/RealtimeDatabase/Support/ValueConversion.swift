import CoreTree
import Foundation

/// Turns the Foundation values users pass (`Any?`: dictionaries with `AnyHashable` keys,
/// arrays, numbers, strings, `ServerValue` placeholders) into nodes, with errors that say what
/// was wrong.
enum ValueConversion {
    /// The node for a user value.
    ///
    /// - Throws: ``DatabaseError`` with code `invalidArgument` for unsupported types, non-string
    ///   dictionary keys or non-finite numbers.
    static func node(from value: Any?) throws(DatabaseError) -> Node {
        do {
            return try Node(foundationValue: try normalized(value))
        } catch let error as CoreTreeError {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(.invalidArgument, "The value cannot be stored: \(DatabaseError.reason(error))", underlying: error)
        }
    }

    /// A priority: a number, a string or nil.
    /// The server-value placeholder `value` holds (`ServerValue.timestamp()` as a priority), or nil.
    static func placeholderPriority(from value: Any?) throws(DatabaseError) -> Node? {
        guard let value, !(value is NSNull), value is [AnyHashable: Any] else { return nil }
        let node = try node(from: value)
        return CoreTree.ServerValue.isPlaceholder(node) ? node : nil
    }

    static func priority(from value: Any?) throws(DatabaseError) -> Priority? {
        guard let value, !(value is NSNull) else { return nil }
        let node = try node(from: value)
        switch node.leafValue {
        case .number(let number)?: return .number(number)
        case .string(let string)?: return .string(string)
        default: throw DatabaseError(.invalidArgument, "A priority must be a number, a string or nil, not \(value).")
        }
    }

    /// The value with every dictionary keyed by `String` (Firebase's API takes `[AnyHashable: Any]`).
    private static func normalized(_ value: Any?) throws -> Any? {
        guard let value else { return nil }
        if let dictionary = value as? [AnyHashable: Any], !(value is [String: Any]) || dictionary.values.contains(where: needsNormalizing) {
            var result: [String: Any] = [:]
            for (key, element) in dictionary {
                guard let name = key.base as? String else {
                    throw DatabaseError(.invalidArgument, "Dictionary keys must be strings; \(key.base) is a \(type(of: key.base)).")
                }
                result[name] = try normalized(element) ?? NSNull()
            }
            return result
        }
        if let array = value as? [Any], array.contains(where: needsNormalizing) {
            return try array.map { try normalized($0) ?? NSNull() }
        }
        return value
    }

    private static func needsNormalizing(_ value: Any) -> Bool {
        value is [AnyHashable: Any] || value is [Any]
    }

    /// The relative path of an `updateChildValues` key, validated.
    static func updatePath(_ key: AnyHashable) throws(DatabaseError) -> TreePath {
        guard let text = key.base as? String else {
            throw DatabaseError(.invalidArgument, "Update keys must be path strings; \(key.base) is a \(type(of: key.base)).")
        }
        return try DatabaseReference.parsedPath(text)
    }
}
