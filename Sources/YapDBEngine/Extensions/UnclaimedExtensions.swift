import Synchronization
import YapDBIndex
import YapDBStorage

/// What the index root record (extension roots) and the checkpoint (pending extension records)
/// held at open, not yet claimed by a registering extension, with what changed since (which the
/// extension must catch up with): the rows changed (shared by every unclaimed extension) and,
/// per extension, its own extension data records in commit order (docs/format.md §3) — also
/// for an extension with no roots (registered after the last checkpoint). An extension with a
/// record gets, instead of the shared rows, only those changed after its last record (its
/// "uncovered" rows): a record covers its commit and every commit before it.
///
/// Roots and records are carried
/// into it (`carry`): the roots as they were, the records as checkpoint records (type 23),
/// with a mark that rows changed since the roots which are no longer listed (the replay
/// position moves past them) — an extension derived from the rows then rebuilds, a
/// relationship gathers its protocol edges again and keeps its manual edges. They stay until
/// claimed or dropped by `unregisterExtension(withName:)`. While anything is unclaimed, every
/// commit's changes are recorded.
///
/// Threading: one `Mutex`. The writer records changes and checkpoints capture under the writer
/// lock (lock order: writer, then this).
final class UnclaimedExtensions: Sendable {
    /// One extension's records not yet claimed.
    struct Pending: Sendable, Equatable {
        /// Its extension data records since its roots, in commit order.
        var records: [[UInt8]] = []
        /// Rows changed between its roots (or last record) and the replay position, no
        /// longer listed.
        var rowChangesLost = false
        /// The rows changed after its last record (nil: it has none since the replay
        /// position, and the shared `State.catchUp` is its view).
        var uncovered: ExtensionCatchUp?

        /// This extension's catch-up: its records, and its view of the rows changed (`shared`
        /// when it has no record since the replay position).
        func catchUp(shared: ExtensionCatchUp) -> ExtensionCatchUp {
            var catchUp = uncovered ?? shared
            catchUp.records = records
            catchUp.rowChangesLost = rowChangesLost && uncovered == nil
            return catchUp
        }
    }

    struct State {
        var roots: [String: [UInt8]] = [:]
        var pending: [String: Pending] = [:]
        /// The rows changed since the replay position (for every unclaimed extension).
        var catchUp = ExtensionCatchUp()
        /// The state before the first claim of the write transaction under way (none, or one):
        /// put back if it does not commit (`undoClaims`), so a registration that fails keeps
        /// what it claimed for a later attempt.
        var beforeClaims: [State] = []
    }
    let state = Mutex(State())

    func load(roots: [String: [UInt8]], pending: [String: Pending] = [:], catchUp: ExtensionCatchUp) {
        state.withLock { $0 = State(roots: roots, pending: pending, catchUp: catchUp) }
    }

    /// Whether changes must be recorded (something is unclaimed).
    var isEmpty: Bool { state.withLock { $0.isEmpty } }

    /// Adds a commit's changes and its extension data records (those of extensions still
    /// unclaimed; an extension that claimed its state keeps its own). A record makes its
    /// extension's uncovered rows start again, empty.
    func recordChanges(_ changeset: Changeset, records: [(name: String, payload: [UInt8])] = []) {
        state.withLock { state in
            state.beforeClaims = []
            guard !state.isEmpty else { return }
            state.catchUp.record(changeset)
            for name in state.pending.keys where state.pending[name]!.uncovered != nil {
                state.pending[name]!.uncovered!.record(changeset)
            }
            for (name, payload) in records where state.roots[name] != nil || state.pending[name] != nil {
                state.pending[name, default: Pending()].records.append(payload)
                state.pending[name]!.uncovered = ExtensionCatchUp()
            }
        }
    }

    /// The root bytes of `name`, left unclaimed.
    func peekRoots(_ name: String) -> [UInt8]? { state.withLock { $0.roots[name] } }

    /// Takes the roots of `name` (nil when there are none, or when `acceptingLostRowChanges`
    /// is false and the rows changed since them are no longer known: then they are dropped and
    /// the extension rebuilds) and the catch-up: the rows changed since and the extension's
    /// records.
    func claimRoots(_ name: String, acceptingLostRowChanges: Bool) -> (bytes: [UInt8], catchUp: ExtensionCatchUp)? {
        state.withLock { state in
            guard state.roots[name] != nil else { return nil }
            state.noteClaim()
            let bytes = state.roots.removeValue(forKey: name)!
            let pending = state.pending.removeValue(forKey: name) ?? Pending()
            let catchUp = pending.catchUp(shared: state.catchUp)
            state.trimIfEmpty()
            if catchUp.rowChangesLost && !acceptingLostRowChanges { return nil }
            return (bytes, catchUp)
        }
    }

    /// Takes the extension data records of `name` that no roots go with, with its view of the
    /// rows changed (nil when it has no records).
    func claimRecords(_ name: String) -> ExtensionCatchUp? {
        state.withLock { state in
            guard state.roots[name] == nil, state.pending[name] != nil else { return nil }
            state.noteClaim()
            let pending = state.pending.removeValue(forKey: name)!
            let catchUp = pending.catchUp(shared: state.catchUp)
            state.trimIfEmpty()
            return catchUp
        }
    }

    /// A checkpoint is being captured (under the writer lock): returns the unclaimed roots and
    /// records it carries. Names `live` holds are dropped (a registered state
    /// replaced them), and a name whose records no longer fit one checkpoint record (its
    /// extension then rebuilds). The rows changed since the replay position are marked lost for
    /// every carried name, and the row catch-up starts again from this checkpoint.
    func carry(live: Set<String>) -> (roots: [String: [UInt8]], pending: [CheckpointPendingExtension]) {
        state.withLock { state in
            for name in live {
                state.roots[name] = nil
                state.pending[name] = nil
            }
            var carried: [CheckpointPendingExtension] = []
            for name in Set(state.roots.keys).union(state.pending.keys).sorted() {
                var pending = state.pending[name] ?? Pending()
                pending.rowChangesLost = !pending.catchUp(shared: state.catchUp).rowsUnchanged
                pending.uncovered = nil
                let record = CheckpointPendingExtension(name: name, rowChangesLost: pending.rowChangesLost, records: pending.records)
                guard record.encodedSize <= Format.maxRecordPayload else {
                    state.roots[name] = nil
                    state.pending[name] = nil
                    continue
                }
                state.pending[name] = pending
                carried.append(record)
            }
            state.catchUp = ExtensionCatchUp()
            return (state.roots, carried)
        }
    }

    /// The write transaction under way commits (or publishes its extension state): its claims
    /// stand.
    func keepClaims() { state.withLock { $0.beforeClaims = [] } }

    /// The write transaction under way did not commit: what it claimed is unclaimed again.
    /// (No commit falls between a claim and this: both happen under the writer lock.)
    func undoClaims() {
        state.withLock { state in
            if let before = state.beforeClaims.first { state = before }
        }
    }

    /// An index compaction is being captured (under the writer lock): every unclaimed state is
    /// dropped, since the compaction keeps only the pages of registered extensions.
    func dropAll() { state.withLock { $0 = State() } }

    /// Drops the unclaimed state of the extension named `name` (state names `kind:name`);
    /// returns whether there was any.
    func drop(extensionNamed name: String) -> Bool {
        state.withLock { state in
            func matches(_ stateName: String) -> Bool {
                stateName == name || stateName.split(separator: ":", maxSplits: 1).last.map(String.init) == name
            }
            var dropped = false
            for key in state.roots.keys where matches(key) { state.roots[key] = nil; dropped = true }
            for key in state.pending.keys where matches(key) { state.pending[key] = nil; dropped = true }
            state.trimIfEmpty()
            return dropped
        }
    }
}

extension UnclaimedExtensions.State {
    var isEmpty: Bool { roots.isEmpty && pending.isEmpty }

    /// Saves the state before the write transaction's first claim.
    mutating func noteClaim() {
        guard beforeClaims.isEmpty else { return }
        beforeClaims = [self]
    }

    mutating func trimIfEmpty() {
        if isEmpty { catchUp = ExtensionCatchUp() }
    }
}

extension Engine {
    /// Takes the roots extension state `name` recorded in the index (once; see
    /// `PagedExtensionState`): the bytes, a source and format to open its trees with, and the
    /// rows changed since they were written; nil when there are none. Reads no page. Call
    /// inside the registering write transaction, so no commit or checkpoint falls between the
    /// claim and the state that replaces it.
    ///
    /// With `acceptingLostRowChanges` the claim also succeeds when the rows changed since the
    /// roots are no longer known (`ExtensionCatchUp.rowChangesLost`: a checkpoint carried the
    /// roots past them); otherwise such roots are dropped and nil returned, so an extension
    /// derived from the rows rebuilds instead of silently diverging.
    package func claimExtensionRoots(_ name: String, acceptingLostRowChanges: Bool = false) -> ClaimedExtensionRoots? {
        guard let (bytes, catchUp) = unclaimed.claimRoots(name, acceptingLostRowChanges: acceptingLostRowChanges) else { return nil }
        return ClaimedExtensionRoots(rootBytes: bytes, catchUp: catchUp, format: index.format, source: extensionSource(index.source()))
    }

    /// Drops what is unclaimed of the extension registered last under `name` (its state names
    /// are `kind:name`), so later checkpoints stop carrying it. Returns whether there was
    /// anything. The newest checkpoint on disk still holds it until the next one is written.
    package func dropUnclaimedExtension(named name: String) -> Bool {
        unclaimed.drop(extensionNamed: name)
    }

    /// Takes the extension data records of extension state `name` (docs/format.md §3) when it
    /// has no roots to claim — it was registered after the newest checkpoint — in commit order
    /// (`records`), with the rows changed after the last of them (the catch-up's rows); nil
    /// when there are none. Call inside the registering write transaction, after
    /// `claimExtensionRoots(_:)` returned nil.
    package func claimExtensionRecords(_ name: String) -> ExtensionCatchUp? {
        unclaimed.claimRecords(name)
    }

    /// The root bytes extension state `name` recorded in the index, without claiming them (an
    /// extension reads what it stored, such as a search results view's query, before it
    /// decides how to register); nil when there are none or they were claimed or dropped.
    package func unclaimedExtensionRootBytes(_ name: String) -> [UInt8]? {
        unclaimed.peekRoots(name)
    }

    /// The source extension trees read through: `source`, counting pages when
    /// `EngineOptions.countsExtensionPageReads` asked for it.
    func extensionSource(_ source: IndexPageSource) -> any PageSource {
        guard let counter = extensionPageReads else { return source }
        return ExtensionCountingPageSource(base: source, counter: counter)
    }

    /// Pages read by extension trees since open (`EngineOptions.countsExtensionPageReads`; nil
    /// otherwise). For tests that prove a read touched no page.
    package var extensionPagesRead: Int? { extensionPageReads?.value.load(ordering: .relaxed) }
}

/// A page counter shared by the sources extension trees read through.
final class PageReadCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// A page source that counts the pages it hands out.
struct ExtensionCountingPageSource: PageSource {
    let base: IndexPageSource
    let counter: PageReadCounter

    var pageCapacity: Int? { base.pageCapacity }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        counter.value.add(1, ordering: .relaxed)
        try base.withPage(id, body)
    }
}
