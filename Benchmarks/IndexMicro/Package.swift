// swift-tools-version: 6.1
import PackageDescription

// Micro-benchmarks of YapDBIndex's in-memory structures. A separate package so the root
// `swift test` never builds it; YapDBIndex's API is `package`, so its sources are compiled here
// as a module of this package through the `Sources/YapDBIndex` symlink (a separate module, so
// the figures include cross-module specialization of the @inlinable code).
// Run: swift run -c release --scratch-path /tmp/yapdb-index-bench IndexMicro
let package = Package(
    name: "IndexMicro",
    targets: [
        .target(name: "YapDBIndex"),
        .executableTarget(name: "IndexMicro", dependencies: ["YapDBIndex"]),
    ],
    swiftLanguageModes: [.v6]
)
