import SyncProtocol

/// The sequence numbers of this client's stamped writes the server has not settled yet, and the
/// client id they are stamped with (see ``SyncProtocol/WriteStamp``).
///
/// The lowest outstanding number is the floor every stamp carries: the server may forget the
/// stamps below it. Numbers are added in increasing order (write ids only grow), so the list
/// stays sorted by appending; settling is mostly of the oldest.
struct OutstandingStamps {
    /// The client's id: kept with the write queue when persistence is on, else new per run.
    let client: String
    /// Outstanding numbers, ascending, from `head` on (settling the oldest only moves `head`,
    /// so draining a long queue stays linear).
    private var sequences: [Int64] = []
    private var head = 0

    init(client: String) { self.client = client }

    /// The stamp for write `sequence`, which is now outstanding.
    mutating func stamp(_ sequence: Int64) -> WriteStamp {
        if head == sequences.count || sequences[sequences.count - 1] < sequence {
            sequences.append(sequence)
        } else if !sequences[head...].contains(sequence) {
            sequences.insert(sequence, at: sequences[head...].firstIndex { $0 > sequence } ?? sequences.endIndex)
        }
        return WriteStamp(client: client, sequence: sequence, floor: sequences[head])
    }

    /// Write `sequence` is settled: acknowledged, refused or dropped.
    mutating func settle(_ sequence: Int64) {
        if head < sequences.count && sequences[head] == sequence {
            head += 1
        } else if let index = sequences[head...].firstIndex(of: sequence) {
            sequences.remove(at: index)
        }
        if head == sequences.count {
            sequences.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > sequences.count {
            sequences.removeFirst(head)
            head = 0
        }
    }

    /// Every write is settled.
    mutating func settleAll() {
        sequences.removeAll()
        head = 0
    }

    /// A new random client id: 22 characters of base64url (128 bits).
    static func newClientID() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt8(64)))] })
    }
}
