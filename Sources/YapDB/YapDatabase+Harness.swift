import Foundation
import YapDBStorage
import YapDBEngine

// Hooks for the harnesses inside this package (the fuzz entry points of `YapDBFuzzEntry`):
// `package`, never `public`, so an application cannot pass a file system or abandon a
// database. See docs/architecture.md, "Fuzzing".
extension YapDatabase {
    /// Opens the database whose main file is `path` on `fileSystem` — the simulated disk, for
    /// power cuts — exactly as `open(url:options:)` does on the real one.
    ///
    /// - Parameters:
    ///   - segmentLimit: the size at which log segments roll (small values make a short
    ///     workload span several segments); nil keeps the default.
    ///   - indexPageSize: the index page size of a database this call creates (small pages make
    ///     small index files with several levels); nil keeps the default.
    /// - Throws: what `open(url:options:)` throws.
    package static func open(path: String, options: YapDatabaseOptions, fileSystem: any FileSystem,
                             segmentLimit: Int? = nil, indexPageSize: Int? = nil) throws(YapDatabaseError) -> YapDatabase {
        let url = URL(fileURLWithPath: path)
        let engine = try openEngine(url: url, options: options, fileSystem: fileSystem, segmentLimit: segmentLimit,
                                    indexPageSize: indexPageSize)
        return YapDatabase(engine: engine, url: url, options: options)
    }

    /// Stops using the files without writing or syncing anything, as if the process had died:
    /// what a harness does to the database it was using when it cuts the simulated power.
    /// Later use of the database or its connections reports `closed`.
    package func abandon() {
        closedFlag.store(true, ordering: .releasing)
        engine.abandon()
        finishChangeStreams()
    }
}
