import Foundation

/// The `enumerate…` forms of a read transaction, spelled as Swift imports YapDatabase's
/// Objective-C methods: blocks get an `UnsafeMutablePointer<ObjCBool>` stop flag (set
/// `stop.pointee = true` to stop) and indexes are `UInt`. The YapDatabase 3.x forms that 4.x
/// replaced with `iterate…` are here too, deprecated, so old code compiles with a warning that
/// names the new spelling.
///
/// Threading: like every transaction member, only inside the transaction's block.
extension YapDatabaseReadTransaction {
    // MARK: YapDatabase 4.x

    /// Calls `block` with each collection that has a row for `key`, until it sets
    /// `stop.pointee`.
    public func enumerateCollections(forKey key: String, using block: (String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        checkValid()
        let names = collectionNames()
        iterate { stop in
            for collection in names where entry(collection: collection, key: key) != nil {
                withObjCStop(&stop) { block(collection, $0) }
                if !afterStep(stop) { return }
            }
        }
    }

    /// Calls `block` with the index (in `keys`) and object (nil when missing) of each key of
    /// `collection`, in no particular order, until it sets `stop.pointee`.
    public func enumerateObjects(forKeys keys: [String], inCollection collection: String?,
                                 unorderedUsing block: (UInt, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerateKeys(keys) { index, key, stop in block(index, object(forKey: key, inCollection: collection), stop) }
    }

    /// Calls `block` with the index (in `keys`) and metadata (nil when missing) of each key of
    /// `collection`, in no particular order, until it sets `stop.pointee`.
    public func enumerateMetadata(forKeys keys: [String], inCollection collection: String?,
                                  unorderedUsing block: (UInt, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerateKeys(keys) { index, key, stop in block(index, metadata(forKey: key, inCollection: collection), stop) }
    }

    /// Calls `block` with the index (in `keys`), object and metadata (nil when missing) of each
    /// key of `collection`, in no particular order, until it sets `stop.pointee`.
    public func enumerateRows(forKeys keys: [String], inCollection collection: String?,
                              unorderedUsing block: (UInt, Any?, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerateKeys(keys) { index, key, stop in
            block(index, object(forKey: key, inCollection: collection), metadata(forKey: key, inCollection: collection), stop)
        }
    }

    func enumerateKeys(_ keys: [String], _ step: (UInt, String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        checkValid()
        iterate { stop in
            for (index, key) in keys.enumerated() {
                withObjCStop(&stop) { step(UInt(index), key, $0) }
                if !afterStep(stop) { return }
            }
        }
    }

    /// Calls `block` with the collection, key and metadata (nil when none) of every row.
    public func iterateKeysAndMetadataInAllCollections(_ block: (String, String, Any?, inout Bool) -> Void) {
        iterateKeysAndMetadataInAllCollections(block, filter: nil)
    }

    /// Like `iterateKeysAndMetadataInAllCollections(_:)`, deciding by (collection, key) before
    /// decoding which rows to visit.
    public func iterateKeysAndMetadataInAllCollections(_ block: (String, String, Any?, inout Bool) -> Void,
                                                       filter: ((String, String) -> Bool)?) {
        iterateAllEntries(filter: filter) { collection, key, entry, stop in
            block(collection, key, cachedOrDecodedMetadata(entry, collection: collection, key: key), &stop)
        }
    }

    // MARK: YapDatabase 3.x (deprecated)

    /// YapDatabase 3.x's form of `iterateCollections(_:)`.
    @available(*, deprecated, renamed: "iterateCollections(_:)")
    public func enumerateCollections(_ block: (String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateCollections { collection, stop in withObjCStop(&stop) { block(collection, $0) } }
    }

    /// YapDatabase 3.x's form of `iterateKeys(inCollection:using:)`.
    @available(*, deprecated, renamed: "iterateKeys(inCollection:using:)")
    public func enumerateKeys(inCollection collection: String?, using block: (String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateKeys(inCollection: collection) { key, stop in withObjCStop(&stop) { block(key, $0) } }
    }

    /// YapDatabase 3.x's form of `iterateKeysAndObjects(inCollection:using:)`.
    @available(*, deprecated, renamed: "iterateKeysAndObjects(inCollection:using:)")
    public func enumerateKeysAndObjects(inCollection collection: String?,
                                        using block: (String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateKeysAndObjects(inCollection: collection, filter: nil) { (key: String, object: Any, stop: inout Bool) in
            withObjCStop(&stop) { block(key, object, $0) }
        }
    }

    /// YapDatabase 3.x's form of `iterateKeysAndObjects(inCollection:using:filter:)`.
    @available(*, deprecated, renamed: "iterateKeysAndObjects(inCollection:using:filter:)")
    public func enumerateKeysAndObjects(inCollection collection: String?,
                                        using block: (String, Any, UnsafeMutablePointer<ObjCBool>) -> Void,
                                        withFilter filter: ((String) -> Bool)?) {
        iterateKeysAndObjects(inCollection: collection, filter: filter) { (key: String, object: Any, stop: inout Bool) in
            withObjCStop(&stop) { block(key, object, $0) }
        }
    }

    /// YapDatabase 3.x's form of `iterateKeysAndMetadata(inCollection:using:)`.
    @available(*, deprecated, renamed: "iterateKeysAndMetadata(inCollection:using:)")
    public func enumerateKeysAndMetadata(inCollection collection: String?,
                                         using block: (String, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateKeysAndMetadata(inCollection: collection) { (key: String, metadata: Any?, stop: inout Bool) in
            withObjCStop(&stop) { block(key, metadata, $0) }
        }
    }

    /// YapDatabase 3.x's form of `iterateRows(inCollection:using:)`.
    @available(*, deprecated, renamed: "iterateRows(inCollection:using:)")
    public func enumerateRows(inCollection collection: String?,
                              using block: (String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateRows(inCollection: collection) { (key: String, object: Any, metadata: Any?, stop: inout Bool) in
            withObjCStop(&stop) { block(key, object, metadata, $0) }
        }
    }

    /// YapDatabase 3.x's form of `iterateKeysAndObjectsInAllCollections(_:)`.
    @available(*, deprecated, renamed: "iterateKeysAndObjectsInAllCollections(_:)")
    public func enumerateKeysAndObjectsInAllCollections(_ block: (String, String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateKeysAndObjectsInAllCollections { collection, key, object, stop in
            withObjCStop(&stop) { block(collection, key, object, $0) }
        }
    }

    /// YapDatabase 3.x's form of `iterateRowsInAllCollections(_:)`.
    @available(*, deprecated, renamed: "iterateRowsInAllCollections(_:)")
    public func enumerateRowsInAllCollections(_ block: (String, String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterateRowsInAllCollections { collection, key, object, metadata, stop in
            withObjCStop(&stop) { block(collection, key, object, metadata, $0) }
        }
    }
}
