import Foundation
import YapDB

/// YapDB's side of W12, to fill in when the secondary-index extension (issue 11) lands on this
/// branch: open a database as `YapStore` does (relaxed durability, raw-bytes serializer), and
/// when `indexed`, register a `YapDatabaseSecondaryIndex` with two `.integer` columns `a` and `b`
/// whose handler reads them from the object with `IndexedDataset.a(of:)` / `.b(of:)`; then run
/// `W12Query`'s texts through `YapDatabaseQuery(string:parameters:)` (`enumerateKeys(matching:)`
/// for the lookups and ranges, `performAggregateQuery` with `YapDatabaseQuery(aggregateFunction:
/// string:parameters:)` for `COUNT(*)` and `MIN(a)`) on one read transaction per batch, exactly as
/// the SQL peers run the same texts.
///
/// Until then W12 runs the peers alone (YapDB "—" in the report, the goals "not run").
func makeYapIndexedStore(folder: URL, indexed: Bool) throws -> any IndexedStore {
    throw BenchError("W12: YapDB's side is not built yet (\(folder.lastPathComponent), indexed: \(indexed))")
}

/// Whether `makeYapIndexedStore` is filled in; set it to true with the code above.
let yapIndexedStoreIsBuilt = false
