import Foundation
import YapDBIndex

extension YapDatabaseSearchResultsView {
    /// Checks the view against its query run on the index again (`YapDatabase.verify()`):
    /// every row it holds must match; in parent-view mode, every matching row the parent holds
    /// in an allowed group and collection must be here, in the parent's group. (A grouping of
    /// the caller's is not run again: in blocks mode only the first check applies.) At most 20
    /// problems are listed.
    func verifyResults(name: String, transaction: YapDatabaseReadTransaction) -> [String] {
        guard let state = transaction.viewState(name),
              let fts = transaction.ext(fullTextSearchName) as? YapDatabaseFullTextSearchTransaction else { return [] }
        let query = Self.query(inTag: state.versionTag)
        let prefix = "search results view \(name)"
        var found = Set<UInt64>()
        if !query.isEmpty {
            do throws(YapDatabaseError) { found = try indexMatches(query, fts) } catch {
                return ["\(prefix): the query \"\(query)\" cannot run: \(error)"]
            }
        }
        var problems: [String] = []
        func describe(_ rowid: UInt64) -> String {
            transaction.keydirOwner(ofRowid: rowid).map { "\($0.collection)/\($0.key)" } ?? "row id \(rowid)"
        }
        do throws(PageError) {
            var held: [UInt64: String] = [:]
            for group in try state.groupNames() {
                for rowid in try state.tree(group)?.rowids() ?? [] {
                    held[rowid] = group
                    if !found.contains(rowid) { problems.append("\(prefix): \(describe(rowid)) does not match the query \"\(query)\"") }
                }
            }
            if inner != nil, let parent = transaction.viewState(parentViewName) {
                for group in try parent.groupNames() where allowedGroups?.isAllowed(group) ?? true {
                    for rowid in try parent.tree(group)?.rowids() ?? [] where found.contains(rowid) {
                        guard let owner = transaction.keydirOwner(ofRowid: rowid), isAllowed(owner.collection) else { continue }
                        if held[rowid] != group {
                            problems.append("\(prefix): \(owner.collection)/\(owner.key) matches and is in the parent's group \(group), "
                                            + (held[rowid].map { "but here in group \($0)" } ?? "but not here"))
                        }
                    }
                }
            }
        } catch {
            problems.append("\(prefix): \(error)")
        }
        return Array(problems.prefix(20))
    }
}
