import Foundation
import YapDBEngine
import YapDBQuery

/// The query forms of YapDatabase's Swift overlay: iterate keys, keys and metadata, keys and
/// objects, rows or indexed values matching a `YapDatabaseQuery`, with a stop flag; count the
/// matches; run an aggregate. Each returns false (or nil) when the query is invalid or the
/// index cannot be read, and logs why; `explain` shows the plan.
///
/// Objects and metadata are loaded (through the connection's caches) only for the rows passed
/// to the block; which rows match is decided from the index alone.
extension YapDatabaseSecondaryIndexTransaction {
    /// Runs `query` and calls `body` per match; false (logged) on an invalid query or a damaged index.
    private func iterate(_ query: YapDatabaseQuery, entries: Bool = false, objects: Bool = false, located: Bool = false,
                         _ body: (String, String, UInt64, [SQLValue]?, KeydirEntry?, ValueLocation?, inout Bool) -> Void) -> Bool {
        do throws(YapDatabaseError) {
            try forEachMatch(bound(query), entries: entries, objects: objects, located: located, body)
            return true
        } catch {
            return reporting(error, false)
        }
    }

    /// Calls `block` with the collection and key of each row matching `query`, in the query's
    /// order, until it sets `stop`.
    /// - Returns: false if the query is invalid (or the index cannot be read); true otherwise.
    @discardableResult
    public func iterateKeys(matching query: YapDatabaseQuery, using block: (String, String, inout Bool) -> Void) -> Bool {
        iterate(query) { collection, key, _, _, _, _, stop in block(collection, key, &stop) }
    }

    /// Calls `block` with the collection, key and metadata of each matching row until it sets `stop`.
    /// - Returns: false if the query is invalid; true otherwise.
    @discardableResult
    public func iterateKeysAndMetadata(matching query: YapDatabaseQuery, using block: (String, String, Any?, inout Bool) -> Void) -> Bool {
        iterate(query, entries: true) { collection, key, _, _, entry, _, stop in
            block(collection, key, databaseTransaction.metadata(forKey: key, inCollection: collection, entry: entry), &stop)
        }
    }

    /// Calls `block` with the collection, key and object of each matching row until it sets `stop`.
    /// - Returns: false if the query is invalid; true otherwise.
    @discardableResult
    public func iterateKeysAndObjects(matching query: YapDatabaseQuery, using block: (String, String, Any?, inout Bool) -> Void) -> Bool {
        iterate(query, entries: true, objects: true, located: true) { collection, key, rowid, _, entry, object, stop in
            let value = if let object {
                databaseTransaction.object(forKey: key, inCollection: collection, rowid: rowid, at: object)
            } else {
                databaseTransaction.object(forKey: key, inCollection: collection, entry: entry)
            }
            block(collection, key, value, &stop)
        }
    }

    /// Calls `block` with the collection, key, object and metadata of each matching row until
    /// it sets `stop`.
    /// - Returns: false if the query is invalid; true otherwise.
    @discardableResult
    public func iterateRows(matching query: YapDatabaseQuery, using block: (String, String, Any, Any?, inout Bool) -> Void) -> Bool {
        iterate(query, entries: true, objects: true) { collection, key, _, _, entry, _, stop in
            guard let object = databaseTransaction.object(forKey: key, inCollection: collection, entry: entry) else { return }
            block(collection, key, object, databaseTransaction.metadata(forKey: key, inCollection: collection, entry: entry), &stop)
        }
    }

    /// Calls `block` with the value of `column` (or of `rowid`, the row's id) in each matching
    /// row (`Int`, `Double`, `String`, `Data`, or `NSNull` for NULL) until it sets `stop`.
    /// Reads only the index.
    /// - Returns: false if the query or the column is invalid; true otherwise.
    @discardableResult
    public func iterateIndexedValues(inColumn column: String, matching query: YapDatabaseQuery,
                                     using block: (Any, inout Bool) -> Void) -> Bool {
        guard let i = index.valuePosition(column) else {
            return reporting(YapDatabaseQuery.publicError(QueryError(offset: 0, reason: .unknownColumn(column))), false)
        }
        var failure: YapDatabaseError?
        let ok = iterate(query) { _, _, rowid, known, _, _, stop in
            do throws(YapDatabaseError) {
                let read: [SQLValue]? = if let known { known } else {
                    try reading { executor throws(EngineError) in try executor.rowValues(rowid) }
                }
                guard let values = read else { return }
                block(values[i].objectValue, &stop)
            } catch {
                failure = error
                stop = true
            }
        }
        if let failure { return reporting(failure, false) }
        return ok
    }

    /// The number of rows matching `query`'s `WHERE` clause, counted from the index (no row or
    /// object is read when the plan is exact); nil if the query is invalid.
    public func numberOfRows(matching query: YapDatabaseQuery) -> UInt? {
        do throws(YapDatabaseError) { return UInt(try count(where: countedWhere(query))) } catch { return reporting(error, nil) }
    }

    /// The result of `query`'s aggregate function (`COUNT`, `SUM`, `TOTAL`, `AVG`, `MIN`,
    /// `MAX`) over its rows: an `Int`, `Double`, `String` or `Data`; nil for NULL (no values),
    /// an integer overflow, a query without an aggregate function, or an invalid query.
    public func performAggregateQuery(_ query: YapDatabaseQuery) -> Any? {
        do throws(YapDatabaseError) {
            if let value = try repeatedEdgeValue(query) { return value.objectValue }
            let value = try aggregate(preparedAggregate(query))
            guard let value, !value.isNull else { return nil }
            return value.objectValue
        } catch {
            return reporting(error, nil)
        }
    }

    /// The result of `query`'s aggregate function over its rows, typed: the Swift-native form
    /// of ``performAggregateQuery(_:)``, which throws where that one logs and returns nil.
    /// NULL (no values to aggregate, or `LIMIT`/`OFFSET` removing the result row) is a value
    /// whose ``YapDatabaseQueryValue/isNull`` is true.
    ///
    /// ```swift
    /// let oldest = YapDatabaseQuery(aggregateFunction: "MIN(born)", string: "")   // made once
    /// let born = try index.aggregate(oldest).intValue
    /// ```
    ///
    /// - Throws: ``YapDatabaseError/invalidQuery(offset:reason:)`` for a malformed query or
    ///   function, an unknown column, unfitting parameters, a query with no aggregate function,
    ///   or an integer `SUM` that overflows (`TOTAL` sums as a real instead);
    ///   ``YapDatabaseError/corrupted(offset:reason:)`` for a damaged index.
    public func aggregate(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> YapDatabaseQueryValue {
        if let value = try repeatedEdgeValue(query) { return YapDatabaseQueryValue(value) }
        guard let value = try aggregate(preparedAggregate(query)) else {
            throw .invalidQuery(offset: 0, reason: "integer overflow in \(query.aggregateFunction ?? "the aggregate")")
        }
        return YapDatabaseQueryValue(value)
    }

    /// How the index answers `query`: the key ranges it reads (with their sizes), whether each
    /// candidate is checked against the `WHERE` clause, and how rows are ordered.
    /// - Throws: `.invalidQuery` for an invalid query; `.corrupted` for a damaged index.
    public func explain(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> String {
        try explain(bound(query))
    }
}

/// YapDatabase 3.x's spellings, with an `ObjCBool` stop pointer. Deprecated: use `iterate…`.
extension YapDatabaseSecondaryIndexTransaction {
    /// 3.x form of `iterateKeys(matching:using:)`.
    @available(*, deprecated, renamed: "iterateKeys(matching:using:)")
    @discardableResult
    public func enumerateKeys(matching query: YapDatabaseQuery,
                              using block: (String, String, UnsafeMutablePointer<ObjCBool>) -> Void) -> Bool {
        iterateKeys(matching: query) { collection, key, stop in withStop(&stop) { block(collection, key, $0) } }
    }

    /// 3.x form of `iterateKeysAndMetadata(matching:using:)`.
    @available(*, deprecated, renamed: "iterateKeysAndMetadata(matching:using:)")
    @discardableResult
    public func enumerateKeysAndMetadata(matching query: YapDatabaseQuery,
                                         using block: (String, String, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) -> Bool {
        iterateKeysAndMetadata(matching: query) { c, k, m, stop in withStop(&stop) { block(c, k, m, $0) } }
    }

    /// 3.x form of `iterateKeysAndObjects(matching:using:)`.
    @available(*, deprecated, renamed: "iterateKeysAndObjects(matching:using:)")
    @discardableResult
    public func enumerateKeysAndObjects(matching query: YapDatabaseQuery,
                                        using block: (String, String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) -> Bool {
        iterateKeysAndObjects(matching: query) { c, k, o, stop in
            guard let o else { return }
            withStop(&stop) { block(c, k, o, $0) }
        }
    }

    /// 3.x form of `iterateRows(matching:using:)`.
    @available(*, deprecated, renamed: "iterateRows(matching:using:)")
    @discardableResult
    public func enumerateRows(matching query: YapDatabaseQuery,
                              using block: (String, String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) -> Bool {
        iterateRows(matching: query) { c, k, o, m, stop in withStop(&stop) { block(c, k, o, m, $0) } }
    }

    /// 3.x form of `iterateIndexedValues(inColumn:matching:using:)`.
    @available(*, deprecated, renamed: "iterateIndexedValues(inColumn:matching:using:)")
    @discardableResult
    public func enumerateIndexedValues(inColumn column: String, matching query: YapDatabaseQuery,
                                       using block: (Any, UnsafeMutablePointer<ObjCBool>) -> Void) -> Bool {
        iterateIndexedValues(inColumn: column, matching: query) { v, stop in withStop(&stop) { block(v, $0) } }
    }

    /// 3.x form of `numberOfRows(matching:)`: stores the count in `count`; false if the query
    /// is invalid.
    @available(*, deprecated, renamed: "numberOfRows(matching:)")
    public func getNumberOfRows(_ count: UnsafeMutablePointer<UInt>, matching query: YapDatabaseQuery) -> Bool {
        guard let number = numberOfRows(matching: query) else { return false }
        count.pointee = number
        return true
    }
}

/// Calls `body` with an `ObjCBool` stop pointer and carries its value into `stop`.
private func withStop(_ stop: inout Bool, _ body: (UnsafeMutablePointer<ObjCBool>) -> Void) {
    var flag = ObjCBool(false)
    body(&flag)
    if flag.boolValue { stop = true }
}
