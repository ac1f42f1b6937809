// swift-tools-version: 6.1
import PackageDescription

// Layers, bottom up (docs/architecture.md, "Layers"):
//
//        CLZ4   CYapDBSupport                                      swift-crypto
//           \    /                                                    |
//        YapDBStorage      YapDBIndex      YapDBQuery   YapDBFullText  YapDBCrypto
//              \            /                  |             |              |
//               YapDBEngine                    |             |              |
//                    \_____________ YapDB _____/_____________/______________/
//                                     |
//                  yapdb, YapDBMeasure (tools), YapDBFuzzEntry (fuzz harness only)
//
// YapDBSimulatedDisk (over YapDBStorage) is for tests, the reliability harness and fuzzing only.
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
        // Encryption at rest (docs/format.md §12): AES-GCM, HKDF and SHA-2 from `Crypto` (CryptoKit
        // on Apple platforms, BoringSSL elsewhere), PBKDF2 from `_CryptoExtras`. Only YapDBCrypto
        // imports it.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
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
            "YapDBCrypto",
        ]),
        // The in-memory disk with power cuts and scripted faults, for tests and fuzzing only:
        // kept out of the production library.
        .target(name: "YapDBSimulatedDisk", dependencies: ["YapDBStorage"]),
        .target(name: "YapDBIndex"),
        // Encryption at rest: data keys, their wrapping, per-file keys and the sealing of one
        // unit (record, checkpoint record, index page) with its associated data. The one target
        // that imports swift-crypto.
        .target(name: "YapDBCrypto", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]),
        // The query language of YapDatabaseQuery: SQLite's values, affinity and comparison rules,
        // the parser, and the brute-force evaluator (the reference for the secondary index).
        .target(name: "YapDBQuery"),
        // Full-text search's text analysis and queries: tokenizers, the FTS5 query grammar, the
        // brute-force matcher (the reference for the index), bm25 and snippets. No storage.
        .target(name: "YapDBFullText", exclude: ["generate_diacritics.py"]),
        .target(name: "YapDBEngine", dependencies: ["YapDBStorage", "YapDBIndex"]),
        .target(name: "YapDB", dependencies: ["YapDBEngine", "YapDBIndex", "YapDBStorage", "YapDBQuery", "YapDBFullText", "YapDBCrypto"]),
        .target(name: "YapDBFuzzEntry", dependencies: ["YapDB", "YapDBStorage", "YapDBIndex", "YapDBSimulatedDisk", "YapDBFullText"]),
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
                "YapDBEngine", "YapDBStorage", "YapDBIndex", "YapDBFullText", "YapDBCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Child process of the reliability tests' SIGKILL runs and lock tests (not a product).
        .executableTarget(name: "YapDBCrashChild", dependencies: ["YapDB", "TestSupport"], path: "Tests/YapDBCrashChild"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "YapDBStorageTests", dependencies: ["YapDBStorage", "YapDBSimulatedDisk", "TestSupport"]),
        .testTarget(name: "YapDBCryptoTests", dependencies: ["YapDBCrypto"]),
        .testTarget(name: "YapDBIndexTests", dependencies: ["YapDBIndex", "TestSupport"]),
        // SQLiteOracle.swift is generated by the excluded script from SQLite itself.
        .testTarget(name: "YapDBQueryTests", dependencies: ["YapDBQuery", "TestSupport"], exclude: ["generate_sqlite_oracle.py"]),
        // FTS5Oracle.swift is generated by the excluded script from SQLite FTS5 itself.
        .testTarget(name: "YapDBFullTextTests", dependencies: ["YapDBFullText", "TestSupport"], exclude: ["generate_fts5_oracle.py"]),
        .testTarget(name: "YapDBEngineTests", dependencies: ["YapDBEngine", "YapDBIndex", "YapDBStorage", "YapDBSimulatedDisk", "TestSupport"]),
        .testTarget(name: "YapDBTests", dependencies: ["YapDB", "YapDBQuery", "YapDBFullText", "YapDBIndex", "YapDBStorage", "YapDBSimulatedDisk", "TestSupport", "YapDBCrashChild"]),
        // Client code written as YapDatabase's Swift users write it, against `import YapDB` only:
        // proves the YapDatabase spellings (docs/api.md, README "Porting from YapDatabase").
        .testTarget(name: "YapDBPortingTests", dependencies: ["YapDB"]),
        // Replays Fuzz/Corpus/<target>/ and Fuzz/Crashes/<target>/ through the fuzz entry points.
        .testTarget(name: "YapDBFuzzEntryTests", dependencies: ["YapDBFuzzEntry", "YapDB", "YapDBSimulatedDisk", "YapDBStorage"]),
        // The reliability harness (docs/reliability.md): crash sweep, fault matrix, SIGKILLs,
        // bad input, concurrency soaks. Sized by YAPDB_SCALE (small, the default, or full).
        .testTarget(
            name: "YapDBReliabilityTests",
            dependencies: ["YapDB", "YapDBEngine", "YapDBStorage", "YapDBSimulatedDisk", "YapDBIndex", "YapDBFullText", "TestSupport", "YapDBCrashChild"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
