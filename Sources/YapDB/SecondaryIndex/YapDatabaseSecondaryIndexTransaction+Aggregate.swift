import YapDBEngine
import YapDBQuery

/// An aggregate query made ready to run against one index: the function (its column spelled as
/// the index does), the rows it aggregates and the position of its column. Made from the texts
/// alone when the query has no parameters, so a transaction keeps the last one it made
/// (`lastAggregate`) and a loop running one query parses, binds and resolves it once.
/// Immutable; a class so that keeping and reusing it costs one reference, not a copy of each
/// field.
final class PreparedAggregate {
    /// The texts it was made from, and whether it may be kept (the query had no parameters).
    let functionText: String, queryText: String, reusable: Bool
    let function: AggregateFunction
    /// The query's `WHERE` clause alone: YapDatabase's `SELECT function FROM table <query>`
    /// aggregates every matching row; `LIMIT`/`OFFSET` apply to the one result row.
    let rows: BoundQuery
    /// Whether `LIMIT`/`OFFSET` remove the one result row (the result is then `.null`).
    let leavesNoRow: Bool
    /// The position of the function's column among the index's columns (nil for `COUNT(*)` and
    /// `rowid`).
    let column: Int?
    /// For `MIN`/`MAX` (without `DISTINCT`) of a column over every row: the column, its type
    /// and whether it is `MAX`. Such an aggregate goes straight to the edge of the column's
    /// tree.
    let edge: (column: Int, type: YapDatabaseSecondaryIndexType, maximum: Bool)?
    /// The query object this was made from, when it may be kept: the same object asked again
    /// is known to match without comparing texts (a query is immutable).
    let source: YapDatabaseQuery?

    /// `function` over `query`'s rows; `source`, the query object they come from, when it may
    /// be kept.
    init(_ function: AggregateFunction, _ query: BoundQuery, index: YapDatabaseSecondaryIndex, source: YapDatabaseQuery? = nil) {
        functionText = source?.aggregateFunction ?? ""
        queryText = source?.queryString ?? ""
        reusable = source?.hasNoParameters ?? false
        self.function = function
        rows = BoundQuery(whereClause: query.whereClause)
        leavesNoRow = query.leavesNoAggregateRow
        column = function.column.flatMap(index.columnIndex)
        let maximum: Bool? = switch function.kind {
        case .min: false
        case .max: true
        default: nil
        }
        if let maximum, let column, query.whereClause == nil, !function.distinct {
            edge = (column, index.columns[column].type, maximum)
        } else {
            edge = nil
        }
        self.source = reusable ? source : nil
    }

    /// Whether this was made from `query`'s texts and may be used for it (neither has
    /// parameters). `preparedAggregate(_:)` tests the same object by identity first.
    func matches(_ query: YapDatabaseQuery) -> Bool {
        reusable && queryText == query.queryString && query.aggregateFunction == functionText && query.hasNoParameters
    }
}

/// A `MIN`/`MAX` over every row of a column, as a read-only transaction asks it again: the
/// query object it answers, the column's type and direction, and the column's tree as plain
/// values. Reading it touches no reference count (a loop asking one aggregate spent more on
/// retaining and releasing the transaction's objects than on the read). Valid for its
/// transaction, whose snapshot holds the mapped pages; the query object stays alive while it is
/// `lastAggregate`'s source, so its identifier cannot name another query meanwhile.
struct EdgeRead {
    let source: ObjectIdentifier
    let type: YapDatabaseSecondaryIndexType
    let maximum: Bool
    let tree: MappedExtensionTree
}

extension YapDatabaseSecondaryIndexTransaction {
    /// `query`'s value when it is the edge aggregate last read (`lastEdgeRead`): the edge
    /// leaf's entry, read again in this snapshot. Nil when `query` is another object, or when
    /// the entry does not hold the value exactly (NULL first, a text, a number the key cannot
    /// type): the caller then takes the general path.
    /// - Throws: `.corrupted` for a damaged page.
    @inline(__always)
    func repeatedEdgeValue(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> SQLValue? {
        guard let read = lastEdgeRead, read.source == ObjectIdentifier(query) else { return nil }
        databaseTransaction.checkValid()
        var entry: OrderedKeyEncoding.EntryValue? = nil
        do throws(EngineError) {
            _ = try read.tree.withEdgeEntry(last: read.maximum) { key, _ in entry = OrderedKeyEncoding.entryValue(ofKey: key) }
        } catch {
            throw damaged(error)
        }
        guard case let .number(number, _)? = entry else { return nil }
        return SecondaryIndexRow.value(of: number, type: read.type)
    }

    /// `query`'s aggregate function and rows, made ready (or the last ones made, for the same
    /// texts without parameters).
    /// - Throws: `.invalidQuery` for a malformed query or function, an unknown column, unfitting
    ///   parameters, or a query with no aggregate function.
    @inline(__always)
    func preparedAggregate(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> PreparedAggregate {
        if let last = lastAggregate, last.source === query { return last }
        return try prepareAggregate(query)
    }

    /// `preparedAggregate(_:)` for a query other than the last one's object.
    private func prepareAggregate(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> PreparedAggregate {
        if let last = lastAggregate, last.matches(query) { return last }
        guard let function = try index.aggregateFunction(of: query) else {
            throw YapDatabaseQuery.publicError(QueryError(offset: 0, reason: .invalidAggregate("")))
        }
        let prepared = PreparedAggregate(function, try bound(query), index: index, source: query)
        if prepared.reusable { lastAggregate = prepared }
        return prepared
    }

    /// `query`'s `WHERE` clause, bound (or the last one bound, for the same text without
    /// parameters).
    /// - Throws: `.invalidQuery` for a malformed query, an unknown column or unfitting parameters.
    func countedWhere(_ query: YapDatabaseQuery) throws(YapDatabaseError) -> QueryExpression? {
        if let last = lastCounted, last.query == query.queryString, query.hasNoParameters { return last.whereClause }
        let whereClause = try bound(query).whereClause
        if query.hasNoParameters { lastCounted = (query.queryString, whereClause) }
        return whereClause
    }

    /// The number of rows matching the query's `WHERE` clause.
    func count(_ query: BoundQuery) throws(YapDatabaseError) -> Int {
        try count(where: query.whereClause)
    }

    /// The number of rows matching `whereClause` (nil: every row).
    func count(where whereClause: QueryExpression?) throws(YapDatabaseError) -> Int {
        try reading { executor throws(EngineError) in try executor.count(where: whereClause) }
    }

    /// The aggregate `function` (its column spelled as the index does) over every row the
    /// query's `WHERE` clause matches, as YapDatabase's `SELECT function FROM table <query>`:
    /// `LIMIT`/`OFFSET` apply to the one result row (`.null` when they remove it); nil when an
    /// integer SUM overflows.
    func aggregate(_ function: AggregateFunction, _ query: BoundQuery) throws(YapDatabaseError) -> SQLValue? {
        try aggregate(PreparedAggregate(function, query, index: index))
    }

    /// The value of a prepared aggregate (see `aggregate(_:_:)`).
    func aggregate(_ prepared: PreparedAggregate) throws(YapDatabaseError) -> SQLValue? {
        if prepared.leavesNoRow { return .null }
        if let edge = prepared.edge {
            // The reading path written out: no closure between the transaction and the tree.
            databaseTransaction.checkValid()
            let box = try executor()
            do throws(EngineError) {
                if let value = try SecondaryIndexExecutor.edgeExtreme(box.executor.state, column: edge.column, type: edge.type, maximum: edge.maximum) {
                    // Kept once per kept aggregate (a loop making a new query object each call
                    // would otherwise pay for keeping it every time).
                    if lastEdgeRead == nil, lastAggregate === prepared, let source = prepared.source, databaseTransaction.readsSnapshot,
                       let tree = box.executor.state.columns.mappedTree(ofTree: edge.column) {
                        lastEdgeRead = EdgeRead(source: ObjectIdentifier(source), type: edge.type, maximum: edge.maximum, tree: tree)
                    }
                    return value
                }
                return try box.executor.walkExtreme(column: edge.column, maximum: edge.maximum, ranges: SecondaryIndexExecutor.nonNullRanges)
            } catch {
                throw damaged(error)
            }
        }
        return try reading { executor throws(EngineError) in
            try executor.aggregate(prepared.function, of: prepared.rows, column: prepared.column)
        }
    }
}
