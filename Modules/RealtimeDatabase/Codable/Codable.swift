import Foundation
import CoreTree

extension DatabaseReference {
    /// Writes an `Encodable` value here, encoded by `encoder` into the Foundation tree
    /// ``setValue(_:)`` takes (as Firebase's, a synchronous call that `completion` hears back
    /// from; there is no `async` form, so Firebase code calling it with `try` inside an `async`
    /// function compiles unchanged).
    ///
    /// - Throws: ``DatabaseError`` with code `invalidArgument` when the value cannot be encoded
    ///   or stored; nothing is written then.
    public func setValue<T: Encodable>(
        from value: T, encoder: Database.Encoder = Database.Encoder(), completion: (((any Error)?) -> Void)? = nil
    ) throws {
        let node = try Self.encode(value, encoder: encoder)
        let finish: WriteCompletion? = completion.map { block in
            let box = UncheckedBox(block)
            return { error in box.value(error) }
        }
        try database.repo.set(node, at: path, completion: finish)
    }

    /// " at a.b.c" for an encoding error that names where it failed, else "".
    private static func codingPath(of error: any Error) -> String {
        guard case EncodingError.invalidValue(_, let context) = error, !context.codingPath.isEmpty else { return "" }
        return " at " + context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    static func encode<T: Encodable>(_ value: T, encoder: Database.Encoder) throws(DatabaseError) -> Node {
        let tree: Any
        do {
            tree = try encoder.encode(value)
        } catch {
            throw DatabaseError(.invalidArgument, "\(T.self) could not be encoded\(Self.codingPath(of: error)); see underlyingError for why.", underlying: error)
        }
        do {
            return try ValueConversion.node(from: tree)
        } catch {
            var hint = ""
            if case .blob = encoder.dataEncodingStrategy {
                hint = " The encoder's dataEncodingStrategy is .blob, which leaves Data as it is; the database stores no binary values, so use .base64."
            }
            throw DatabaseError(.invalidArgument, "The encoded \(T.self) is not storable: \(error.message)\(hint)", underlying: error.underlyingError ?? error)
        }
    }
}

extension DataSnapshot {
    /// The data decoded as `T` by `decoder`, from ``value`` (`NSNull` when there is no data), as
    /// Firebase decodes it.
    ///
    /// - Throws: the decoder's `DecodingError` when the data does not fit `T`
    ///   (`valueNotFound` for no data and a non-optional `T`).
    public func data<T: Decodable>(as type: T.Type, decoder: Database.Decoder = Database.Decoder()) throws -> T {
        try decoder.decode(T.self, from: node.foundationValue())
    }
}
