import Foundation

/// Runs `body(index)` on `count` threads of their own at once and waits for all of them: the
/// concurrent-writers workload needs real threads, as an app's writers would be.
enum Threads {
    static func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }
}

/// Seconds in a duration.
extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Times `body` on the continuous clock, in seconds.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return (clock.now - start).seconds
}
