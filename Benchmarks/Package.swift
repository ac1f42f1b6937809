// swift-tools-version: 6.1
import PackageDescription

// YapDB against SQLite, GRDB and LMDB: the same workloads on each, interleaved, in one run.
// A separate package so the root `swift test` and CI never build it; it uses YapDB's public API
// only (the root package by path). Run it with `make bench` at the root (see docs/benchmarks.md).
let package = Package(
    name: "YapDBBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "yapdb-bench", targets: ["YapDBBench"]),
    ],
    dependencies: [
        .package(name: "YapDB", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .executableTarget(
            name: "YapDBBench",
            dependencies: [
                .product(name: "YapDB", package: "YapDB"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "CSQLite", "CLMDB",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
