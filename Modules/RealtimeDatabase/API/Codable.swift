public import Foundation
import CoreTree

extension Database {
    /// Encodes `Encodable` values for ``DatabaseReference/setValue(from:encoder:completion:)`` (JSON rules).
    public typealias Encoder = JSONEncoder
    /// Decodes snapshots for ``DataSnapshot/data(as:decoder:)`` (JSON rules).
    public typealias Decoder = JSONDecoder
}

extension DatabaseReference {
    /// Writes an `Encodable` value here, encoded as JSON would encode it.
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

    /// Writes an `Encodable` value here once the server has it.
    public func setValue<T: Encodable>(from value: T, encoder: Database.Encoder = Database.Encoder()) async throws {
        let node = try Self.encode(value, encoder: encoder)
        _ = try await awaitWrite { block in
            do {
                try database.repo.set(node, at: path, completion: completionAdapter(block))
            } catch {
                block(error, self)
            }
        }
    }

    static func encode<T: Encodable>(_ value: T, encoder: Database.Encoder) throws(DatabaseError) -> Node {
        do {
            let data = try encoder.encode(value)
            return try Node(json: Array(data))
        } catch let error as CoreTreeError {
            throw DatabaseError(.invalidArgument, "The encoded \(T.self) is not storable: \(error.message)", underlying: error)
        } catch {
            throw DatabaseError(.invalidArgument, "\(T.self) could not be encoded: \(error)", underlying: error)
        }
    }
}

extension DataSnapshot {
    /// The data decoded as `T` (from its JSON form, arrays for array-like data).
    ///
    /// - Throws: the decoder's `DecodingError` when the data does not fit `T`.
    public func data<T: Decodable>(as type: T.Type, decoder: Database.Decoder = Database.Decoder()) throws -> T {
        try decoder.decode(T.self, from: Data(node.jsonString(format: .plain).utf8))
    }
}
