import Persistence
import Testing

@Suite("cache policy and backend registry")
struct PolicyAndRegistryTests {
    @Test("cache budgets outside 1 MB to 100 MB are rejected with the allowed range")
    func budgetBounds() throws {
        #expect(CachePolicy.default.maxBytes == 10_485_760)
        #expect(try CachePolicy(maxBytes: 1_048_576).maxBytes == 1_048_576)
        #expect(try CachePolicy(maxBytes: 104_857_600).maxBytes == 104_857_600)
        for bad in [0, 1_048_575, 104_857_601] {
            #expect(throws: CachePolicyError.self) { try CachePolicy(maxBytes: bad) }
        }
        do {
            _ = try CachePolicy(maxBytes: 5)
        } catch {
            #expect(error.description.contains("between 1 MB"))
        }
    }

    @Test("each round prunes 20% of the prunable queries, at least one, more when over 1,000")
    func pruneRounds() {
        let policy = CachePolicy.default
        #expect(policy.queriesToPrune(of: 0) == 0)
        #expect(policy.queriesToPrune(of: 3) == 1)
        #expect(policy.queriesToPrune(of: 10) == 2)
        #expect(policy.queriesToPrune(of: 1_500) == 500)
        #expect(policy.needsPruning(cacheBytes: 10_485_761, prunableQueries: 0))
        #expect(policy.needsPruning(cacheBytes: 0, prunableQueries: 1_001))
        #expect(!policy.needsPruning(cacheBytes: 10_485_760, prunableQueries: 1_000))
    }

    @Test("an unknown backend name is an error that lists the names available")
    func unknownBackend() {
        let backends = StorageBackends([.memory])
        #expect(backends.names == ["memory"])
        do {
            _ = try backends.open("rocksdb", directory: "x")
            Issue.record("opening an unknown backend succeeded")
        } catch let error as StorageError {
            guard case .unknownBackend(name: "rocksdb", available: ["memory"]) = error.code else {
                Issue.record("wrong error: \(error)")
                return
            }
            #expect(error.message.contains("available: memory"))
        } catch {
            Issue.record("wrong error: \(error)")
        }
    }
}
