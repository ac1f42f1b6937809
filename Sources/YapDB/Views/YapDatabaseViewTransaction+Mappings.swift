import Foundation

/// Reading a view through mappings: (section, row) of a table or collection view to the row of
/// the view, and back. The mappings decide which group a section shows and whether its rows run
/// in reverse; the row itself is read in this transaction. Use mappings updated to this
/// transaction's snapshot (`update(with:)` or `getChanges(forNotifications:withMappings:)` after
/// `beginLongLivedReadTransaction()`), as a table view's data source does.
///
/// Sections and rows are `UInt`, as Swift imports YapDatabase's `NSUInteger`.
extension YapDatabaseViewTransaction {
    /// The (collection, key) shown at (section, row) `indexPath`, or nil.
    public func getCollectionKey(atIndexPath indexPath: IndexPath, withMappings mappings: YapDatabaseViewMappings) -> (String, String)? {
        guard indexPath.count == 2, indexPath[0] >= 0, indexPath[1] >= 0 else { return nil }
        return getCollectionKey(forRow: indexPath[1], section: indexPath[0], withMappings: mappings)
    }

    /// The (collection, key) shown at `row` of `section`, or nil.
    public func getCollectionKey(forRow row: Int, section: Int, withMappings mappings: YapDatabaseViewMappings) -> (String, String)? {
        guard row >= 0, section >= 0, let (group, index) = place(row: UInt(row), section: UInt(section), mappings) else { return nil }
        return getCollectionKey(atIndex: index, inGroup: group)
    }

    /// The object shown at (section, row) `indexPath`, or nil.
    public func object(at indexPath: IndexPath, with mappings: YapDatabaseViewMappings) -> Any? {
        getCollectionKey(atIndexPath: indexPath, withMappings: mappings).flatMap { transaction.object(forKey: $0.1, inCollection: $0.0) }
    }

    /// The object shown at `row` of `section`, or nil.
    public func object(atRow row: UInt, inSection section: UInt, with mappings: YapDatabaseViewMappings) -> Any? {
        guard let (collection, key) = collectionKey(row: row, section: section, mappings) else { return nil }
        return transaction.object(forKey: key, inCollection: collection)
    }

    /// The metadata shown at (section, row) `indexPath`, or nil.
    public func metadata(at indexPath: IndexPath, with mappings: YapDatabaseViewMappings) -> Any? {
        getCollectionKey(atIndexPath: indexPath, withMappings: mappings).flatMap { transaction.metadata(forKey: $0.1, inCollection: $0.0) }
    }

    /// The metadata shown at `row` of `section`, or nil.
    public func metadata(atRow row: UInt, inSection section: UInt, with mappings: YapDatabaseViewMappings) -> Any? {
        guard let (collection, key) = collectionKey(row: row, section: section, mappings) else { return nil }
        return transaction.metadata(forKey: key, inCollection: collection)
    }

    /// The (section, row) showing the row, or nil when it is not in the view, its group is not
    /// shown or it is outside the group's range.
    public func indexPath(forKey key: String, inCollection collection: String?, with mappings: YapDatabaseViewMappings) -> IndexPath? {
        guard let (group, index) = getGroupIndex(forKey: key, inCollection: collection) else { return nil }
        return mappings.indexPath(forIndex: UInt(index), inGroup: group)
    }

    /// Writes the row's section and row to `rowPtr` and `sectionPtr` (either may be nil) and
    /// returns true, or returns false when the row is not shown.
    @discardableResult
    public func getRow(_ rowPtr: UnsafeMutablePointer<UInt>?, section sectionPtr: UnsafeMutablePointer<UInt>?, forKey key: String,
                       inCollection collection: String?, with mappings: YapDatabaseViewMappings) -> Bool {
        guard let indexPath = indexPath(forKey: key, inCollection: collection, with: mappings) else { return false }
        rowPtr?.pointee = UInt(indexPath[1])
        sectionPtr?.pointee = UInt(indexPath[0])
        return true
    }

    /// The group and index in the view of `row` of `section`, through the mappings' ranges,
    /// reversal and consolidation.
    func place(row: UInt, section: UInt, _ mappings: YapDatabaseViewMappings) -> (String, Int)? {
        mappings.groupIndex(row: row, section: section).map { ($0.group, $0.index) }
    }

    func collectionKey(row: UInt, section: UInt, _ mappings: YapDatabaseViewMappings) -> (String, String)? {
        guard let (group, index) = place(row: row, section: section, mappings) else { return nil }
        return getCollectionKey(atIndex: index, inGroup: group)
    }
}
