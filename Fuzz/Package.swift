// swift-tools-version: 6.1
import PackageDescription

// The fuzz harness: libFuzzer targets over YapDB's raw-bytes entry points (the root package's
// `YapDBFuzzEntry` product). A separate package, so `swift build` / `swift test` at the root
// never build it. See README.md for how to build, run, add a crash and replay.

// A path dependency's identity is its folder's name (the checkout's, or a worktree's).
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "YapDB"

let entry: Target.Dependency = .product(name: "YapDBFuzzEntry", package: rootIdentity)

let package = Package(
    name: "YapDBFuzz",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "fuzz-records", targets: ["FuzzRecords"]),
        .executable(name: "fuzz-recovery", targets: ["FuzzRecovery"]),
        .executable(name: "fuzz-operations", targets: ["FuzzOperations"]),
        .executable(name: "fuzz-pages", targets: ["FuzzPages"]),
        .executable(name: "fuzz-postings", targets: ["FuzzPostings"]),
        .executable(name: "fuzz-query", targets: ["FuzzQuery"]),
        .executable(name: "fuzz-maintenance", targets: ["FuzzMaintenance"]),
        .executable(name: "fuzz-tool", targets: ["fuzz-tool"]),
    ],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .executableTarget(name: "FuzzRecords", dependencies: [entry]),
        .executableTarget(name: "FuzzRecovery", dependencies: [entry]),
        .executableTarget(name: "FuzzOperations", dependencies: [entry]),
        .executableTarget(name: "FuzzPages", dependencies: [entry]),
        .executableTarget(name: "FuzzPostings", dependencies: [entry]),
        .executableTarget(name: "FuzzQuery", dependencies: [entry]),
        .executableTarget(name: "FuzzMaintenance", dependencies: [entry]),
        .executableTarget(name: "fuzz-tool", dependencies: [entry]),
    ],
    swiftLanguageModes: [.v6]
)
