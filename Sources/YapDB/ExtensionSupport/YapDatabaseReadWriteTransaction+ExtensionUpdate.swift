import YapDBEngine

// The extensions' door into the read-write transaction: what an extension may do to the commit
// beside writing rows (extension state goes through `setExtensionState` and
// `updateExtensionState`). Extensions use these instead of reaching into the engine's
// transaction.
extension YapDatabaseReadWriteTransaction {
    /// Makes the transaction commit even if it writes no row: an extension changed its state,
    /// and the snapshot number moves on with that state (`WriteTransaction.markChanged`).
    func markChanged() { engineTransaction.markChanged() }

    /// Publishes the extensions' state even if the transaction commits nothing, without a
    /// commit (no log record, no snapshot bump): for state that describes the rows exactly as
    /// they are (`WriteTransaction.publishExtensionsWithoutCommit`).
    func publishExtensionsWithoutCommit() { engineTransaction.publishExtensionsWithoutCommit() }

    /// Appends an extension data record to this commit, replayed to the extension after a
    /// reopen (`WriteTransaction.appendExtensionData`).
    /// - Throws: `tooLarge` for a bad name or an over-long payload (nothing written), `io` when
    ///   the log cannot be written, and the refusal of a closed or poisoned database.
    func appendExtensionData(name: String, payload: [UInt8]) throws(EngineError) {
        try engineTransaction.appendExtensionData(name: name, payload: payload)
    }

    /// The rows this transaction changed so far (keys only), as the engine records them.
    var rowChangesSoFar: Changeset { engineTransaction.changeset }

    /// Runs `body` on the extension state stored under `key` (taken out of the transaction so it
    /// is uniquely referenced and its trees change in place), then puts it back. Does nothing
    /// when no `State` is stored there. An error (a damaged page: an `EngineError`) fails the
    /// transaction with `.corrupted`, its reason starting with `label` (e.g. "secondary index tags").
    func updateExtensionState<State: Sendable, Failure: Error>(_ key: String, as _: State.Type, label: String,
                                                               _ body: (inout State) throws(Failure) -> Void) {
        guard var state = extensionState(key) as? State else { return }
        setExtensionState(nil, forKey: key)
        do throws(Failure) {
            try body(&state)
        } catch {
            fail(.corrupted(offset: 0, reason: "\(label): \(error)"))
        }
        setExtensionState(state, forKey: key)
    }

    /// The row ids of every row in `collection`, in the key directory's order (gathered before a
    /// change so the walk does not see it).
    func rowids(inCollection collection: String) -> [UInt64] {
        var rowids: [UInt64] = []
        forEachKey(inCollection: collection) { _, entry in
            rowids.append(entry.rowid)
            return true
        }
        return rowids
    }
}
