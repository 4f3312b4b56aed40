import Testing
@testable import ServerCore

/// The shared-log follower's bookkeeping on its own.
@Suite("Shared log follower")
struct SharedLogFollowerTests {
    @Test("Waiting writes go out as one group; a catch-up wish alone yields no group and is taken once")
    func groupsAndCatchUps() {
        var follower = SharedLogFollower<Int, String>(at: 7)
        #expect(!follower.hasWork)
        follower.wantCatchUp()
        #expect(follower.hasWork)
        #expect(follower.next() == nil, "a catch-up alone")
        #expect(!follower.hasWork, "the wish was taken")
        follower.enqueue(1)
        follower.enqueue(2)
        follower.wantCatchUp()
        #expect(follower.next() == [1, 2], "the catch-up runs under the group's lock")
        #expect(!follower.hasWork)
        #expect(follower.sequence == 7)
    }

    @Test("Decided writes are handed out once, and a new group starts with none")
    func decided() {
        var follower = SharedLogFollower<Int, String>(at: 0)
        follower.enqueue(1)
        _ = follower.next()
        follower.decided("a")
        follower.decided("b")
        follower.reached(12)
        #expect(follower.takeDecided() == ["a", "b"])
        #expect(follower.takeDecided().isEmpty)
        follower.decided("stale")
        follower.enqueue(2)
        _ = follower.next()
        #expect(follower.takeDecided().isEmpty, "a new group forgets what an earlier one left")
        #expect(follower.sequence == 12)
    }
}
