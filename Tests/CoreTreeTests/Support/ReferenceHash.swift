import Foundation
@testable import CoreTree

/// A plain SHA-1 (FIPS 180-4), written here so that node hashes can be checked against an
/// implementation that shares no code with the module under test.
enum ReferenceSHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message
        let bitLength = UInt64(message.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        func rotateLeft(_ value: UInt32, _ count: UInt32) -> UInt32 { (value << count) | (value >> (32 - count)) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let base = chunk + 4 * i
                w[i] = UInt32(padded[base]) << 24 | UInt32(padded[base + 1]) << 16 | UInt32(padded[base + 2]) << 8 | UInt32(padded[base + 3])
            }
            for i in 16..<80 { w[i] = rotateLeft(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotateLeft(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
            }
            h[0] &+= a
            h[1] &+= b
            h[2] &+= c
            h[3] &+= d
            h[4] &+= e
        }
        return h.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The node hash recipe of client-internals §7, written from the text of the recipe.
enum ReferenceHash {
    static func hash(_ node: Node) -> String {
        let text = representation(node)
        if text.isEmpty { return "" }
        return Data(ReferenceSHA1.digest(Array(text.utf8))).base64EncodedString()
    }

    static func representation(_ node: Node) -> String {
        if node.isEmpty { return "" }
        var text = ""
        if let priority = node.priority {
            switch priority {
            case .number(let number): text += "priority:number:\(doubleHex(number)):"
            case .string(let string): text += "priority:string:\(string):"
            }
        }
        switch node.leafValue {
        case .bool(let value)?: return text + "boolean:\(value)"
        case .number(let number)?: return text + "number:\(doubleHex(number))"
        case .string(let string)?: return text + "string:\(string)"
        case nil: break
        }
        let children = Array(node.children).sorted { a, b in
            let order = comparePriorities(a.value.priority, b.value.priority)
            if order != 0 { return order < 0 }
            return ReferenceKeyOrder.compare(a.key.stringValue, b.key.stringValue) < 0
        }
        for (key, child) in children {
            let childHash = hash(child)
            if !childHash.isEmpty { text += ":\(key.stringValue):\(childHash)" }
        }
        return text
    }

    /// Big-endian IEEE-754 bytes as 16 lowercase hex digits.
    static func doubleHex(_ number: Double) -> String {
        String(format: "%016llx", number.bitPattern)
    }

    /// No priority first, then numbers ascending, then strings by UTF-16 code units.
    static func comparePriorities(_ a: Priority?, _ b: Priority?) -> Int {
        func rank(_ p: Priority?) -> Int {
            switch p {
            case nil: 0
            case .number?: 1
            case .string?: 2
            }
        }
        if rank(a) != rank(b) { return rank(a) < rank(b) ? -1 : 1 }
        switch (a, b) {
        case let (.number(x)?, .number(y)?): return x == y ? 0 : (x < y ? -1 : 1)
        case let (.string(x)?, .string(y)?): return ReferenceKeyOrder.compareUTF16(x, y)
        default: return 0
        }
    }
}
