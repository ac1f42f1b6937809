import Synchronization

/// Who is reading which snapshot, and which changesets somebody still needs.
///
/// - **Leases**: a reader registers the snapshot generation it holds and releases it when its
///   snapshot goes (`leaseCount` lets tests see that every snapshot was let go; retired files
///   stay readable through the handles a snapshot shares, not through the leases).
/// - **Consumers** (the API's connections): each has a position (the snapshot it reflects).
///   Changesets are kept until every consumer has advanced past them; `changesets(after:)`
///   hands a consumer what it missed, in commit order.
///
/// Threading: every call takes the one `Mutex` below. Work done under it is O(1) amortized for
/// an append, O(log n + k) for handing out k changesets (a binary search by snapshot number: a
/// connection left behind in a long-lived read keeps many changesets alive, and every commit
/// takes this lock, so nothing here may scan them all), and O(consumers + dropped) for pruning.
package final class SnapshotRegistry: Sendable {
    struct State {
        var leases: [UInt64: Int] = [:]
        var consumers: [UInt64: UInt64] = [:]
        var nextConsumer: UInt64 = 1
        /// Changesets in commit order (strictly increasing snapshot numbers).
        var changesets = ChangesetQueue()
    }

    private let state = Mutex(State())

    package init() {}

    // MARK: Leases

    /// Registers a reader of snapshot generation `generation`.
    package func acquire(generation: UInt64) {
        state.withLock { $0.leases[generation, default: 0] += 1 }
    }

    /// Releases one reader of generation `generation`.
    package func release(generation: UInt64) {
        state.withLock { state in
            guard let count = state.leases[generation] else {
                preconditionFailure("SnapshotRegistry.release of generation \(generation) that holds no lease")
            }
            state.leases[generation] = count == 1 ? nil : count - 1
        }
    }

    /// How many leases are held.
    package var leaseCount: Int { state.withLock { $0.leases.values.reduce(0, +) } }

    // MARK: Consumers and changesets

    /// Registers a consumer positioned at `snapshot`; returns its id.
    package func addConsumer(at snapshot: UInt64) -> UInt64 {
        state.withLock { state in
            let id = state.nextConsumer
            state.nextConsumer += 1
            state.consumers[id] = snapshot
            return id
        }
    }

    /// Moves consumer `id` to `snapshot` and drops changesets nobody needs any more.
    package func advance(consumer id: UInt64, to snapshot: UInt64) {
        let dropped = state.withLock { state in
            state.consumers[id] = snapshot
            return Self.prune(&state)
        }
        // Released here, outside the lock: a changeset's attachment may hold the last
        // reference to an object whose deinit calls back into this registry.
        withExtendedLifetime(dropped) {}
    }

    /// Forgets consumer `id`.
    package func removeConsumer(_ id: UInt64) {
        let dropped = state.withLock { state in
            state.consumers[id] = nil
            return Self.prune(&state)
        }
        withExtendedLifetime(dropped) {}
    }

    /// Records a commit's changeset (call in commit order, under the writer lock).
    package func append(_ changeset: Changeset) {
        state.withLock { state in
            precondition(state.changesets.lastSnapshot.map { $0 < changeset.snapshot } ?? true,
                         "changesets must be appended in commit order")
            guard !state.consumers.isEmpty else { return }
            state.changesets.append(changeset)
        }
    }

    /// The changesets with snapshot numbers in (`after`, `through`], in order.
    package func changesets(after: UInt64, through: UInt64 = .max) -> [Changeset] {
        state.withLock { $0.changesets.range(after: after, through: through) }
    }

    /// How many changesets are retained.
    package var retainedChangesets: Int { state.withLock { $0.changesets.count } }

    /// Drops the changesets every consumer is past; returns them so the caller releases them
    /// after unlocking.
    private static func prune(_ state: inout State) -> [Changeset] {
        guard let oldest = state.consumers.values.min() else { return state.changesets.removeAll() }
        return state.changesets.removeThrough(snapshot: oldest)
    }
}

/// A snapshot registered as in use with the registry that handed it out; releasing the lease
/// (letting it go) ends the registration, so it can never be released twice or elsewhere.
package final class SnapshotLease: Sendable {
    package let snapshot: EngineSnapshot
    let registry: SnapshotRegistry

    init(snapshot: EngineSnapshot, registry: SnapshotRegistry) {
        self.snapshot = snapshot
        self.registry = registry
    }

    deinit { registry.release(generation: snapshot.generation) }
}
