import YapDBEngine
import YapDBQuery

/// Runs bound queries against one snapshot of a secondary index: picks the candidate rows from
/// the plan, checks them against the `WHERE` clause when the plan is not exact, orders them
/// (streaming a column tree in order when the first `ORDER BY` column allows, stopping at the
/// `LIMIT`), and answers counts and `MIN`/`MAX` from the trees. Reads only the index: objects
/// and metadata are loaded by the caller for the rows it returns.
///
/// Errors: `EngineError` from a damaged or unreadable page.
struct SecondaryIndexExecutor {
    let state: SecondaryIndexState
    let columns: [YapDatabaseSecondaryIndexColumn]
    let columnIndex: (String) -> Int?
    /// A name's position in `rowValues` (the columns, then `rowid`).
    let valuePosition: (String) -> Int?
    /// The names of `rowValues`' positions, for the row check.
    let valueOrder: [String]
    let evaluator: QueryEvaluator
    /// Made once with the executor: a query borrows it (making one per query retained each of
    /// its fields).
    let planner: SecondaryIndexPlanner

    init(state: SecondaryIndexState, index: YapDatabaseSecondaryIndex) {
        self.state = state
        columns = index.columns
        columnIndex = index.columnIndex
        valuePosition = index.valuePosition
        valueOrder = index.columns.map(\.name) + (index.hasRowidColumn ? [YapDatabaseSecondaryIndex.rowidColumn] : [])
        evaluator = QueryEvaluator(columns: index.queryColumns)
        planner = SecondaryIndexPlanner(columns: index.columns, limit: state.keyValueLimit, columnIndex: index.columnIndex, isRowid: index.isRowid)
    }


    /// Row `rowid`'s stored column values followed by its row id (the `rowid` pseudo-column),
    /// or nil when the row is not indexed.
    func rowValues(_ rowid: UInt64) throws(EngineError) -> [SQLValue]? {
        guard var values = try state.values(ofRow: rowid, reservingExtra: 1) else { return nil }
        values.append(.integer(Int64(bitPattern: rowid)))
        return values
    }

    /// The plan of `whereClause` (every row, exactly, when there is none).
    func plan(_ whereClause: QueryExpression?) -> PlannedCondition {
        whereClause.map { planner.plan($0) } ?? PlannedCondition(plan: .everything, exact: true)
    }

    // MARK: Candidates

    /// The number of rows `plan` yields, without reading rows: counts of key ranges (O(log n)
    /// each); intersections and unions are bounded by their parts.
    func estimate(_ plan: SecondaryIndexPlan) throws(EngineError) -> Int {
        switch plan {
        case .nothing: return 0
        case .everything: return state.rowCount
        case let .rowids(rowids): return rowids.count
        case let .ranges(column, ranges):
            return try rangeCount(column, ranges)
        case let .intersection(parts):
            var least = state.rowCount
            for part in parts { least = min(least, try estimate(part)) }
            return least
        case let .union(parts):
            var total = 0
            for part in parts { total += try estimate(part) }
            return min(total, state.rowCount)
        }
    }

    /// The number of entries of `column`'s tree in `ranges` (subtree counts: O(log n) each).
    func rangeCount(_ column: Int, _ ranges: [ColumnRange]) throws(EngineError) -> Int {
        var total = 0
        for range in ranges { total += try state.columns[column].positions(from: range.lower, to: range.upper).count }
        return total
    }

    /// The plan of `whereClause` made ready to run, and whether its candidates must be checked
    /// against the clause (the plan is not exact, or an intersection left a part to the check).
    func prepared(_ whereClause: QueryExpression?) throws(EngineError) -> (planned: PlannedCondition, ready: Prepared, check: Bool) {
        let planned = plan(whereClause)
        var approximate = !planned.exact
        let ready = try prepare(planned.plan, approximate: &approximate)
        return (planned, ready, approximate)
    }

    /// A plan made ready to run: intersections pick their smallest part to drive and turn the
    /// parts not much larger into row-id sets; larger parts are left to the row check
    /// (`approximate` becomes true).
    enum Prepared {
        case nothing, everything
        case rowids([UInt64])
        case ranges(column: Int, [ColumnRange])
        indirect case filtered(driver: Prepared, sets: [Set<UInt64>])
        case union([Prepared])
    }

    /// How much larger than the driver an intersection part may be and still be read into a set.
    static let intersectionFactor = 8

    func prepare(_ plan: SecondaryIndexPlan, approximate: inout Bool) throws(EngineError) -> Prepared {
        switch plan {
        case .nothing: return .nothing
        case .everything: return .everything
        case let .rowids(rowids): return .rowids(rowids)
        case let .ranges(column, ranges): return .ranges(column: column, ranges)
        case let .union(parts):
            var prepared: [Prepared] = []
            for part in parts { prepared.append(try prepare(part, approximate: &approximate)) }
            return .union(prepared)
        case let .intersection(parts):
            var sized: [(plan: SecondaryIndexPlan, size: Int)] = []
            for part in parts { sized.append((part, try estimate(part))) }
            sized.sort { $0.size < $1.size }
            let driver = try prepare(sized[0].plan, approximate: &approximate)
            var sets: [Set<UInt64>] = []
            for part in sized.dropFirst() {
                guard part.size <= Self.intersectionFactor * sized[0].size + 64 else {
                    approximate = true
                    continue
                }
                var set = Set<UInt64>(minimumCapacity: part.size)
                try forEachCandidate(prepare(part.plan, approximate: &approximate)) { rowid, _ in set.insert(rowid); return true }
                sets.append(set)
            }
            return sets.isEmpty ? driver : .filtered(driver: driver, sets: sets)
        }
    }

    /// Calls `body` with each candidate row id and its column entry's value (the object
    /// location and row key, `SecondaryIndexState.entryParts`; valid only during the call;
    /// empty when the entry does not carry them) until it returns false. Ranges yield in key
    /// order, everything and unions in row-id order (with empty values).
    func forEachCandidate(_ plan: Prepared, _ body: (UInt64, UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        _ = try visitCandidates(plan, body)
    }

    private func visitCandidates(_ plan: Prepared, _ body: (UInt64, UnsafeRawBufferPointer) -> Bool) throws(EngineError) -> Bool {
        switch plan {
        case .nothing: return true
        case .everything:
            var going = true
            try state.forEachRowid { going = body($0, noRowKey); return going }
            return going
        case let .rowids(rowids):
            for rowid in rowids where try state.contains(rowid) {
                if !body(rowid, noRowKey) { return false }
            }
            return true
        case let .ranges(column, ranges):
            for range in ranges {
                var going = true
                try state.columns.forEachInKeyRange(ofTree: column, from: range.lower, to: range.upper) { key, rowKey in
                    going = body(OrderedKeyEncoding.rowid(ofKey: key), rowKey)
                    return going
                }
                if !going { return false }
            }
            return true
        case let .filtered(driver, sets):
            return try visitCandidates(driver) { rowid, rowKey in sets.allSatisfy { $0.contains(rowid) } ? body(rowid, rowKey) : true }
        case let .union(parts):
            var all = Set<UInt64>()
            for part in parts { _ = try visitCandidates(part) { rowid, _ in all.insert(rowid); return true } }
            for rowid in all.sorted() where !body(rowid, noRowKey) { return false }
            return true
        }
    }

    // MARK: Running

    /// Calls `body` with each row matching `query`, in its order, with its column values when
    /// they were read (nil when the plan was exact and nothing needed them) and its column
    /// entry's value (object location and row key; empty when unknown; valid only during the
    /// call), until it returns false.
    func run(_ query: BoundQuery, _ body: (UInt64, [SQLValue]?, UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        let (_, prepared, check) = try prepared(query.whereClause)
        // The row check, prepared once: columns by position, literals converted once.
        let residual = check ? evaluator.prepare(query.whereClause, columnOrder: valueOrder) : nil
        // Passed to `emit` rather than captured by it: a local function that captures variables
        // and is called from closures keeps them in boxes checked for exclusive access at run
        // time, a few hundred instructions per row.
        var counts = EmitCounts(skip: query.offset, remaining: query.limit ?? Int.max)
        guard counts.remaining > 0 else { return }
        // Checks one candidate and passes it on; false once the limit is reached or reading failed.
        func emit(_ rowid: UInt64, _ known: [SQLValue]?, _ rowKey: UnsafeRawBufferPointer, checked: Bool = false,
                  _ counts: inout EmitCounts) -> Bool {
            var values = known
            if let residual, !checked {
                do throws(EngineError) {
                    if values == nil { values = try rowValues(rowid) }
                } catch {
                    counts.failure = error
                    return false
                }
                guard let row = values, residual.matches(row) else { return true }
            }
            if counts.skip > 0 { counts.skip -= 1; return true }
            counts.remaining -= 1
            return body(rowid, values, rowKey) && counts.remaining > 0
        }
        if query.orderBy.isEmpty {
            try forEachCandidate(prepared) { emit($0, nil, $1, &counts) }
        } else if let column = columnIndex(query.orderBy[0].column), let ranges = streamableRanges(prepared, column: column) {
            try streamOrdered(column: column, ranges: ranges, terms: query.orderBy) { rowid, values, rowKey in
                emit(rowid, values, rowKey, &counts)
            }
        } else {
            var rows: [(rowid: UInt64, values: [SQLValue], rowKey: Int)] = []
            var rowKeys = KeyBatch()
            var readFailure: EngineError?
            try forEachCandidate(prepared) { rowid, rowKey in
                do throws(EngineError) {
                    if let values = try rowValues(rowid), residual?.matches(values) ?? true {
                        rows.append((rowid, values, rowKeys.append(rowKey)))
                    }
                } catch {
                    readFailure = error
                    return false
                }
                return true
            }
            if let readFailure { throw readFailure }
            let terms = orderColumns(query.orderBy)
            rows.sort { a, b in
                let order = compareRows(a.values, b.values, terms)
                return order != 0 ? order < 0 : a.rowid < b.rowid
            }
            for row in rows where !rowKeys.withKey(row.rowKey, { emit(row.rowid, row.values, $0, checked: true, &counts) }) { break }
        }
        if let failure = counts.failure { throw failure }
    }

    /// The ranges of `column`'s tree that hold exactly the prepared candidates, if the plan is
    /// one: every row (the whole tree), or ranges of that column.
    func streamableRanges(_ plan: Prepared, column: Int) -> [ColumnRange]? {
        switch plan {
        case .everything: return [ColumnRange(lower: nil, upper: nil, condition: "every row")]
        case let .ranges(c, ranges) where c == column: return ranges
        case .nothing: return []
        default: return nil
        }
    }

    /// Walks `ranges` of `column`'s tree in the first term's direction. Entries with equal
    /// keys before the row id (a tie, or texts cut to the same prefix) are read and ordered by
    /// every term, then row id ascending, before they are passed on.
    func streamOrdered(column: Int, ranges: [ColumnRange], terms: [OrderTerm],
                       _ body: (UInt64, [SQLValue]?, UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        let descending = terms[0].descending
        let order = orderColumns(terms)
        // The pending group of rows sharing a cut value, passed to `flush` rather than captured
        // by it (see `EmitCounts`).
        var pending = OrderedGroup()
        // Passes the pending group on; false when `body` stopped or reading failed.
        func flush(_ pending: inout OrderedGroup) -> Bool {
            defer {
                pending.group.removeAll(keepingCapacity: true)
                pending.rowKeys.removeAll()
            }
            if pending.group.count == 1 || (!pending.needsValues && order.count == 1) {
                if descending { pending.group.reverse() }
                for row in pending.group where !pending.rowKeys.withKey(row.rowKey, { body(row.rowid, nil, $0) }) { return false }
                return true
            }
            var rows: [(rowid: UInt64, values: [SQLValue], rowKey: Int)] = []
            do throws(EngineError) {
                for row in pending.group { if let values = try rowValues(row.rowid) { rows.append((row.rowid, values, row.rowKey)) } }
            } catch {
                pending.failure = error
                return false
            }
            rows.sort { a, b in
                let order = compareRows(a.values, b.values, order)
                return order != 0 ? order < 0 : a.rowid < b.rowid
            }
            for row in rows where !pending.rowKeys.withKey(row.rowKey, { body(row.rowid, row.values, $0) }) { return false }
            return true
        }
        var going = true
        // One ascending term: the tree's order (value, then row id) is the query's for every
        // whole value, so such an entry is passed on as it is read, without a copy; only runs
        // of values cut to the key limit are gathered and ordered from the stored values.
        let inTreeOrder = !descending && order.count == 1
        for range in descending ? ranges.reversed() : ranges {
            try state.columns[column].forEachInKeyRange(from: range.lower, to: range.upper, reversed: descending) { key, rowKey in
                let prefix = OrderedKeyEncoding.valueBytes(ofKey: key)
                if inTreeOrder, !OrderedKeyEncoding.isTruncated(prefix) {
                    if !pending.group.isEmpty {
                        going = flush(&pending)
                        if !going { return false }
                    }
                    going = body(OrderedKeyEncoding.rowid(ofKey: key), nil, rowKey)
                    return going
                }
                if pending.group.isEmpty || !pending.prefix.withUnsafeBytes({ sameBytes($0, prefix) }) {
                    if !pending.group.isEmpty {
                        going = flush(&pending)
                        if !going { return false }
                    }
                    pending.prefix.removeAll(keepingCapacity: true)
                    pending.prefix.append(contentsOf: prefix)
                    pending.needsValues = OrderedKeyEncoding.isTruncated(prefix)
                }
                pending.group.append((OrderedKeyEncoding.rowid(ofKey: key), pending.rowKeys.append(rowKey)))
                return true
            }
            if let failure = pending.failure { throw failure }
            if !going { return }
        }
        if !pending.group.isEmpty { _ = flush(&pending) }
        if let failure = pending.failure { throw failure }
    }

    /// The column positions and directions of `terms` (unknown columns are dropped; queries are
    /// checked against the columns before they run).
    func orderColumns(_ terms: [OrderTerm]) -> [(column: Int, descending: Bool)] {
        terms.compactMap { term in valuePosition(term.column).map { ($0, term.descending) } }
    }

    /// The order of two rows' values by `terms` (negative: `a` first).
    func compareRows(_ a: [SQLValue], _ b: [SQLValue], _ terms: [(column: Int, descending: Bool)]) -> Int {
        for term in terms {
            let order = SQLValue.compare(a[term.column], b[term.column])
            if order != 0 { return term.descending ? -order : order }
        }
        return 0
    }
}

/// An empty column entry value: the candidate's entry carries no row key or object location
/// (its row id is looked up instead).
var noRowKey: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

/// What `SecondaryIndexExecutor.run` counts while it passes rows on: rows still to skip
/// (`OFFSET`), rows still to pass (`LIMIT`), and the first read failure.
struct EmitCounts {
    var skip: Int
    var remaining: Int
    var failure: EngineError?
}

/// The rows `SecondaryIndexExecutor.streamOrdered` holds back while they share a value cut to
/// the key limit: their row ids and column entry values (copied: the page may change before the
/// group is passed on), the cut value, whether ordering them needs their stored values, and
/// the first read failure.
struct OrderedGroup {
    var group: [(rowid: UInt64, rowKey: Int)] = []
    var rowKeys = KeyBatch()
    var prefix: [UInt8] = []
    var needsValues = false
    var failure: EngineError?
}
