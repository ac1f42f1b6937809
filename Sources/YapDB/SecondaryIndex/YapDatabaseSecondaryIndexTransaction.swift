import Foundation
import YapDBIndex
import YapDBQuery

/// Why a query could not run: its text or parameters (`QueryError`), or a damaged index page.
enum SecondaryIndexQueryFailure: Error, CustomStringConvertible {
    case query(QueryError)
    case page(PageError)
    /// The index has no state in this snapshot (registration did not finish).
    case missing

    var description: String {
        switch self {
        case .query(let error): "the query is invalid: \(error)"
        case .page(let error): "the index could not be read: \(error); run verify()"
        case .missing: "the index has no stored state"
        }
    }
}

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

    init(index: YapDatabaseSecondaryIndex, name: String, transaction: YapDatabaseReadTransaction) {
        self.index = index
        self.name = name
        databaseTransaction = transaction
    }

    /// The index as of the transaction.
    func executor() throws(SecondaryIndexQueryFailure) -> SecondaryIndexExecutor {
        guard let state = databaseTransaction.extensionState(YapDatabaseSecondaryIndex.stateKey(name)) as? SecondaryIndexState else {
            throw .missing
        }
        return SecondaryIndexExecutor(state: state, index: index)
    }

    /// `parsed` bound to `parameters`, its column names resolved to the index's spelling.
    func bind(_ parsed: ParsedQuery, _ parameters: [QueryParameter]) throws(SecondaryIndexQueryFailure) -> BoundQuery {
        do throws(QueryError) {
            return try index.resolvingColumns(parsed.bind(parameters))
        } catch {
            throw .query(error)
        }
    }

    /// Logs `failure` and returns `value` (the compatible forms answer false or nil).
    func reporting<T>(_ failure: SecondaryIndexQueryFailure, _ value: T) -> T {
        YapDatabaseLogging.log(.error, "secondary index \(name): \(failure)")
        return value
    }

    // MARK: Core (the public forms in YapDatabaseSecondaryIndexTransaction+Query.swift call these)

    /// Calls `body` with each matching row's collection, key and row id, in the query's order,
    /// until it sets its stop flag.
    func forEachMatch(_ parsed: ParsedQuery, _ parameters: [QueryParameter],
                      _ body: (String, String, UInt64, [SQLValue]?, inout Bool) -> Void) throws(SecondaryIndexQueryFailure) {
        databaseTransaction.checkValid()
        let bound = try bind(parsed, parameters)
        let executor = try executor()
        let keydir = databaseTransaction.keydir
        databaseTransaction.iterationDepth += 1
        defer { databaseTransaction.iterationDepth -= 1 }
        do throws(PageError) {
            try executor.run(bound) { rowid, values in
                guard let (collection, key) = keydir.owner(ofRowid: rowid) else { return true }
                var stop = false
                body(collection, key, rowid, values, &stop)
                return !stop
            }
        } catch {
            throw .page(error)
        }
    }

    /// The number of rows matching the query's `WHERE` clause.
    func count(_ parsed: ParsedQuery, _ parameters: [QueryParameter]) throws(SecondaryIndexQueryFailure) -> Int {
        databaseTransaction.checkValid()
        let bound = try bind(parsed, parameters), executor = try executor()
        do throws(PageError) { return try executor.count(where: bound.whereClause) } catch { throw .page(error) }
    }

    /// The aggregate `function` over the query's rows; nil when an integer SUM overflows.
    func aggregate(_ function: AggregateFunction, _ parsed: ParsedQuery,
                   _ parameters: [QueryParameter]) throws(SecondaryIndexQueryFailure) -> SQLValue? {
        databaseTransaction.checkValid()
        let bound = try bind(parsed, parameters)
        let resolved: AggregateFunction
        if let column = function.column {
            guard let i = index.columnIndex(column) else {
                throw .query(QueryError(offset: 0, reason: .unknownColumn(column)))
            }
            resolved = AggregateFunction(function.kind, column: index.columns[i].name, distinct: function.distinct)
        } else {
            resolved = function
        }
        let executor = try executor()
        do throws(PageError) { return try executor.aggregate(resolved, of: bound) } catch { throw .page(error) }
    }

    /// The plan of the query, as text.
    func explain(_ parsed: ParsedQuery, _ parameters: [QueryParameter]) throws(SecondaryIndexQueryFailure) -> String {
        databaseTransaction.checkValid()
        let bound = try bind(parsed, parameters), executor = try executor()
        do throws(PageError) { return try executor.explain(bound) } catch { throw .page(error) }
    }

    // MARK: Row ids

    /// The row ids of `keys` in `collection` (keys without a row are left out), for queries
    /// over a known set of rows.
    public func rowids(forKeys keys: [String], inCollection collection: String?) -> [String: NSNumber] {
        databaseTransaction.checkValid()
        var result: [String: NSNumber] = [:]
        for key in keys {
            if let entry = databaseTransaction.keydir.lookup(collection: collection ?? "", key: key) {
                result[key] = NSNumber(value: entry.rowid)
            }
        }
        return result
    }
}

extension YapDatabaseSecondaryIndex {
    /// `query` with every column name spelled as the index spells it (names ignore ASCII case).
    /// - Throws: `QueryError` `.unknownColumn` for a name that is no column of the index.
    func resolvingColumns(_ query: BoundQuery) throws(QueryError) -> BoundQuery {
        func resolve(_ name: String) throws(QueryError) -> String {
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
