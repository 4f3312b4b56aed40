// swift-tools-version:6.2
// One root package; each module is a target and library product under Modules/<Name>.
// Targets for later issues are added by those issues.
import PackageDescription

/// Where each kind of target lives, computed in one place.
func module(_ name: String) -> String { "Modules/\(name)" }
func tests(_ name: String) -> String { "Tests/\(name)" }
func tool(_ name: String) -> String { "Tools/\(name)" }
func fuzzTarget(_ name: String) -> String { "Tools/fuzz-targets/\(name)" }

let package = Package(
    name: "swift-realtime-database",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CoreTree", targets: ["CoreTree"]),
        .library(name: "QueryEngine", targets: ["QueryEngine"]),
        .library(name: "Persistence", targets: ["Persistence"]),
        .library(name: "PersistenceSQLite", targets: ["PersistenceSQLite"]),
        .library(name: "PersistenceLMDB", targets: ["PersistenceLMDB"]),
        .library(name: "PersistenceLevelDB", targets: ["PersistenceLevelDB"]),
        .library(name: "SyncProtocol", targets: ["SyncProtocol"]),
        .library(name: "SyncClient", targets: ["SyncClient"]),
        .library(name: "Presence", targets: ["Presence"]),
        .library(name: "SecurityRules", targets: ["SecurityRules"]),
        .library(name: "RealtimeDatabase", targets: ["RealtimeDatabase"]),
        .library(name: "ServerCore", targets: ["ServerCore"]),
        .library(name: "RequestParsing", targets: ["RequestParsing"]),
        .library(name: "RealtimeServer", targets: ["RealtimeServer"]),
        .library(name: "PostgresServerStore", targets: ["PostgresServerStore"]),
        .library(name: "StorageBench", targets: ["StorageBench"]),
        .executable(name: "rtdb-server", targets: ["rtdb-server"]),
        .executable(name: "rtdb-bench", targets: ["rtdb-bench"]),
    ],
    traits: [
        .trait(
            name: "SQLite",
            description: "Links the SQLite persistence backend into RealtimeDatabase as its default. Turn default traits off to link no backend and register LMDB or LevelDB yourself."),
        .trait(
            name: "SwiftCrypto",
            description: "CoreTree's node hashes use swift-crypto's SHA-1 (faster). Without it CoreTree builds no swift-crypto and hashes with its own SHA-1 (the fuzz build does that)."),
        .default(enabledTraits: ["SQLite", "SwiftCrypto"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        .target(
            name: "CoreTree",
            dependencies: [.product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["SwiftCrypto"]))],
            path: module("CoreTree")
        ),
        .testTarget(
            name: "CoreTreeTests",
            dependencies: ["CoreTree", "TestSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: tests("CoreTreeTests")
        ),
        .target(
            name: "QueryEngine",
            dependencies: ["CoreTree"],
            path: module("QueryEngine")
        ),
        .testTarget(
            name: "QueryEngineTests",
            dependencies: ["QueryEngine", "TestSupport"],
            path: tests("QueryEngineTests")
        ),
        .executableTarget(
            name: "rules-benchmark",
            dependencies: ["CoreTree", "SecurityRules"],
            path: tool("rules-benchmark")
        ),
        .executableTarget(
            name: "queryengine-benchmark",
            dependencies: ["CoreTree", "QueryEngine", "TestSupport", "CMallocInfo"],
            path: tool("queryengine-benchmark")
        ),
        .target(
            name: "Persistence",
            dependencies: ["CoreTree", "QueryEngine"],
            path: module("Persistence")
        ),
        .testTarget(
            name: "PersistenceTests",
            dependencies: ["Persistence", "PersistenceConformance"],
            path: tests("PersistenceTests")
        ),
        // Storage backends: one small target each over the system C library.
        .systemLibrary(
            name: "CSQLite", path: module("CSQLite"), pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLMDB", path: module("CLMDB"), pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // Debian ships no leveldb.pc, so no pkgConfig here (it would only print a warning).
        .systemLibrary(name: "CLevelDB", path: module("CLevelDB"), providers: [.apt(["libleveldb-dev"])]),
        .target(name: "PersistenceSQLite", dependencies: ["Persistence", "CSQLite"], path: module("PersistenceSQLite")),
        .target(name: "PersistenceLMDB", dependencies: ["Persistence", "CLMDB"], path: module("PersistenceLMDB")),
        .target(name: "PersistenceLevelDB", dependencies: ["Persistence", "CLevelDB"], path: module("PersistenceLevelDB")),
        .testTarget(
            name: "PersistenceSQLiteTests",
            dependencies: ["PersistenceSQLite", "PersistenceConformance"],
            path: tests("PersistenceSQLiteTests")
        ),
        .testTarget(
            name: "PersistenceLMDBTests",
            dependencies: ["PersistenceLMDB", "PersistenceConformance", "TestSupport"],
            path: tests("PersistenceLMDBTests")
        ),
        .testTarget(
            name: "PersistenceLevelDBTests",
            dependencies: ["PersistenceLevelDB", "PersistenceConformance"],
            path: tests("PersistenceLevelDBTests")
        ),
        // The suite every backend passes, run by each backend's test target (no product).
        .target(
            name: "PersistenceConformance",
            dependencies: ["Persistence", "CoreTree", "QueryEngine", "TestSupport"],
            path: tests("PersistenceConformance")
        ),
        // A child process for the conformance suite's SIGKILL durability test.
        .executableTarget(
            name: "persistence-crash-writer",
            dependencies: ["Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "PersistenceConformance"],
            path: tool("persistence-crash-writer")
        ),
        // The backend comparison tool: every workload through our engine and straight through
        // each C library (StorageBench), and its thin command line (rtdb-bench).
        .target(
            name: "StorageBench",
            dependencies: [
                "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "CoreTree", "QueryEngine",
                "CSQLite", "CLMDB", "CLevelDB",
            ],
            path: module("StorageBench")
        ),
        .testTarget(
            name: "StorageBenchTests",
            dependencies: ["StorageBench", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "TestSupport"],
            path: tests("StorageBenchTests")
        ),
        // Durable queue appends and syncs per write per backend (issue figures for group commit).
        .executableTarget(
            name: "persistence-benchmark",
            dependencies: [
                "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "PersistenceConformance", "CoreTree",
                "StorageBench",
            ],
            path: tool("persistence-benchmark")
        ),
        .executableTarget(
            name: "rtdb-bench",
            dependencies: [
                "StorageBench", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: tool("rtdb-bench")
        ),
        // The wire protocol (v5) only: frames, envelopes, actions, server messages, limits and the
        // one status vocabulary (WireStatus), shared by the client and the server.
        .target(
            name: "SyncProtocol",
            dependencies: ["CoreTree"],
            path: module("SyncProtocol")
        ),
        // The client's connection: PersistentConnection over a Transport (WebSocket, or in memory
        // for tests). The server never links it.
        .target(
            name: "SyncClient",
            dependencies: [
                "CoreTree", "SyncProtocol",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: module("SyncClient")
        ),
        // The Firebase security rules language: rules documents parsed and type-checked once,
        // evaluated per request. Pure: no I/O, no server types.
        .target(
            name: "SecurityRules",
            dependencies: ["CoreTree"],
            path: module("SecurityRules")
        ),
        .testTarget(
            name: "SecurityRulesTests",
            dependencies: ["SecurityRules", "CoreTree", "TestSupport"],
            path: tests("SecurityRulesTests")
        ),
        // Connection-aware client state: the .info tree, the server clock, remembered onDisconnect writes.
        .target(
            name: "Presence",
            dependencies: ["CoreTree"],
            path: module("Presence")
        ),
        .testTarget(
            name: "PresenceTests",
            dependencies: ["Presence", "CoreTree"],
            path: tests("PresenceTests")
        ),
        // The client users import: Firebase iOS names over SyncTree, PersistenceManager and
        // PersistentConnection. Links SQLite only with the SQLite trait (on by default); apps add
        // LMDB or LevelDB by product.
        .target(
            name: "RealtimeDatabase",
            dependencies: [
                "CoreTree", "QueryEngine", "Persistence", "SyncProtocol", "SyncClient", "Presence",
                .target(name: "PersistenceSQLite", condition: .when(traits: ["SQLite"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: module("RealtimeDatabase")
        ),
        .testTarget(
            name: "RealtimeDatabaseTests",
            dependencies: [
                "RealtimeDatabase", "CoreTree", "QueryEngine", "Persistence", "SyncProtocol", "SyncClient", "RealtimeServer", "ServerCore",
                "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "Presence", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: tests("RealtimeDatabaseTests")
        ),
        // Firebase's Swift API used as app code uses it, compiled in the Swift 5 language mode.
        .testTarget(
            name: "FirebaseAPICompileTests",
            dependencies: ["RealtimeDatabase"],
            path: tests("FirebaseAPICompileTests"),
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The same file (a symbolic link to it) compiled in the Swift 6 language mode.
        .testTarget(
            name: "FirebaseAPICompileSwift6Tests",
            dependencies: ["RealtimeDatabase"],
            path: tests("FirebaseAPICompileSwift6Tests"),
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A client process for the end-to-end tests (killed with SIGKILL mid-queue) and the client benchmarks.
        .executableTarget(
            name: "rtdb-client-probe",
            dependencies: [
                "RealtimeDatabase", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "SyncClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: tool("rtdb-client-probe")
        ),
        // The presence example of Firebase's offline page with PresenceTracker, against rtdb-server.
        .executableTarget(
            name: "presence-demo",
            dependencies: ["RealtimeDatabase", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: tool("presence-demo")
        ),
        // Client benchmarks: local write-to-event latency, local writes/s with persistence per
        // backend, cold start of a 10 MB cache with 1,000 tracked queries.
        .executableTarget(
            name: "rtdb-client-benchmark",
            dependencies: [
                "RealtimeDatabase", "RealtimeServer", "ServerCore", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB",
                "SyncClient", "SyncProtocol", "TestSupport", "StorageBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: tool("rtdb-client-benchmark")
        ),
        .testTarget(
            name: "SyncProtocolTests",
            dependencies: ["SyncProtocol", "CoreTree"],
            path: tests("SyncProtocolTests")
        ),
        .testTarget(
            name: "SyncClientTests",
            dependencies: ["SyncClient", "SyncProtocol", "CoreTree", "TestSupport"],
            path: tests("SyncClientTests")
        ),
        // The database apart from how clients reach it: namespaces (rules enforcement, server
        // values, transactions, onDisconnect, the exactly-once ledger, listener registries), the
        // store contract and the embedded store. Nothing of HTTP, WebSocket, TLS, JWT or metrics
        // exporters.
        .target(
            name: "ServerCore",
            dependencies: [
                "CoreTree", "QueryEngine", "Persistence", "SyncProtocol", "SecurityRules", "CRenameExchange",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: module("ServerCore")
        ),
        // The atomic directory swap an import switches a namespace in with (a header only).
        .systemLibrary(name: "CRenameExchange", path: module("CRenameExchange")),
        .testTarget(
            name: "ServerCoreTests",
            dependencies: [
                "ServerCore", "SyncProtocol", "CoreTree", "QueryEngine", "SecurityRules", "Persistence", "PersistenceSQLite",
                "PersistenceLMDB", "PersistenceLevelDB", "ServerStoreConformance", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: tests("ServerCoreTests")
        ),
        // What clients send besides the WebSocket protocol, parsed without I/O: REST paths and
        // query strings (strict percent-decoding, query parameters), compact tokens (header and
        // claims; the signature is RealtimeServer's). No NIO, so the fuzz targets stay cheap.
        .target(
            name: "RequestParsing",
            dependencies: ["CoreTree", "QueryEngine", "SyncProtocol"],
            path: module("RequestParsing")
        ),
        .testTarget(
            name: "RequestParsingTests",
            dependencies: ["RequestParsing", "CoreTree", "QueryEngine"],
            path: tests("RequestParsingTests")
        ),
        // How clients reach the database: the WebSocket protocol, REST API and streaming over
        // Hummingbird, auth tokens, TLS, metrics, the console. It links no storage backend; the
        // caller hands in a registry.
        .target(
            name: "RealtimeServer",
            dependencies: [
                "ServerCore", "CoreTree", "QueryEngine", "Persistence", "SyncProtocol", "SecurityRules", "RequestParsing",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: module("RealtimeServer"),
            resources: [.copy("Operations/Console")]
        ),
        .testTarget(
            name: "RealtimeServerTests",
            dependencies: [
                "RealtimeServer", "ServerCore", "SyncProtocol", "SyncClient", "CoreTree", "Persistence", "PersistenceSQLite", "PersistenceLMDB",
                "PersistenceLevelDB", "PersistenceConformance", "ServerStoreConformance", "TestSupport", "RequestParsing",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: tests("RealtimeServerTests")
        ),
        // Namespaces in PostgreSQL, shared by several rtdb-server nodes (the server core does not import it).
        .target(
            name: "PostgresServerStore",
            dependencies: [
                "ServerCore", "CoreTree",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: module("PostgresServerStore")
        ),
        .testTarget(
            name: "PostgresServerStoreTests",
            dependencies: [
                "PostgresServerStore", "ServerCore", "ServerStoreConformance", "CoreTree", "TestSupport", "RealtimeDatabase", "SyncProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: tests("PostgresServerStoreTests")
        ),
        // The ServerStore conformance suite every server store passes (no product), and its child
        // process for the SIGKILL check.
        .target(
            name: "ServerStoreConformance",
            dependencies: ["ServerCore", "CoreTree", "TestSupport"],
            path: tests("ServerStoreConformance")
        ),
        .executableTarget(
            name: "serverstore-crash-writer",
            dependencies: [
                "CoreTree", "ServerCore", "ServerStoreConformance", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB",
                "PostgresServerStore", .product(name: "Logging", package: "swift-log"),
            ],
            path: tool("serverstore-crash-writer")
        ),
        .executableTarget(
            name: "rtdb-server",
            dependencies: [
                "RealtimeServer", "ServerCore", "Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "PostgresServerStore",
                // `rtdb-server export` of a namespace a running server holds streams it from the server.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // glibc's mallopt, for `rtdb-server import` (the header is glibc's).
                .target(name: "CMallocInfo", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: tool("rtdb-server")
        ),
        // Chat-shaped data (rooms of ~400 messages) as a Firebase export, for import and load figures.
        .executableTarget(
            name: "gen-chat-data",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: tool("gen-chat-data")
        ),
        // Load generator for the server benchmarks (acknowledged writes/s, fan-out latency, idle connections).
        .executableTarget(
            name: "rtdb-loadgen",
            dependencies: [
                "SyncProtocol", "CoreTree", "TestSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: tool("rtdb-loadgen")
        ),
        // Seeded randomness shared by the test targets and the benchmarks (no product).
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto")],
            path: tests("TestSupport")),
        // Fuzz targets (Tools/fuzz): each feeds libFuzzer's bytes to one parser and checks
        // properties; built normally, each replays the files it is given. They link no NIO.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: fuzzTarget("FuzzSupport")),
        // libFuzzer's LLVMFuzzerRunDriver (a header only; the fuzzer runtime is linked by -sanitize=fuzzer).
        .systemLibrary(name: "CLibFuzzer", path: fuzzTarget("CLibFuzzer")),
        .target(name: "FuzzJSON", dependencies: ["CoreTree", "FuzzSupport"], path: fuzzTarget("fuzz-json")),
        .target(name: "FuzzWire", dependencies: ["SyncProtocol", "CoreTree", "FuzzSupport"], path: fuzzTarget("fuzz-wire")),
        .target(name: "FuzzRESTQuery", dependencies: ["RequestParsing", "QueryEngine", "FuzzSupport"], path: fuzzTarget("fuzz-rest-query")),
        .target(name: "FuzzRules", dependencies: ["SecurityRules", "CoreTree", "FuzzSupport"], path: fuzzTarget("fuzz-rules")),
        .target(name: "FuzzRows", dependencies: ["Persistence", "QueryEngine", "CoreTree", "FuzzSupport"], path: fuzzTarget("fuzz-rows")),
        .target(name: "FuzzToken", dependencies: ["RequestParsing", "CoreTree", "FuzzSupport"], path: fuzzTarget("fuzz-token")),
        // One program for them all (`rtdb-fuzz TARGET ...`): the fuzz build plans and links once.
        .executableTarget(
            name: "rtdb-fuzz",
            dependencies: ["FuzzJSON", "FuzzWire", "FuzzRESTQuery", "FuzzRules", "FuzzRows", "FuzzToken", "FuzzSupport"],
            path: fuzzTarget("rtdb-fuzz")),
        .systemLibrary(name: "CMallocInfo", path: tool("CMallocInfo")),
        .executableTarget(
            name: "coretree-benchmark",
            dependencies: ["CoreTree", "CMallocInfo", "TestSupport"],
            path: tool("coretree-benchmark")
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Settings every target shares, applied in one loop (as swift-nio does).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
