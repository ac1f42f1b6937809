import Foundation
import YapDB

/// A stand-in for `UITableView`'s batch updates: it keeps the rows it shows and applies section
/// and row changes with UIKit's rules: deletions (and the sources of moves) name places before
/// the update and run first, highest first; insertions (and the destinations of moves) name
/// places after it and run lowest first; reloads name places before it and change nothing. As
/// with `NSFetchedResultsController`'s changes, the rows of an inserted section come as row
/// insertions (or move destinations) into it, and the rows of a deleted section as row
/// deletions (or move sources); afterwards an inserted section must hold what the data source
/// says it holds. Anything UIKit would refuse (a place out of range, a row deleted twice, a
/// reload in a deleted section, an inserted section whose rows do not add up) is reported as a
/// problem instead of an exception.
struct TableViewModel {
    var sections: [[String]]
    var problems: [String] = []

    init(rows: [[String]]) { sections = rows }

    mutating func performBatchUpdates(sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange],
                                      rowsOfInsertedSection: (Int) -> [String]) {
        let old = sections
        let deletedSections = Set(sectionChanges.filter { $0.type == .delete }.map { Int($0.index) })
        let insertedSections = sectionChanges.filter { $0.type == .insert }.map { Int($0.index) }.sorted()
        for section in deletedSections where section >= old.count { problems.append("delete of section \(section) of \(old.count)") }

        // Phase 1: deletions and move sources, in the old coordinates.
        var removed: [Int: Set<Int>] = [:]
        for change in rowChanges {
            switch change.type {
            case .delete, .move:
                let section = Int(change.originalSection), row = Int(change.originalIndex)
                guard section < old.count, row < old[section].count else {
                    problems.append("\(change): original place out of range")
                    continue
                }
                if !removed[section, default: []].insert(row).inserted { problems.append("\(change): row removed twice") }
                if old[section][row] != change.collectionKey.key { problems.append("\(change): the old row there is \(old[section][row])") }
            case .update:
                let section = Int(change.originalSection), row = Int(change.originalIndex)
                guard section < old.count, row < old[section].count, !deletedSections.contains(section) else {
                    problems.append("\(change): reload of a place that is not there")
                    continue
                }
                if old[section][row] != change.collectionKey.key { problems.append("\(change): the old row there is \(old[section][row])") }
            case .insert:
                break
            }
        }
        var result: [[String]] = []
        for (section, rows) in old.enumerated() where !deletedSections.contains(section) {
            result.append(rows.enumerated().filter { !(removed[section]?.contains($0.offset) ?? false) }.map(\.element))
        }

        // Phase 2: inserted sections, then insertions and move destinations, in the new coordinates.
        for section in insertedSections {
            guard section <= result.count else {
                problems.append("insert of section \(section) of \(result.count)")
                continue
            }
            result.insert([], at: section)
        }
        var inserts: [(section: Int, row: Int, key: String, change: YapDatabaseViewRowChange)] = []
        for change in rowChanges where change.type == .insert || change.type == .move {
            let section = Int(change.finalSection), row = Int(change.finalIndex)
            inserts.append((section, row, change.collectionKey.key, change))
        }
        for insert in inserts.sorted(by: { ($0.section, $0.row) < ($1.section, $1.row) }) {
            guard insert.section < result.count, insert.row <= result[insert.section].count else {
                problems.append("\(insert.change): final place out of range")
                continue
            }
            result[insert.section].insert(insert.key, at: insert.row)
        }
        for section in insertedSections where section < result.count && result[section] != rowsOfInsertedSection(section) {
            problems.append("inserted section \(section) holds \(result[section]), the data source \(rowsOfInsertedSection(section))")
        }
        sections = result
    }
}
