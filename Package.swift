// swift-tools-version:6.2
// One root package; each module is a target and library product under Modules/<Name>.
// Targets for later issues are added by those issues.
import PackageDescription

/// Where each kind of target lives, computed in one place.
func module(_ name: String) -> String { "Modules/\(name)" }
func tests(_ name: String) -> String { "Tests/\(name)" }
func tool(_ name: String) -> String { "Tools/\(name)" }

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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
    ],
    targets: [
        .target(
            name: "CoreTree",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: module("CoreTree")
        ),
        .testTarget(
            name: "CoreTreeTests",
            dependencies: ["CoreTree", "TestSupport"],
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
            name: "queryengine-benchmark",
            dependencies: ["CoreTree", "QueryEngine", "TestSupport"],
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
            dependencies: ["PersistenceLMDB", "PersistenceConformance"],
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
        .executableTarget(
            name: "persistence-benchmark",
            dependencies: ["Persistence", "PersistenceSQLite", "PersistenceLMDB", "PersistenceLevelDB", "PersistenceConformance", "CoreTree"],
            path: tool("persistence-benchmark")
        ),
        // Seeded randomness shared by the test targets and the benchmarks (no product).
        .target(name: "TestSupport", path: tests("TestSupport")),
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
