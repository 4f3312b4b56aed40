@testable import RealtimeDatabase
import SyncProtocol
import Testing

/// The client's bookkeeping of unsettled stamped writes: the floor is always the lowest
/// outstanding number, however writes are settled.
@Suite("outstanding stamps")
struct OutstandingStampsTests {
    @Test func theFloorIsTheLowestUnsettledNumber() {
        var stamps = OutstandingStamps(client: "c")
        #expect(stamps.stamp(5) == WriteStamp(client: "c", sequence: 5, floor: 5))
        #expect(stamps.stamp(6).floor == 5)
        #expect(stamps.stamp(9).floor == 5)
        // A transaction sent again keeps its older number without duplicating it.
        #expect(stamps.stamp(6).floor == 5)
        stamps.settle(6)
        #expect(stamps.stamp(10).floor == 5)
        stamps.settle(5)
        #expect(stamps.stamp(11).floor == 9)
        // An older number outstanding again (a restored transaction) lowers the floor.
        #expect(stamps.stamp(7).floor == 7)
        stamps.settleAll()
        #expect(stamps.stamp(12).floor == 12)
    }

    @Test func drainingInOrderKeepsTheFloorRight() {
        var stamps = OutstandingStamps(client: "c")
        for sequence in 1...5_000 { _ = stamps.stamp(Int64(sequence)) }
        for sequence in 1...4_999 {
            stamps.settle(Int64(sequence))
            if sequence % 997 == 0 { #expect(stamps.stamp(5_000).floor == Int64(sequence + 1)) }
        }
        #expect(stamps.stamp(5_001).floor == 5_000)
        #expect(OutstandingStamps.newClientID().count == 22 && WriteStamp.isValidClient(OutstandingStamps.newClientID()))
    }
}
