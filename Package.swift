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
