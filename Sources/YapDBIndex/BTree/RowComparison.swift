// RowComparison: the answer of a view comparator, shared by the order-statistic row trees.
//
// Comparator convention, shared by every search: `compare(existing)` says how the item being
// searched for (the new row, or the target of a range search) compares to the existing row id
// `existing` — `.orderedAscending`: the target sorts before `existing`; `.orderedSame`: equal;
// `.orderedDescending`: the target sorts after `existing`.

/// The result of a view comparator: how one row sorts relative to another. The same case names
/// as Foundation's `ComparisonResult` (this module does not import Foundation, and a type of that
/// name here would make the name ambiguous in modules that import both); the API layer converts.
package enum RowComparison: Sendable, Hashable {
    /// The first row sorts before the second.
    case orderedAscending
    /// The rows sort equally.
    case orderedSame
    /// The first row sorts after the second.
    case orderedDescending
}
