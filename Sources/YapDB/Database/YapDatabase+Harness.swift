import Foundation
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
    ///   - countsExtensionPageReads: count the pages views' trees read (`extensionPagesRead`).
    ///   - mappedFileCheckInterval: how often transactions compare mapped files with their maps
    ///     (`EngineOptions.mappedFileCheckInterval`; zero: at every transaction); nil keeps the
    ///     default.
    ///   - descriptorCacheLimit: the most idle descriptors kept for sealed segments and index
    ///     files (`EngineOptions.descriptorCacheLimit`); nil keeps the default.
    ///
    /// No idle checkpoints: a harness counts and cuts the I/O calls, and a background
    /// checkpoint would interleave with them by the clock.
    /// - Throws: what `open(url:options:)` throws.
    package static func open(path: String, options: YapDatabaseOptions, fileSystem: any FileSystem = PosixFileSystem.shared,
                             segmentLimit: Int? = nil, indexPageSize: Int? = nil,
                             countsExtensionPageReads: Bool = false,
                             mappedFileCheckInterval: Duration? = nil,
                             descriptorCacheLimit: Int? = nil) throws(YapDatabaseError) -> YapDatabase {
        let url = URL(fileURLWithPath: path)
        let engine = try openEngine(url: url, options: options, fileSystem: fileSystem, segmentLimit: segmentLimit,
                                    indexPageSize: indexPageSize, countsExtensionPageReads: countsExtensionPageReads,
                                    idleCheckpoints: false, mappedFileCheckInterval: mappedFileCheckInterval,
                                    descriptorCacheLimit: descriptorCacheLimit)
        return YapDatabase(engine: engine, url: url, options: options)
    }

    /// Pages the views' trees have read since open, when the database was opened with
    /// `countsExtensionPageReads` (nil otherwise): how tests prove that a
    /// registration read nothing.
    package var extensionPagesRead: Int? { engine.extensionPagesRead }

    /// Spills of dirty index pages written by committed transactions since open
    /// (`YapDatabaseOptions.dirtyPageBudget`), for tests that prove a transaction spilled.
    package var spillCount: Int { engine.spillCount }

    /// Stops using the files without writing or syncing anything, as if the process had died:
    /// what a harness does to the database it was using when it cuts the simulated power.
    /// Later use of the database or its connections reports `closed`.
    package func abandon() {
        closedFlag.store(true, ordering: .releasing)
        engine.abandon()
        finishChangeStreams()
    }
}

extension YapDatabaseViewTransaction {
    /// Checks every tree of the view page by page (checksums, counts, fill, depth) and that
    /// its groups hold as many rows as its row → group tree; stops the program on a violation
    /// (tests). Returns the height of the tallest group tree. Reads the whole view.
    package func checkIndexInvariants() -> Int {
        let state = self.state
        do throws(EngineError) {
            try state.validate()
            var height = 0
            for group in try state.groupNames() { height = max(height, try state.tree(group)?.height ?? 0) }
            return height
        } catch {
            preconditionFailure("view \(name): \(error)")
        }
    }
}
