/// Where a transaction keeps a view's state. A persistent view's `ViewState` is stored as it
/// is, so index checkpoints write its trees (`ViewState+Pages.swift`); a view registered with
/// `YapDatabaseViewOptions.isPersistent = false` is wrapped in `MemoryViewState`, which is not
/// a `PagedExtensionState`: checkpoints never write it, and since its trees are built anew at
/// every registration they never read a page either. Both are versioned with the rows as any
/// extension state is.
struct MemoryViewState: Sendable {
    var state: ViewState
}

extension YapDatabaseReadTransaction {
    /// The state of the view (or filtered view) registered as `name`, or nil.
    /// In a read-write transaction, the rows the view has not placed yet are placed first
    /// (`deferViewInsert`), so every reader sees them.
    func viewState(_ name: String) -> ViewState? {
        if let writer = self as? YapDatabaseReadWriteTransaction, !writer.viewPendingInserts.isEmpty {
            writer.placePendingViewRows(name)
        }
        let value = extensionState(YapDatabaseAutoView.stateKey(name))
        return value as? ViewState ?? (value as? MemoryViewState)?.state
    }
}

extension YapDatabaseReadWriteTransaction {
    /// Stores (or, with nil, drops) the state of the view registered as `name`, kept in memory
    /// only when the state is not persistent.
    func setViewState(_ state: ViewState?, _ name: String) {
        let key = YapDatabaseAutoView.stateKey(name)
        guard let state else { return setExtensionState(nil, forKey: key) }
        setExtensionState(state.isPersistent ? state : MemoryViewState(state: state), forKey: key)
    }
}
