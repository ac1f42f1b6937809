import YapDBIndex

extension YapDatabaseReadWriteTransaction {
    /// Runs `body` on the extension state stored under `key` (taken out of the transaction so it
    /// is uniquely referenced and its trees change in place), then puts it back. Does nothing
    /// when no `State` is stored there. A `PageError` (a damaged page) fails the transaction with
    /// `.corrupted`, its reason starting with `label` (e.g. "secondary index tags").
    func updateExtensionState<State: Sendable>(_ key: String, as _: State.Type, label: String,
                                               _ body: (inout State) throws(PageError) -> Void) {
        guard var state = extensionState(key) as? State else { return }
        setExtensionState(nil, forKey: key)
        do throws(PageError) {
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
