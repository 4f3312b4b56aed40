import Foundation

/// Reads the values of a Foundation tree (`snapshot.value`, or one an app built) whatever form
/// they come in: Swift or Foundation numbers and collections, optionals (`[Any?]` arrays have
/// `nil` holes), `NSNull`.
enum TreeValue {
    /// A number or boolean, told apart.
    enum Number {
        case bool(Bool)
        case integer(Int64)
        case unsigned(UInt64)
        case floating(Double)
    }

    /// `value` with any `Optional` around it removed; `nil` becomes `NSNull`.
    static func unwrapped(_ value: Any) -> Any {
        guard let optional = value as? any OptionalValue else { return value }
        return optional.unwrappedAny.map(unwrapped) ?? NSNull()
    }

    /// The number `value` holds, nil when it is not a number or boolean.
    static func number(_ value: Any) -> Number? {
        if type(of: value) == Bool.self, let bool = value as? Bool { return .bool(bool) }
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            switch String(cString: number.objCType) {
            // NSNumber(value: true) is the boolean class, whose type encoding is "c".
            case "c", "B": return .bool(number.boolValue)
            case "f", "d": return .floating(number.doubleValue)
            case "Q", "L", "I", "S", "C": return .unsigned(number.uint64Value)
            default: return .integer(number.int64Value)
            }
        }
        if let integer = value as? any BinaryInteger {
            if let signed = Int64(exactly: integer) { return .integer(signed) }
            if let unsigned = UInt64(exactly: integer) { return .unsigned(unsigned) }
            return nil
        }
        if let floating = value as? any BinaryFloatingPoint { return .floating(Double(floating)) }
        return nil
    }

    /// The entries of an object (`[String: Any]`, `NSDictionary`), nil for anything else.
    static func object(_ value: Any) -> [String: Any]? {
        if let dictionary = value as? [String: Any] { return dictionary }
        if let dictionary = value as? [AnyHashable: Any] {
            var result: [String: Any] = [:]
            for (key, element) in dictionary {
                guard let name = key.base as? String else { return nil }
                result[name] = element
            }
            return result
        }
        return nil
    }

    /// The elements of an array (`[Any]`, `[Any?]`, `NSArray`), nil for anything else.
    static func array(_ value: Any) -> [Any]? {
        if value is String || value is Data { return nil }
        return value as? [Any]
    }

    /// What `value` is, for error messages.
    static func describe(_ value: Any) -> String {
        if value is NSNull { return "null" }
        switch number(value) {
        case .bool(let bool)?: return "the boolean \(bool)"
        case .integer, .unsigned, .floating: return "the number \(value)"
        case nil: break
        }
        if value is String { return "a string" }
        if object(value) != nil { return "an object" }
        if array(value) != nil { return "an array" }
        return "a value of type \(type(of: value))"
    }
}

/// Lets a value typed `Any` that holds an `Optional` be unwrapped whatever its wrapped type.
private protocol OptionalValue {
    var unwrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var unwrappedAny: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
}
