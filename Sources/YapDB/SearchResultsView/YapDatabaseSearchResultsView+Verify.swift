import Foundation
import YapDBEngine

extension YapDatabaseSearchResultsView {
    /// Checks the view against its query run on the index again (`YapDatabase.verify()`):
    /// every row it holds must match, and in parent-view mode sit in the group the parent holds
    /// it in, in an allowed group. Rows that match but are missing are not a problem: a search
    /// aborted without rollback shows part of the matches, as asked. (A grouping of the
    /// caller's is not run again.) At most 20 problems are listed.
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
            transaction.owner(ofRowid: rowid).map { "\($0.collection)/\($0.key)" } ?? "row id \(rowid)"
        }
        do throws(EngineError) {
            var held: [UInt64: String] = [:]
            for group in try state.groupNames() {
                for rowid in try state.tree(group)?.rowids() ?? [] {
                    held[rowid] = group
                    if !found.contains(rowid) { problems.append("\(prefix): \(describe(rowid)) does not match the query \"\(query)\"") }
                }
            }
            if inner != nil, let parent = transaction.viewState(parentViewName) {
                for (rowid, group) in held {
                    let parentGroup = try parent.group(ofRowid: rowid)
                    if parentGroup != group || !(allowedGroups?.isAllowed(group) ?? true) {
                        problems.append("\(prefix): \(describe(rowid)) is in group \(group) here, "
                                        + (parentGroup.map { "in group \($0) in the parent" } ?? "not in the parent")
                                        + ((allowedGroups?.isAllowed(group) ?? true) ? "" : " (a group not allowed)"))
                    }
                }
            }
        } catch {
            problems.append("\(prefix): \(error)")
        }
        return Array(problems.prefix(20))
    }
}
