import Foundation
@testable import RealtimeDatabase
import Testing

/// `Database.Encoder` / `Database.Decoder`: Firebase's strategies, each shown on the tree it
/// makes or reads, and `@ServerTimestamp` as Firebase declares it.
@Suite("Structure coder strategies")
struct StructureCoderStrategyTests {
    struct Stamped: Codable, Equatable {
        var at: Date
    }

    struct Blob: Codable, Equatable {
        var bytes: Data
    }

    struct Keys: Codable, Equatable {
        var userName: String
        var myURLValue: Int
        var tags: [String: Int]
    }

    struct Reading: Codable, Equatable {
        var value: Double
    }

    @Test func theDefaultsAreFirebases() {
        let encoder = Database.Encoder()
        let decoder = Database.Decoder()
        guard case .deferredToDate = encoder.dateEncodingStrategy, case .base64 = encoder.dataEncodingStrategy,
              case .throw = encoder.nonConformingFloatEncodingStrategy, case .useDefaultKeys = encoder.keyEncodingStrategy,
              case .deferredToDate = decoder.dateDecodingStrategy, case .base64 = decoder.dataDecodingStrategy,
              case .throw = decoder.nonConformingFloatDecodingStrategy, case .useDefaultKeys = decoder.keyDecodingStrategy
        else {
            Issue.record("a default strategy differs from Firebase's")
            return
        }
        #expect(encoder.passthroughTypeResolver is NoPassthroughTypes.Type)
        #expect(decoder.passthroughTypeResolver is NoPassthroughTypes.Type)
    }

    @Test func dateStrategies() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let cases: [(Database.Encoder.DateEncodingStrategy, Database.Decoder.DateDecodingStrategy, String)] = [
            (.deferredToDate, .deferredToDate, "number \(date.timeIntervalSinceReferenceDate)"),
            (.secondsSince1970, .secondsSince1970, "number 1700000000.5"),
            (.millisecondsSince1970, .millisecondsSince1970, "number 1700000000500.0"),
            (.formatted(formatter), .formatted(formatter), "2023-11-14 22:13:20.500"),
            (.custom({ date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode("t\(date.timeIntervalSince1970)")
            }), .custom({ decoder in
                Date(timeIntervalSince1970: Double(try decoder.singleValueContainer().decode(String.self).dropFirst())!)
            }), "t1700000000.5"),
        ]
        for (encoding, decoding, expected) in cases {
            let encoder = Database.Encoder()
            encoder.dateEncodingStrategy = encoding
            let tree = try #require(try encoder.encode(Stamped(at: date)) as? [String: Any])
            let written = (tree["at"] as? NSNumber).map { "number \($0.doubleValue)" } ?? "\(tree["at"]!)"
            #expect(written == expected)
            let decoder = Database.Decoder()
            decoder.dateDecodingStrategy = decoding
            #expect(try decoder.decode(Stamped.self, from: tree) == Stamped(at: date))
        }

        // ISO 8601 keeps whole seconds.
        let encoder = Database.Encoder()
        encoder.dateEncodingStrategy = .iso8601
        let tree = try #require(try encoder.encode(Stamped(at: date)) as? [String: Any])
        #expect(tree["at"] as? String == "2023-11-14T22:13:20Z")
        let decoder = Database.Decoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(Stamped.self, from: tree).at == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(throws: DecodingError.self) { try decoder.decode(Stamped.self, from: ["at": "yesterday"]) }
    }

    @Test func dataStrategiesIncludingBlob() throws {
        let blob = Blob(bytes: Data([0, 1, 254, 255]))

        let base64 = try #require(try Database.Encoder().encode(blob) as? [String: Any])
        #expect(base64["bytes"] as? String == "AAH+/w==")
        #expect(try Database.Decoder().decode(Blob.self, from: base64) == blob)

        let encoder = Database.Encoder()
        encoder.dataEncodingStrategy = .deferredToData
        let bytes = try #require(try encoder.encode(blob) as? [String: Any])
        #expect((bytes["bytes"] as? [Any])?.compactMap { $0 as? Int } == [0, 1, 254, 255])
        let decoder = Database.Decoder()
        decoder.dataDecodingStrategy = .deferredToData
        #expect(try decoder.decode(Blob.self, from: bytes) == blob)

        // .blob: the Data itself, both ways.
        encoder.dataEncodingStrategy = .blob
        let tree = try #require(try encoder.encode(blob) as? [String: Any])
        #expect(tree["bytes"] as? Data == blob.bytes)
        decoder.dataDecodingStrategy = .blob
        #expect(try decoder.decode(Blob.self, from: tree) == blob)
        #expect(throws: DecodingError.self) { try decoder.decode(Blob.self, from: base64) }

        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(data.count)
        }
        #expect((try encoder.encode(blob) as? [String: Any])?["bytes"] as? Int == 4)
        decoder.dataDecodingStrategy = .custom { decoder in Data(count: try decoder.singleValueContainer().decode(Int.self)) }
        #expect(try decoder.decode(Blob.self, from: ["bytes": 3]).bytes.count == 3)
        #expect(throws: DecodingError.self) { try Database.Decoder().decode(Blob.self, from: ["bytes": "not base64!"]) }
    }

    @Test func aBlobIsNotStorableAndTheErrorSaysWhy() throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=blob")
        database.goOffline()
        defer { database.shutdown() }
        let encoder = Database.Encoder()
        encoder.dataEncodingStrategy = .blob
        let error = #expect(throws: DatabaseError.self) {
            try database.reference(withPath: "blob").setValue(from: Blob(bytes: Data([1])), encoder: encoder)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("use .base64") == true, "\(String(describing: error))")
        #expect(database.pendingWriteCount == 0, "nothing was written")
    }

    @Test func nonConformingFloats() throws {
        #expect(throws: EncodingError.self) { try Database.Encoder().encode(Reading(value: .infinity)) }
        let encoder = Database.Encoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let decoder = Database.Decoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        for (value, text) in [(Double.infinity, "+inf"), (-Double.infinity, "-inf")] {
            let tree = try #require(try encoder.encode(Reading(value: value)) as? [String: Any])
            #expect(tree["value"] as? String == text)
            #expect(try decoder.decode(Reading.self, from: tree).value == value)
        }
        let nan = try #require(try encoder.encode(Reading(value: .nan)) as? [String: Any])
        #expect(try decoder.decode(Reading.self, from: nan).value.isNaN)
        #expect(throws: DecodingError.self) { try Database.Decoder().decode(Reading.self, from: ["value": "+inf"]) }
        // A Float keeps its short decimal form.
        #expect((try encoder.encode(Float(0.1)) as? NSNumber)?.doubleValue == 0.1)
    }

    @Test func keyStrategiesLeaveDictionaryKeysAlone() throws {
        let value = Keys(userName: "ada", myURLValue: 1, tags: ["someTag": 2])
        let encoder = Database.Encoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let tree = try #require(try encoder.encode(value) as? [String: Any])
        #expect(Set(tree.keys) == ["user_name", "my_url_value", "tags"])
        #expect(tree["tags"] as? [String: Int] == ["someTag": 2], "a dictionary's keys are data")

        let decoder = Database.Decoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        // `my_url_value` comes back as `myUrlValue`, as with Firebase; a custom key says otherwise.
        #expect(throws: DecodingError.self) { try decoder.decode(Keys.self, from: tree) }
        decoder.keyDecodingStrategy = .custom { path in
            let key = path.last!.stringValue
            return StructureKey(stringValue: key == "my_url_value" ? "myURLValue" : SnakeCase.toCamelCase(key))
        }
        #expect(try decoder.decode(Keys.self, from: tree) == value)

        encoder.keyEncodingStrategy = .custom { path in StructureKey(stringValue: path.last!.stringValue.uppercased()) }
        let upper = try #require(try encoder.encode(value) as? [String: Any])
        #expect(Set(upper.keys) == ["USERNAME", "MYURLVALUE", "TAGS"])

        for (camel, snake) in [("oneTwoThree", "one_two_three"), ("myURLProperty", "my_url_property"), ("_leading", "_leading"),
                               ("URLValue", "url_value"), ("value2Go", "value2_go"), ("already_snake", "already_snake")] {
            #expect(SnakeCase.fromCamelCase(camel) == snake)
        }
        for (snake, camel) in [("one_two_three", "oneTwoThree"), ("_one_two_", "_oneTwo_"), ("single", "single"), ("a__b", "aB")] {
            #expect(SnakeCase.toCamelCase(snake) == camel)
        }
    }

    /// A type the tree holds as it is (as Firestore's own types are in Firebase's coders).
    struct Marker: Codable, Equatable {
        var id: Int
    }

    /// Hands `Marker` values through as they are.
    enum Passthrough: StructureCodingPassthroughTypeResolver {
        static func isPassthroughType<T>(_ value: T) -> Bool { value is Marker }
    }

    struct Mixed: Codable, Equatable {
        var marker: Marker
        var count: Int
    }

    @Test func passthroughTypesStayAsTheyAre() throws {
        let value = Mixed(marker: Marker(id: 5), count: 2)
        let encoder = Database.Encoder()
        encoder.passthroughTypeResolver = Passthrough.self
        let tree = try #require(try encoder.encode(value) as? [String: Any])
        #expect(tree["marker"] as? Marker == Marker(id: 5))
        #expect(tree["count"] as? Int == 2)
        let decoder = Database.Decoder()
        decoder.passthroughTypeResolver = Passthrough.self
        #expect(try decoder.decode(Mixed.self, from: tree) == value)
        // Without the resolver the tree's Marker is no object to decode one from, and a Marker is encoded.
        #expect(throws: DecodingError.self) { try Database.Decoder().decode(Mixed.self, from: tree) }
        #expect((try Database.Encoder().encode(value) as? [String: Any])?["marker"] as? [String: Int] == ["id": 5])
    }

    struct Numbers: Codable, Equatable {
        var small: UInt8
        var whole: Int
        var ratio: Float
    }

    @Test func numbersDecodeIntoTypesTheyFitAndOnlyThose() throws {
        let decoder = Database.Decoder()
        #expect(try decoder.decode(Numbers.self, from: ["small": 200, "whole": 3.0, "ratio": 0.5]) == Numbers(small: 200, whole: 3, ratio: 0.5))
        #expect(throws: DecodingError.self) { try decoder.decode(Numbers.self, from: ["small": 300, "whole": 3, "ratio": 0.5]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Numbers.self, from: ["small": 1, "whole": 3.5, "ratio": 0.5]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Numbers.self, from: ["small": 1, "whole": true, "ratio": 0.5]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: 1) }
        #expect(try decoder.decode(Bool.self, from: true))
        #expect(try decoder.decode(URL.self, from: "https://example.com/a") == URL(string: "https://example.com/a"))
        #expect(try decoder.decode(Decimal.self, from: 2.5) == Decimal(2.5))
        #expect((try Database.Encoder().encode(URL(string: "https://example.com")!) as? String) == "https://example.com")
    }

    class Base: Codable {
        var id: Int
        init(id: Int) { self.id = id }
    }

    final class Derived: Base {
        var name: String
        init(id: Int, name: String) {
            self.name = name
            super.init(id: id)
        }

        enum CodingKeys: String, CodingKey { case name }

        required init(from decoder: any Swift.Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Swift.Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func superEncodersNestedContainersAndSnapshotsWithHoles() throws {
        let tree = try #require(try Database.Encoder().encode(Derived(id: 7, name: "seven")) as? [String: Any])
        #expect(tree["name"] as? String == "seven")
        #expect((tree["super"] as? [String: Any])?["id"] as? Int == 7)
        let back = try Database.Decoder().decode(Derived.self, from: tree)
        #expect(back.id == 7 && back.name == "seven")

        // An array-like snapshot value has nil holes; an optional element decodes them as nil.
        let holes: [Any?] = [1, nil, 3]
        #expect(try Database.Decoder().decode([Int?].self, from: holes) == [1, nil, 3])
        #expect(throws: DecodingError.self) { try Database.Decoder().decode([Int].self, from: holes) }
        #expect(try Database.Decoder().decode(Int?.self, from: NSNull()) == nil)
        #expect(throws: DecodingError.self) { try Database.Decoder().decode(Int.self, from: NSNull()) }
    }

    struct Post: Codable, Equatable {
        var title: String
        @ServerTimestamp var updated: Date?
        @ServerTimestampMilliseconds var seen: Int64?
    }

    @Test func serverTimestampIsFirebasesDateWrapper() throws {
        let pending = ServerTimestamp(wrappedValue: nil)
        #expect(pending.wrappedValue == nil)
        #expect(pending == ServerTimestamp(wrappedValue: nil) && pending.hashValue == ServerTimestamp(wrappedValue: nil).hashValue)

        let tree = try #require(try Database.Encoder().encode(Post(title: "Hi", updated: nil, seen: nil)) as? [String: Any])
        #expect(tree["updated"] as? [String: String] == [".sv": "timestamp"])
        #expect(tree["seen"] as? [String: String] == [".sv": "timestamp"])

        // Whole milliseconds on the wire, both ways.
        let post = Post(title: "Hi", updated: Date(timeIntervalSince1970: 1_700_000_000.1234), seen: 1_700_000_000_123)
        let written = try #require(try Database.Encoder().encode(post) as? [String: Any])
        #expect((written["updated"] as? NSNumber)?.int64Value == 1_700_000_000_123)
        #expect((written["seen"] as? NSNumber)?.int64Value == 1_700_000_000_123)
        let read = try Database.Decoder().decode(Post.self, from: written)
        #expect(read.updated == Date(timeIntervalSince1970: 1.700000000123e9))
        #expect(read.seen == 1_700_000_000_123)
        #expect(try Database.Decoder().decode(Post.self, from: ["title": "Hi"]) == Post(title: "Hi", updated: nil, seen: nil))
    }
}
