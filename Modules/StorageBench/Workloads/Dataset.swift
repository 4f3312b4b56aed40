import CoreTree

/// The data every workload writes: deterministic, the same for every backend and raw engine.
///
/// A location (`data/q<i>`) looks like a chat room: a title, a small `meta` object, 12 messages of
/// four small leaves each and 6 attachments of 1 KB, about 10 KB and 58 rows in all, so 1,000
/// locations make the 10 MB cache of the cold-open workload. Strings are pseudo-random letters so
/// a compressing engine gets no easy win.
struct Dataset: Sendable {
    /// How many locations the cache holds.
    let locations: Int

    /// The path of location `index`.
    func path(_ index: Int) -> TreePath { TreePath(keys: ["data", ChildKey("q\(index)")]) }

    /// Where a location's messages live (the merge workload's target).
    func messagesPath(_ index: Int) -> TreePath { path(index).child("messages") }

    /// Location `index` at `version` (each version changes every value).
    func location(_ index: Int, version: Int) -> Node {
        var random = Letters(seed: UInt64(index) &* 7_919 &+ UInt64(version) &* 1_000_003)
        var messages: [(key: ChildKey, value: Node)] = []
        for message in 0..<12 {
            messages.append((ChildKey(String(format2: message, prefix: "m")), self.message(&random, index: index, version: version, number: message)))
        }
        var attachments: [(key: ChildKey, value: Node)] = []
        for attachment in 0..<6 {
            attachments.append((ChildKey("a\(attachment)"), Node(.string(random.letters(1_024)))))
        }
        return Node(children: [
            "title": Node(.string("Room \(index) " + random.letters(12))),
            "meta": Node(children: [
                "created": Node(.number(Double(1_700_000_000_000 + index * 1_000 + version))),
                "owner": Node(.string("user\(index % 97)")),
                "open": Node(.bool(index % 3 != 0)),
            ]),
            "messages": Node(children: messages),
            "attachments": Node(children: attachments),
        ])
    }

    /// The four children a merge writes below ``messagesPath(_:)``: two changed messages, one
    /// new, one removed (an empty node), relative to the messages.
    func mergeChildren(_ index: Int, version: Int) -> [(path: TreePath, node: Node)] {
        var random = Letters(seed: UInt64(index) &* 31 &+ UInt64(version) &* 65_537)
        return [
            (TreePath(keys: ["m03"]), message(&random, index: index, version: version, number: 3)),
            (TreePath(keys: ["m05"]), message(&random, index: index, version: version, number: 5)),
            (TreePath(keys: [ChildKey(String(format2: 12 + version, prefix: "m"))]), message(&random, index: index, version: version, number: 12 + version)),
            (TreePath(keys: ["m07"]), .empty),
        ]
    }

    private func message(_ random: inout Letters, index: Int, version: Int, number: Int) -> Node {
        Node(children: [
            "author": Node(.string("user\((index + number) % 97)")),
            "text": Node(.string(random.letters(40 + (number * 7 + version) % 80))),
            "ts": Node(.number(Double(1_700_000_000_000 + number * 60_000 + version))),
            "likes": Node(.number(Double((number * 13 + version) % 50))),
        ])
    }
}

/// Pseudo-random lowercase letters and spaces from a seed (SplitMix64).
struct Letters {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` letters, with a space now and then.
    mutating func letters(_ count: Int) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        for _ in 0..<count {
            let value = next() % 28
            bytes.append(value >= 26 ? UInt8(ascii: " ") : 97 + UInt8(value))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// `prefix` followed by `number` in at least two digits (`m03`), so keys sort as numbers.
    init(format2 number: Int, prefix: String) {
        self = prefix + (number < 10 ? "0\(number)" : "\(number)")
    }
}
