import Testing
import TestSupport
@testable import CoreTree

/// A source that always returns the same value, to reach the edges of the random part.
private struct ConstantSource: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}

private let pushAlphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

/// The time encoded in the first 8 characters, decoded independently of the generator.
private func decodedTime(_ id: String) -> Int64 {
    Array(id.utf8.prefix(8)).reduce(Int64(0)) { $0 * 64 + Int64(pushAlphabet.firstIndex(of: $1)!) }
}

/// Byte-wise order of the ids' ASCII.
private func precedes(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

@Suite("Push IDs")
struct PushIDTests {
    @Test("the alphabet is web-safe base 64 in ASCII order")
    func alphabet() {
        let alphabet = PushIDGenerator<SplitMix64>.alphabet
        #expect(alphabet == pushAlphabet)
        #expect(alphabet.count == 64 && Set(alphabet).count == 64)
        #expect(alphabet == alphabet.sorted())
    }

    @Test("ids are 20 characters of the alphabet and encode the time")
    func shape() {
        var generator = PushIDGenerator(source: SplitMix64(seed: 1))
        var random = SplitMix64(seed: 2)
        for _ in 0..<2_000 {
            let time = Int64.random(in: 1..<(1 << 48), using: &random)
            let id = generator.next(milliseconds: time)
            #expect(id.utf8.count == 20 && id.count == 20)
            #expect(id.utf8.allSatisfy(pushAlphabet.contains))
            #expect(decodedTime(id) >= time)
            #expect(ChildKey(id).intValue == nil)
        }
        var fresh = PushIDGenerator(source: SplitMix64(seed: 3))
        #expect(decodedTime(fresh.next(milliseconds: 1_700_000_000_000)) == 1_700_000_000_000)
        #expect(decodedTime(fresh.next(milliseconds: 1)) == 1_700_000_000_000, "the time never runs backwards within one generator")
        var other = PushIDGenerator(source: SplitMix64(seed: 3))
        #expect(other.next(milliseconds: 1).prefix(8) == "-------0")
        #expect(other.next(milliseconds: (1 << 48) - 1).prefix(8) == "zzzzzzzz")
    }

    @Test("100,000 ids in one millisecond are unique and sort in creation order")
    func sameMillisecond() {
        var generator = PushIDGenerator(source: SplitMix64(seed: 4))
        let time: Int64 = 1_700_000_000_000
        var ids: [String] = []
        ids.reserveCapacity(100_000)
        for _ in 0..<100_000 { ids.append(generator.next(milliseconds: time)) }
        var inOrder = true
        for index in 1..<ids.count where !precedes(ids[index - 1], ids[index]) {
            inOrder = false
            Issue.record("\(ids[index - 1]) !< \(ids[index]) at \(index)")
            break
        }
        #expect(inOrder)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { decodedTime($0) == time })
        // String < agrees on ASCII, and so does the key order the database uses.
        #expect(ids == ids.sorted())
        #expect(ids.map { ChildKey($0) } == ids.map { ChildKey($0) }.sorted())
    }

    @Test("ids made later sort later")
    func increasingTimes() {
        var generator = PushIDGenerator(source: SplitMix64(seed: 5))
        var random = SplitMix64(seed: 6)
        var time: Int64 = 1_600_000_000_000
        var previous = ""
        for _ in 0..<5_000 {
            time += Int64.random(in: 0...3, using: &random)
            let id = generator.next(milliseconds: time)
            #expect(precedes(previous, id))
            #expect(decodedTime(id) == time)
            previous = id
        }
        // Ids from independent generators still sort by time.
        var a = PushIDGenerator(source: SplitMix64(seed: 7))
        var b = PushIDGenerator(source: ConstantSource(value: .max))
        #expect(precedes(b.next(milliseconds: 1_000), a.next(milliseconds: 1_001)))
    }

    @Test("a clock going backwards still yields increasing ids")
    func clockGoingBackwards() {
        var generator = PushIDGenerator(source: SplitMix64(seed: 8))
        var random = SplitMix64(seed: 9)
        var previous = generator.next(milliseconds: 1_700_000_000_000)
        for _ in 0..<5_000 {
            let time = 1_700_000_000_000 + Int64.random(in: -50...50, using: &random)
            let id = generator.next(milliseconds: time)
            #expect(precedes(previous, id), "\(previous) then \(id) at \(time)")
            #expect(decodedTime(id) >= decodedTime(previous))
            previous = id
        }
    }

    @Test("a used-up random part moves on to the next millisecond")
    func randomPartOverflow() {
        var generator = PushIDGenerator(source: ConstantSource(value: 63))
        let first = generator.next(milliseconds: 1_000)
        #expect(first.hasSuffix(String(repeating: "z", count: 12)))
        let second = generator.next(milliseconds: 1_000)
        #expect(precedes(first, second))
        #expect(decodedTime(second) == 1_001)
        // The random part of the same-millisecond successor is the previous one plus one.
        var counting = PushIDGenerator(source: ConstantSource(value: 0))
        #expect(counting.next(milliseconds: 5).suffix(12) == "------------")
        #expect(counting.next(milliseconds: 5).suffix(12) == "-----------0")
        #expect(counting.next(milliseconds: 5).suffix(12) == "-----------1")
    }

    @Test("the system-random generator works")
    func systemRandom() {
        var generator = PushIDGenerator()
        let a = generator.next(milliseconds: 42)
        let b = generator.next(milliseconds: 42)
        #expect(precedes(a, b))
        #expect(decodedTime(a) == 42)
    }
}
