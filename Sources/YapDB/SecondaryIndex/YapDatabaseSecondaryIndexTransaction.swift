import Foundation
import YapDBIndex  // PageError: the key directory's reads below (not the index's trees)
import YapDBEngine
import YapDBQuery

/// A transaction's handle on a secondary index (`transaction.ext(name) as?
/// YapDatabaseSecondaryIndexTransaction`): runs `YapDatabaseQuery`s against the index as of
/// the transaction's snapshot (a read-write transaction sees its own changes).
///
/// Threading: valid only inside its transaction's block, on the thread running it.
public final class YapDatabaseSecondaryIndexTransaction {
    let index: YapDatabaseSecondaryIndex
    let name: String
    /// The database transaction this handle reads through.
    public let databaseTransaction: YapDatabaseReadTransaction

    /// The key of the index's state in the snapshot (made once).
    let stateKey: String
    /// A read-only transaction's executor, made on first use: its snapshot, and so the index
    /// state, cannot change. A read-write transaction makes one per query (its writes change
    /// the state). Boxed, so a query borrows it instead of copying (and retaining) its fields.
    private var readOnlyExecutor: ExecutorBox?

    /// The last aggregate query without parameters made ready (by its texts), and the last
    /// `WHERE` query counted so: a loop that runs one query again skips the parse memo's
    /// lookups and the binding. Only parses are kept — every call reads the index.
    var lastAggregate: PreparedAggregate? { didSet { lastEdgeRead = nil } }
    /// `lastAggregate` when it is a `MIN`/`MAX` over every row read from a column's edge in
    /// this read-only transaction, reduced to plain values (`EdgeRead`); cleared whenever
    /// `lastAggregate` changes.
    var lastEdgeRead: EdgeRead?
    /// The buffers of `forEachMatch`'s held matches, kept between queries (nil while a query
    /// uses them).
    var pendingMatches: PendingMatches?
    var lastCounted: (query: String, whereClause: QueryExpression?)?
    /// The last query text this transaction parsed, and its parse: a loop running one text
    /// with new parameters binds it without the index's shared parse memo (its lock and the
    /// text's hash).
    var lastParsed: LastParse?
    /// The collection name `forEachMatch` last decoded from a row key, kept between queries
    /// (nil while a query uses it): a loop of queries over one collection decodes it once.
    var collectionMemo: CollectionMemo?

    init(index: YapDatabaseSecondaryIndex, name: String, transaction: YapDatabaseReadTransaction) {
        self.index = index
        self.name = name
        stateKey = YapDatabaseSecondaryIndex.stateKey(name)
        databaseTransaction = transaction
    }

    /// The index as of the transaction.
    /// - Throws: `.corrupted` when the index has no state in this snapshot (its registration
    ///   did not finish).
    @inline(__always)
    func executor() throws(YapDatabaseError) -> ExecutorBox {
        if let readOnlyExecutor { return readOnlyExecutor }
        return try makeExecutor()
    }

    /// The executor over this snapshot's state, kept when the transaction is read-only.
    private func makeExecutor() throws(YapDatabaseError) -> ExecutorBox {
        guard let state = databaseTransaction.extensionState(stateKey) as? SecondaryIndexState else {
            throw .corrupted(offset: 0, reason: "secondary index \(name) has no stored state")
        }
        let box = ExecutorBox(SecondaryIndexExecutor(state: state, index: index))
        if !(databaseTransaction is YapDatabaseReadWriteTransaction) { readOnlyExecutor = box }
        return box
    }

    /// Runs `body` on the executor; a damaged index page becomes `.corrupted`.
    @inline(__always)
    func reading<T>(_ body: (SecondaryIndexExecutor) throws(EngineError) -> T) throws(YapDatabaseError) -> T {
        databaseTransaction.checkValid()
        let box = try executor()
        do throws(EngineError) { return try body(box.executor) } catch {
            throw damaged(error)
        }
    }

    /// `query` parsed and bound (`YapDatabaseSecondaryIndex.bind`), the parse of the last
    /// text kept.
    /// - Throws: `.invalidQuery` for a malformed query, an unknown column or unfitting parameters.
    func bound(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> BoundQuery {
        let text = query.queryString
        if let last = lastParsed, last.text == text { return try last.bind(query) }
        guard let parsed = try index.parsedQuery(query) else { return try index.bind(query) }
        let last = LastParse(text: text, parsed: parsed)
        lastParsed = last
        return try last.bind(query)
    }

    /// A damaged index page, as the error the transaction's callers see.
    func damaged(_ error: EngineError) -> YapDatabaseError {
        .corrupted(offset: 0, reason: "secondary index \(name): \(error); run verify()")
    }

    /// Logs `error` and returns `value` (the compatible forms answer false or nil).
    func reporting<T>(_ error: YapDatabaseError, _ value: T) -> T {
        YapDatabaseLogging.log(.error, "secondary index \(name): \(error)")
        return value
    }

    // MARK: Core (the public forms in YapDatabaseSecondaryIndexTransaction+Query.swift call these)

    /// Calls `body` with each matching row's collection, key, row id, stored column values
    /// (nil when not read), its key-directory entry when `entries` is set (read in the same
    /// pass as the key, for callers that load objects or metadata) and, when `located` is set
    /// in a read-only transaction, the location its column entry gives for the row's object
    /// instead of the entry (`SecondaryIndexState.entryParts`: to be checked as it is read;
    /// a batch holding a location whose segment is gone gets entries instead), in the query's
    /// order, until it sets its stop flag.
    ///
    /// With `entries`, matches whose column entry carries the row key are held back up to
    /// `PendingMatches.capacity` at a time: their entries looked up together
    /// (`Keydir.entries(forRowKeys:into:)`), or nothing looked up when their objects' locations
    /// are used, and the rows' objects asked into the CPU's caches when `objects` is set,
    /// before `body` gets them in order: the memory waits overlap. `body` still sees every row
    /// in the query's order, and a stop ends the walk (at most a batch of later rows was read
    /// for nothing).
    func forEachMatch(_ query: BoundQuery, entries: Bool = false, objects: Bool = false, located: Bool = false,
                      _ body: (String, String, UInt64, [SQLValue]?, KeydirEntry?, ValueLocation?, inout Bool) -> Void) throws(YapDatabaseError) {
        // A write transaction reads its own new records through the engine: locations there
        // are left to the key directory.
        let located = located && entries && databaseTransaction.readsSnapshot
        databaseTransaction.iterationDepth += 1
        defer { databaseTransaction.iterationDepth -= 1 }
        // Taken while in use (a query run from `body` makes its own), put back after.
        var memo = collectionMemo ?? CollectionMemo()
        collectionMemo = nil
        defer { collectionMemo = memo }
        // Taken while in use: a query run from `body` makes its own.
        let pending = entries ? (pendingMatches ?? PendingMatches()) : nil
        pendingMatches = nil
        defer { if let pending { pending.removeAll(); pendingMatches = pending } }
        try databaseTransaction.withKeydir { (keydir) throws(YapDatabaseError) in try reading { executor throws(EngineError) in
            var failure: EngineError?
            try executor.run(query) { rowid, values, stored in
                var stop = false
                let parts: (object: ValueLocation, rowKey: UnsafeRawBufferPointer)?
                do throws(EngineError) { parts = try SecondaryIndexState.entryParts(stored) } catch {
                    failure = error
                    return false
                }
                if let pending, let parts {
                    pending.append(rowid, values, parts.rowKey, parts.object)
                    guard pending.count == PendingMatches.capacity else { return true }
                    do throws(EngineError) {
                        return try deliver(pending, keydir: keydir, objects: objects, located: located, memo: &memo, body)
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let pending, pending.count > 0 {
                    // A match without a row key: the held ones go first, in order.
                    do throws(EngineError) {
                        guard try deliver(pending, keydir: keydir, objects: objects, located: located, memo: &memo, body) else { return false }
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let parts {
                    // The column entry carries the row key: no walk of the row-ids tree.
                    do throws(EngineError) {
                        let (collection, key, entry) = try mappingPageErrors { () throws(PageError) in
                            try keydir.row(forRowKey: parts.rowKey, withEntry: entries, memo: &memo)
                        }
                        body(collection, key, rowid, values, entry, nil, &stop)
                    } catch {
                        failure = error
                        return false
                    }
                } else if entries {
                    guard let (collection, key, entry) = databaseTransaction.row(ofRowid: rowid, memo: &memo) else { return true }
                    body(collection, key, rowid, values, entry, nil, &stop)
                } else {
                    guard let (collection, key) = databaseTransaction.owner(ofRowid: rowid) else { return true }
                    body(collection, key, rowid, values, nil, nil, &stop)
                }
                return !stop
            }
            if let failure { throw failure }
            if let pending, pending.count > 0 {
                _ = try deliver(pending, keydir: keydir, objects: objects, located: located, memo: &memo, body)
            }
        } }
    }

    /// Hands the held matches to `body` in order, each with its entry (looked up together) or,
    /// when `located`, its object's location, and empties `pending`; false when `body` set its
    /// stop flag.
    private func deliver(_ pending: PendingMatches, keydir: Keydir, objects: Bool, located: Bool, memo: inout CollectionMemo,
                         _ body: (String, String, UInt64, [SQLValue]?, KeydirEntry?, ValueLocation?, inout Bool) -> Void) throws(EngineError) -> Bool {
        defer { pending.removeAll() }
        // After a compaction moved their records, the batch's entries are looked up together
        // as without locations (a location in a segment that is gone would cost each row a
        // lookup of its own).
        let reader = databaseTransaction.reader
        let located = located && databaseTransaction.readsSnapshot && pending.objects.allSatisfy { reader.holdsSegment(of: $0) }
        if located {
            if objects { for object in pending.objects { databaseTransaction.prefetchObject(at: object) } }
        } else {
            try mappingPageErrors { () throws(PageError) in try keydir.entries(forRowKeys: pending.rowKeys, into: &pending.entries) }
            if objects {
                for entry in pending.entries { if let entry { databaseTransaction.prefetchObject(at: entry.object) } }
            }
        }
        let rowKeys = pending.rowKeys
        return try mappingPageErrors { () throws(PageError) -> Bool in try rowKeys.withKeys { raw throws(PageError) -> Bool in
            var stop = false
            for i in 0..<rowKeys.count {
                let (collection, key, _) = try keydir.row(forRowKey: rowKeys.key(i, in: raw), withEntry: false, memo: &memo)
                if located {
                    body(collection, key, pending.rowids[i], pending.values[i], nil, pending.objects[i], &stop)
                } else {
                    body(collection, key, pending.rowids[i], pending.values[i], pending.entries[i], nil, &stop)
                }
                if stop { return false }
            }
            return true
        } }
    }

    /// The plan of the query, as text.
    func explain(_ query: BoundQuery) throws(YapDatabaseError) -> String {
        try reading { executor throws(EngineError) in try executor.explain(query) }
    }

    // MARK: Row ids

    /// The row ids of `keys` in `collection` (keys without a row are left out), for queries
    /// over a known set of rows.
    public func rowids(forKeys keys: [String], inCollection collection: String?) -> [String: NSNumber] {
        databaseTransaction.checkValid()
        var result: [String: NSNumber] = [:]
        for key in keys {
            if let entry = databaseTransaction.entry(collection: collection ?? "", key: key) {
                result[key] = NSNumber(value: entry.rowid)
            }
        }
        return result
    }
}

extension YapDatabaseSecondaryIndex {
    /// `query` parsed against the index's columns and bound to its parameters.
    /// - Throws: `.invalidQuery` for a malformed query, an unknown column or unfitting parameters.
    func bind(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> BoundQuery {
        if let parsed = try parsedQuery(query) { return try Self.bind(parsed, query) }
        // A BLOB column has no query column type: parse without the column list and resolve
        // the names here.
        do throws(QueryError) {
            return try resolvingColumns(ParsedQuery(parsing: query.queryString).bind(query.parameterValues.get()))
        } catch {
            throw YapDatabaseQuery.publicError(error)
        }
    }

    /// `query`'s text parsed against the index's columns (from the parse memo when it was
    /// parsed before), or nil when the index has a BLOB column (`bind` parses such queries
    /// itself).
    /// - Throws: `.invalidQuery` for a malformed query or an unknown column.
    func parsedQuery(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> ParsedQuery? {
        guard !hasBlobColumn else { return nil }
        let text = query.queryString
        if let known = parses.withLock({ $0.queries[text] }) { return known }
        let parsed = try query.parsed(columns: queryColumns)
        parses.withLock { $0.keep(parsed, for: text) }
        return parsed
    }

    /// `parsed` (the parse of `query`'s text) bound to `query`'s parameters.
    /// - Throws: `.invalidQuery` for unfitting parameters.
    static func bind(_ parsed: ParsedQuery, _ query: YapDatabaseQuery) throws(YapDatabaseError) -> BoundQuery {
        do throws(QueryError) { return try parsed.bind(query.parameterValues.get()) } catch {
            throw YapDatabaseQuery.publicError(error)
        }
    }

    /// The aggregate function of `query` (nil: it selects rows), its column resolved.
    func aggregateFunction(of query: YapDatabaseQuery) throws(YapDatabaseError) -> AggregateFunction? {
        guard let text = query.aggregateFunction else { return nil }
        if let known = parses.withLock({ $0.aggregates[text] }) { return known }
        do throws(QueryError) {
            var function = try AggregateFunction(parsing: text)
            if let column = function.column {
                if isRowid(column) {
                    function = AggregateFunction(function.kind, column: Self.rowidColumn, distinct: function.distinct)
                } else {
                    guard let i = columnIndex(column) else { throw QueryError(offset: 0, reason: .unknownColumn(column)) }
                    function = AggregateFunction(function.kind, column: columns[i].name, distinct: function.distinct)
                }
            }
            parses.withLock { $0.keep(function, for: text) }
            return function
        } catch {
            throw YapDatabaseQuery.publicError(error)
        }
    }

    /// `query` with every column name spelled as the index spells it (names ignore ASCII case).
    /// - Throws: `QueryError` `.unknownColumn` for a name that is no column of the index.
    func resolvingColumns(_ query: BoundQuery) throws(QueryError) -> BoundQuery {
        func resolve(_ name: String) throws(QueryError) -> String {
            if isRowid(name) { return Self.rowidColumn }
            guard let i = columnIndex(name) else { throw QueryError(offset: 0, reason: .unknownColumn(name)) }
            return columns[i].name
        }
        var result = query
        result.whereClause = try query.whereClause?.mapOperands({ operand throws(QueryError) in
            guard case let .column(name) = operand else { return operand }
            return .column(try resolve(name))
        }, expandList: { _ in nil })
        var terms: [OrderTerm] = []
        for term in query.orderBy { terms.append(OrderTerm(column: try resolve(term.column), descending: term.descending)) }
        result.orderBy = terms
        return result
    }
}

/// Matches of a query held back so their key-directory entries are looked up together
/// (`forEachMatch`): row keys, row ids, known column values, the object locations their
/// column entries give, and the entries once looked up.
/// A class with unchecked exclusivity: used by one query at a time, on one queue.
final class PendingMatches {
    /// The most matches held before they are handed out: enough lookups in flight to overlap
    /// their memory waits (32 and 64 measured no faster at 1M rows), few enough that a block
    /// stopping early leaves little looked up for nothing.
    static let capacity = 16

    @exclusivity(unchecked) var rowKeys = KeyBatch()
    @exclusivity(unchecked) var rowids: [UInt64] = []
    @exclusivity(unchecked) var values: [[SQLValue]?] = []
    @exclusivity(unchecked) var objects: [ValueLocation] = []
    @exclusivity(unchecked) var entries: [KeydirEntry?] = []

    var count: Int { rowids.count }

    func append(_ rowid: UInt64, _ known: [SQLValue]?, _ rowKey: UnsafeRawBufferPointer, _ object: ValueLocation) {
        rowKeys.append(rowKey)
        rowids.append(rowid)
        values.append(known)
        objects.append(object)
    }

    func removeAll() {
        rowKeys.removeAll()
        rowids.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        objects.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }
}

/// A query text and its parse, as a transaction keeps the last one: a class, so that reading
/// it back costs one reference, not a copy of the parse's arrays.
final class LastParse {
    let text: String
    let parsed: ParsedQuery

    init(text: String, parsed: ParsedQuery) {
        self.text = text
        self.parsed = parsed
    }

    /// The parse bound to `query`'s parameters (`YapDatabaseSecondaryIndex.bind`), the parse
    /// lent from here (a caller holding this object copied it out).
    func bind(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> BoundQuery {
        try YapDatabaseSecondaryIndex.bind(parsed, query)
    }
}

/// A read-only transaction's executor, held by reference so each query borrows it.
final class ExecutorBox {
    let executor: SecondaryIndexExecutor

    init(_ executor: SecondaryIndexExecutor) { self.executor = executor }
}

/// The valid parses an index keeps, by text: query texts (parsed against its columns) and
/// aggregate functions (their column spelled as the index does). When a table is full it
/// starts over (an application uses few distinct texts).
struct ParseMemo {
    /// The most entries kept in each table.
    static let capacity = 256

    var queries: [String: ParsedQuery] = [:]
    var aggregates: [String: AggregateFunction] = [:]

    mutating func keep(_ parsed: ParsedQuery, for text: String) {
        if queries.count >= Self.capacity { queries.removeAll(keepingCapacity: true) }
        queries[text] = parsed
    }

    mutating func keep(_ function: AggregateFunction, for text: String) {
        if aggregates.count >= Self.capacity { aggregates.removeAll(keepingCapacity: true) }
        aggregates[text] = function
    }
}

/// A stored value as YapDatabase hands indexed values out: `Int`, `Double`, `String`, `Data`,
/// or `NSNull` for NULL.
extension SQLValue {
    var objectValue: Any {
        switch self {
        case .null: NSNull()
        case .integer(let v): Int(truncatingIfNeeded: v)
        case .real(let v): v
        case .text(let v): v
        case .blob(let v): Data(v)
        }
    }
}
