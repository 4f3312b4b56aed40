public import CoreTree

/// When the server cache is pruned and how much goes each round.
///
/// The defaults follow the Firebase clients: a 10 MB budget on logical bytes (key plus value of
/// every cache row), checked at open and every 1,000 server-cache updates; when over budget, or
/// when more than 1,000 queries could be pruned, the least recently used 20% of the prunable
/// queries go, round after round, until the cache is back under budget.
public struct CachePolicy: Sendable, Equatable {
    /// The smallest budget accepted: 1 MB.
    public static let minimumBytes = 1_048_576
    /// The largest budget accepted: 100 MB.
    public static let maximumBytes = 104_857_600
    /// The default budget: 10 MB.
    public static let defaultBytes = 10_485_760

    /// The budget in logical bytes.
    public var maxBytes: Int
    /// How many server-cache updates pass between checks.
    public var checkInterval: Int
    /// The share of prunable queries removed each round.
    public var pruneFraction: Double
    /// The most prunable queries kept before pruning even under budget.
    public var maxPrunableQueries: Int

    /// The Firebase defaults (10 MB).
    public static let `default` = CachePolicy()

    /// A policy with a budget of `maxBytes`.
    ///
    /// - Throws: ``CachePolicyError`` unless `maxBytes` lies between 1 MB and 100 MB.
    public init(maxBytes: Int) throws(CachePolicyError) {
        guard (CachePolicy.minimumBytes...CachePolicy.maximumBytes).contains(maxBytes) else {
            throw CachePolicyError(requested: maxBytes)
        }
        self.init()
        self.maxBytes = maxBytes
    }

    private init() {
        maxBytes = CachePolicy.defaultBytes
        checkInterval = 1_000
        pruneFraction = 0.2
        maxPrunableQueries = 1_000
    }

    /// A policy with any budget, for tests that need a tiny cache.
    package static func unchecked(maxBytes: Int, checkInterval: Int = 1_000) -> CachePolicy {
        var policy = CachePolicy()
        policy.maxBytes = maxBytes
        policy.checkInterval = checkInterval
        return policy
    }

    /// Whether the cache needs pruning.
    public func needsPruning(cacheBytes: Int, prunableQueries: Int) -> Bool {
        cacheBytes > maxBytes || prunableQueries > maxPrunableQueries
    }

    /// How many of `prunable` queries one round removes (at least one).
    public func queriesToPrune(of prunable: Int) -> Int {
        guard prunable > 0 else { return 0 }
        let overLimit = max(0, prunable - maxPrunableQueries)
        return min(prunable, max(1, overLimit, Int((Double(prunable) * pruneFraction).rounded(.down))))
    }
}

/// A cache size outside 1 MB to 100 MB.
public struct CachePolicyError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of policy error.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The cache size lies outside 1 MB to 100 MB.
        public static let sizeOutOfRange = Code("sizeOutOfRange")
        public var description: String { name }
    }

    /// The size asked for.
    public let requested: Int

    init(requested: Int) {
        self.requested = requested
    }

    /// Always ``Code/sizeOutOfRange``.
    public var code: Code { .sizeOutOfRange }

    /// The accepted range and the size asked for.
    public var message: String {
        "a persistence cache size must lie between 1 MB (\(CachePolicy.minimumBytes) bytes) and 100 MB (\(CachePolicy.maximumBytes) bytes); got \(requested)"
    }

    /// Always nil: the size itself is the problem.
    public var underlyingError: (any Error)? { nil }

    public var description: String { message }
}
