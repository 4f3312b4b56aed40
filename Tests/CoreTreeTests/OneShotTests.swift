import CoreTree
import Testing

@Suite("OneShot")
struct OneShotTests {
    struct Failed: Error, Equatable { let reason: String }

    @Test("a task that waits after the settle gets the result at once")
    func settledBeforeWaiting() async throws {
        let shot = OneShot<Int, Failed>()
        #expect(!shot.isSettled)
        #expect(shot.settled == nil)
        #expect(shot.succeed(7))
        #expect(shot.isSettled)
        #expect(try await shot.value() == 7)
        #expect(try await shot.value() == 7)
    }

    @Test("every task waiting before the settle is resumed with the same result")
    func manyWaiters() async throws {
        let shot = OneShot<String, Failed>()
        let waiters = 20
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<waiters { group.addTask { try await shot.value() } }
            // Settle only once all of them wait, so the waiting path is the one tested.
            while shot.waiterCount < waiters { await Task.yield() }
            #expect(shot.succeed("done"))
            var results: [String] = []
            for try await result in group { results.append(result) }
            #expect(results == Array(repeating: "done", count: waiters))
        }
        #expect(shot.waiterCount == 0)
    }

    @Test("a later settle is refused, reported, and changes nothing")
    func laterSettleRefused() async throws {
        let shot = OneShot<Int, Failed>()
        #expect(shot.fail(Failed(reason: "first")))
        #expect(!shot.succeed(1))
        #expect(!shot.fail(Failed(reason: "second")))
        #expect(shot.settled.map { if case .failure(let error) = $0 { error.reason } else { "success" } } == "first")
        await #expect(throws: Failed(reason: "first")) { try await shot.value() }
        #expect(await shot.result() == .failure(Failed(reason: "first")))
    }

    @Test("of many concurrent settles exactly one wins, and every waiter sees the winner's result")
    func concurrentSettles() async {
        for _ in 0..<50 {
            let shot = OneShot<Int, Never>()
            let waiter = Task { await shot.value() }
            let wins = await withTaskGroup(of: (Int, Bool).self) { group in
                for candidate in 0..<8 { group.addTask { (candidate, shot.succeed(candidate)) } }
                var wins: [Int] = []
                for await (candidate, won) in group where won { wins.append(candidate) }
                return wins
            }
            #expect(wins.count == 1)
            #expect(await waiter.value == wins.first)
        }
    }

    @Test("a Void one-shot settles with succeed()")
    func voidSuccess() async throws {
        let shot = OneShot<Void, any Error>()
        #expect(shot.succeed())
        #expect(!shot.succeed())
        try await shot.value()
    }

    @Test("a cancellation handler can settle it to release the waiter")
    func settleOnCancel() async {
        let shot = OneShot<Int, CancellationError>()
        let waiter = Task {
            await withTaskCancellationHandler {
                await shot.result()
            } onCancel: {
                shot.fail(CancellationError())
            }
        }
        while shot.waiterCount == 0 && !shot.isSettled { await Task.yield() }
        waiter.cancel()
        let result = await waiter.value
        #expect((try? result.get()) == nil)
        #expect(!shot.succeed(1))
    }
}
