import Foundation

/// One modify-hook call: the row, what its proxies hold, and the flags.
struct RowHookCall {
    enum Value {
        /// The value being written (nil: no metadata).
        case written(Any?)
        /// The stored value, read only if a hook asks.
        case stored
    }
    let collection: String
    let key: String
    let object: Value
    let metadata: Value
    let flags: YapDatabaseHooksBitMask
}

/// Running the registered `YapDatabaseHooks` from the read-write transaction's write methods,
/// in registration order. Each call site costs one scan of the (short) extension list when no
/// hooks are registered.
extension YapDatabaseReadWriteTransaction {
    var registeredHooks: [YapDatabaseHooks] { extensions.compactMap { $0.ext as? YapDatabaseHooks } }

    /// Whether any hooks extension is registered (no allocation).
    var hasHooks: Bool { extensions.contains { $0.ext is YapDatabaseHooks } }

    /// The call for `setObject` (metadata `.set`/`.clear`) or `replaceObject` (`.keep`); nil
    /// when no hooks are registered. Call before the write (it checks whether the row exists).
    func rowHookCall(collection: String, key: String, object: Any, metadata: MetadataChange, newMetadata: Any?) -> RowHookCall? {
        guard hasHooks else { return nil }
        let exists = entry(collection: collection, key: key) != nil
        var flags: YapDatabaseHooksBitMask = [exists ? .updatedRow : .insertedRow, .changedObject]
        let metadataValue: RowHookCall.Value
        switch metadata {
        case .keep: metadataValue = .stored
        case .clear, .set:
            flags.insert(.changedMetadata)
            metadataValue = .written(newMetadata)
        }
        return RowHookCall(collection: collection, key: key, object: .written(object), metadata: metadataValue, flags: flags)
    }

    /// The call for `replaceMetadata` of an existing row; nil when no hooks are registered.
    func rowHookCall(collection: String, key: String, replacingMetadata metadata: Any?) -> RowHookCall? {
        guard hasHooks else { return nil }
        return RowHookCall(collection: collection, key: key, object: .stored, metadata: .written(metadata),
                           flags: [.updatedRow, .changedMetadata])
    }

    /// The call for a touch; nil when no hooks are registered.
    func rowHookCall(collection: String, key: String, touchingObject object: Bool, metadata: Bool) -> RowHookCall? {
        guard hasHooks else { return nil }
        var flags: YapDatabaseHooksBitMask = []
        if object { flags.insert(.touchedObject) }
        if metadata { flags.insert(.touchedMetadata) }
        return RowHookCall(collection: collection, key: key, object: .stored, metadata: .stored, flags: flags)
    }

    /// Runs `willModifyRow` (`will`) or `didModifyRow` of every hooks extension allowing the
    /// collection.
    func runModifyHooks(will: Bool, _ call: RowHookCall?) {
        guard let call else { return }
        for hooks in registeredHooks where hooks.isAllowed(call.collection) {
            guard let block = will ? hooks.willModifyRow : hooks.didModifyRow else { continue }
            block(self, call.collection, call.key, proxy(call.object, call, metadata: false), proxy(call.metadata, call, metadata: true), call.flags)
        }
    }

    func proxy(_ value: RowHookCall.Value, _ call: RowHookCall, metadata: Bool) -> YapProxyObject {
        switch value {
        case .written(let value): return YapProxyObject(value: value)
        case .stored:
            return YapProxyObject { [self] in
                metadata ? self.metadata(forKey: call.key, inCollection: call.collection)
                         : self.object(forKey: call.key, inCollection: call.collection)
            }
        }
    }

    /// The keys of `collection`, when some hooks extension wants to hear of each row of it
    /// being removed (else empty). Call before the collection is cleared.
    func keysForRemoveHooks(inCollection collection: String) -> [String] {
        guard hasHooks else { return [] }
        let wanted = registeredHooks.contains { hooks in
            hooks.isAllowed(collection) && (hooks.willRemoveRow != nil || hooks.didRemoveRow != nil)
        }
        guard wanted else { return [] }
        var keys: [String] = []
        forEachKey(inCollection: collection) { key, _ in
            keys.append(key)
            return true
        }
        return keys
    }

    /// Runs `willRemoveRow` (`will`) or `didRemoveRow` for each of `keys`.
    func runRemoveHooks(will: Bool, collection: String, keys: [String]) {
        guard !keys.isEmpty, hasHooks else { return }
        for hooks in registeredHooks where hooks.isAllowed(collection) {
            guard let block = will ? hooks.willRemoveRow : hooks.didRemoveRow else { continue }
            for key in keys { block(self, collection, key) }
        }
    }

    /// Runs `willRemoveAllRows` (`will`) or `didRemoveAllRows`.
    func runRemoveAllHooks(will: Bool) {
        guard hasHooks else { return }
        for hooks in registeredHooks {
            (will ? hooks.willRemoveAllRows : hooks.didRemoveAllRows)?(self)
        }
    }
}
