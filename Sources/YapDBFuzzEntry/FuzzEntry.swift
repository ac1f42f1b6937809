import YapDB

/// Entry points for the fuzz harness in `Fuzz/` (a separate package, which cannot see the
/// `package` API of the lower layers). **Not part of YapDB's supported API**: the
/// `YapDBFuzzEntry` product exists only for `Fuzz/` and may change at any time.
///
/// Each entry point takes arbitrary bytes and must return normally for every input: a trap, a
/// hang or a huge allocation is a finding (docs/format.md, DESIGN.md §6 promise 6). Where an
/// entry point checks a behaviour against a model, a mismatch stops the process with
/// `fatalError("FUZZ FINDING …")`, which is how libFuzzer reports it.
///
/// Threading: each call builds its own simulated disk and database; calls may run on any
/// thread, one at a time per call.
public enum FuzzEntry {
    /// The fuzz targets, named as the corpus folders `Fuzz/Corpus/<name>/` are.
    public enum Target: String, CaseIterable, Sendable {
        /// `decodeRecords`: the record and commit decoder.
        case records
        /// `recoverImage`: opening an arbitrary database image.
        case recovery
        /// `runOperations`: an operation script against the public API and a model.
        case operations
        /// `decodePages`: hostile index pages under the key directory's trees.
        case pages
        /// `decodePostings`: hostile index pages under a full-text index's trees.
        case postings
        /// `parseQuery`: hostile full-text query text and tokenizer options.
        case query
        /// `maintainImage`: `stats`, `verify`, `compact` and `explain` on an arbitrary image.
        case maintenance
    }

    /// Runs `target`'s entry point on `data`.
    public static func run(_ target: Target, _ data: UnsafeRawBufferPointer) {
        switch target {
        case .records: decodeRecords(data)
        case .recovery: recoverImage(data)
        case .operations: runOperations(data)
        case .pages: decodePages(data)
        case .postings: decodePostings(data)
        case .query: parseQuery(data)
        case .maintenance: maintainImage(data)
        }
    }

    /// Treats `data` as a full-text query (or, by its first byte, a tokenizer option): parses it,
    /// and when it parses, matches, ranks, snippets and highlights a row made of the same text
    /// (see `QueryTarget`). Malformed text must end in a typed `FTSError` with its offset.
    public static func parseQuery(_ data: UnsafeRawBufferPointer) {
        QueryTarget.run(data)
    }

    /// Treats `data` as index pages (see `PagesTarget`): opens the key directory's trees on
    /// them, checks, walks and looks up every row it can reach, changes the directory and
    /// writes it back. Damage must end in a typed error, never a trap.
    public static func decodePages(_ data: UnsafeRawBufferPointer) {
        PagesTarget.run(data)
    }

    /// Treats `data` as index pages under a full-text index's four trees (see
    /// `PostingsTarget`) and runs every query form, a verification and changes over them.
    /// Damage must end in a typed error, never a trap.
    public static func decodePostings(_ data: UnsafeRawBufferPointer) {
        PostingsTarget.run(data)
    }

    /// Decodes `data` as a run of records — the bytes of a log segment after its header, or of
    /// a checkpoint after its header — through every decoder: framing, each record type's
    /// payload, value decompression, the commit-record search, the recovery scan of a segment
    /// holding these bytes, and the checkpoint reader on a checkpoint holding them. Each value
    /// record that decodes is re-encoded and must decode to the same fields.
    public static func decodeRecords(_ data: UnsafeRawBufferPointer) {
        RecordsTarget.run(FuzzInput(data))
    }

    /// Treats `data` as a database image (`RecoveryImage`: main file, segments, checkpoints,
    /// temporaries and open options) on a simulated disk and opens it. When it opens, every
    /// row is read, `verify()` runs, a row is written, and the database must close and open
    /// again with the same rows plus the new one.
    public static func recoverImage(_ data: UnsafeRawBufferPointer) {
        RecoveryTarget.run(FuzzInput(data))
    }

    /// Treats `data` as a database image, as `recoverImage` does; when it opens, runs the
    /// maintenance calls over it — `stats()`, `verify()`, `compact()`, a checkpoint — then
    /// builds a secondary index from its rows and explains, counts and lists queries with
    /// `LIMIT`/`OFFSET` near `Int.max` (see `MaintenanceTarget`).
    public static func maintainImage(_ data: UnsafeRawBufferPointer) {
        MaintenanceTarget.run(FuzzInput(data))
    }

    /// Decodes `data` into an operation script (`OperationScript`: transactions of set,
    /// replace, remove, clear and touch steps ending in commit, rollback or a thrown error;
    /// reads; reopen; power cuts and crash points; checkpoint; compaction) and runs it through
    /// the public API on a simulated disk with three connections whose object and metadata
    /// caches are off, of one entry, and large. After every step the connections must agree
    /// with a plain model; after every power cut the recovered state must be one the model
    /// passed through, no older than the last commit known durable.
    public static func runOperations(_ data: UnsafeRawBufferPointer) {
        OperationsTarget.run(FuzzInput(data))
    }

    /// Makes the database's log handler discard messages: the harness provokes errors on
    /// purpose. Process-wide; the fuzz executables call it once at start-up.
    public static func silenceLogging() {
        YapDatabase.setLogHandler { _ in }
    }

    /// Generated seed inputs for `target`: valid record streams, database images left by a
    /// short workload (some cut by power), and operation scripts. Deterministic.
    public static func seeds(for target: Target) -> [[UInt8]] {
        switch target {
        case .records: Seeds.records()
        case .recovery: Seeds.recovery()
        case .operations: Seeds.operations()
        case .pages: PagesTarget.seeds()
        case .postings: PostingsTarget.seeds()
        case .query: QueryTarget.seeds()
        case .maintenance: Seeds.recovery()   // the same images
        }
    }
}
