/// The identity of a queued write, for exactly-once delivery: which client made it and its
/// place in that client's sequence.
///
/// This is an extension of the Firebase protocol. A server that supports it says so in its
/// handshake (``WriteStamp/handshakeExtension`` in `d.ext`); only then does a client add the
/// stamp to a put or merge body (`b.once`: `{"c": client, "s": sequence, "f": floor}`). Firebase
/// servers never see it, and Firebase clients never send it.
///
/// A server applies each stamped write at most once: a write whose stamp it already applied is
/// answered `ok` and changes nothing. The floor is the lowest sequence number the client still
/// waits on: every stamp below it is settled and never sent again, so the server may forget them.
public struct WriteStamp: Sendable, Hashable {
    /// The client's id: 1 to 64 characters from `A-Z a-z 0-9 - _`, random and kept with the
    /// client's write queue.
    public var client: String
    /// The write's number in the client's sequence (at least 1; never reused by the client).
    public var sequence: Int64
    /// The lowest sequence number the client still waits on (at most ``sequence``).
    public var floor: Int64

    /// A stamp.
    public init(client: String, sequence: Int64, floor: Int64) {
        self.client = client
        self.sequence = sequence
        self.floor = floor
    }

    /// The handshake's extension name for exactly-once writes.
    public static let handshakeExtension = "once"
    /// The longest client id.
    public static let maxClientLength = 64

    /// Whether `client` is a well-formed client id.
    public static func isValidClient(_ client: String) -> Bool {
        guard !client.isEmpty, client.utf8.count <= maxClientLength else { return false }
        return client.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// The body field's JSON (`{"c":…,"s":…,"f":…}`).
    public var json: String { "{\"c\":\(ServerMessage.quoted(client)),\"s\":\(sequence),\"f\":\(floor)}" }
}
