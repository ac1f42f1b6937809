// swift-tools-version: 6.1
import PackageDescription

// Layers, bottom up (see docs/architecture.md): CLZ4 → YapDBStorage → YapDBIndex → YapDBEngine → YapDB → yapdb;
// YapDBQuery (no dependencies) sits beside them, below YapDB.
// A lower layer never imports a higher one. Only YapDB has public API; the rest is `package`.
let package = Package(
    name: "YapDB",
    // The Apple platforms YapDatabase's users ship on, at the versions `Synchronization`
    // (`Mutex`, `Atomic`) needs. Linux needs no declaration.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "YapDB", targets: ["YapDB"]),
        .executable(name: "yapdb", targets: ["yapdb"]),
        .executable(name: "yapdb-measure", targets: ["YapDBMeasure"]),
        // Only for the fuzz harness in Fuzz/ (a separate package that cannot see `package` API):
        // raw-bytes entry points, NOT part of YapDB's supported API. See docs/architecture.md.
        .library(name: "YapDBFuzzEntry", targets: ["YapDBFuzzEntry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `make docs` only (swift package generate-documentation): a command plugin, so it adds
        // nothing to `swift build` or `swift test`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "CYapDBSupport"),
        // liblz4 off Apple platforms; there, the Compression framework (see LZ4.swift).
        .target(name: "YapDBStorage", dependencies: [
            .target(name: "CLZ4", condition: .when(platforms: [.linux, .android, .windows, .openbsd, .wasi])),
            "CYapDBSupport",
        ]),
        // The in-memory disk with power cuts and scripted faults, for tests and fuzzing only:
        // kept out of the production library.
        .target(name: "YapDBSimulatedDisk", dependencies: ["YapDBStorage"]),
        .target(name: "YapDBIndex"),
        // The query language of YapDatabaseQuery: SQLite's values, affinity and comparison rules,
        // the parser, and the brute-force evaluator (the reference for the secondary index).
        .target(name: "YapDBQuery"),
        .target(name: "YapDBEngine", dependencies: ["YapDBStorage", "YapDBIndex"]),
        .target(name: "YapDB", dependencies: ["YapDBEngine", "YapDBIndex", "YapDBStorage", "YapDBQuery"]),
        .target(name: "YapDBFuzzEntry", dependencies: ["YapDB", "YapDBStorage", "YapDBIndex", "YapDBSimulatedDisk"]),
        .executableTarget(
            name: "yapdb",
            dependencies: [
                "YapDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Developer measurements of the layers below the public API (not a product).
        .executableTarget(
            name: "YapDBMeasure",
            dependencies: [
                "YapDBEngine", "YapDBStorage", "YapDBIndex",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Child process of the reliability tests' SIGKILL runs and lock tests (not a product).
        .executableTarget(name: "YapDBCrashChild", dependencies: ["YapDB", "TestSupport"], path: "Tests/YapDBCrashChild"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "YapDBStorageTests", dependencies: ["YapDBStorage", "YapDBSimulatedDisk", "TestSupport"]),
        .testTarget(name: "YapDBIndexTests", dependencies: ["YapDBIndex", "TestSupport"]),
        .testTarget(name: "YapDBQueryTests", dependencies: ["YapDBQuery"]),
        .testTarget(name: "YapDBEngineTests", dependencies: ["YapDBEngine", "YapDBIndex", "YapDBStorage", "YapDBSimulatedDisk", "TestSupport"]),
        .testTarget(name: "YapDBTests", dependencies: ["YapDB", "YapDBQuery", "YapDBIndex", "YapDBSimulatedDisk", "TestSupport", "YapDBCrashChild"]),
        // Client code written as YapDatabase's Swift users write it, against `import YapDB` only:
        // proves the YapDatabase spellings (docs/api.md, README "Porting from YapDatabase").
        .testTarget(name: "YapDBPortingTests", dependencies: ["YapDB"]),
        // Replays Fuzz/Corpus/<target>/ and Fuzz/Crashes/<target>/ through the fuzz entry points.
        .testTarget(name: "YapDBFuzzEntryTests", dependencies: ["YapDBFuzzEntry"]),
        // The reliability harness (docs/reliability.md): crash sweep, fault matrix, SIGKILLs,
        // bad input, concurrency soaks. Sized by YAPDB_SCALE (small, the default, or full).
        .testTarget(
            name: "YapDBReliabilityTests",
            dependencies: ["YapDB", "YapDBEngine", "YapDBStorage", "YapDBSimulatedDisk", "YapDBIndex", "TestSupport", "YapDBCrashChild"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
