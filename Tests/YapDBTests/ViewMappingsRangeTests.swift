import Foundation
import Testing
import YapDB

/// Mappings range options, cell-drawing dependencies and auto-consolidated groups, ported from
/// YapDatabase's TestViewMappingsLogic.m: each case makes the same inserts and deletes at the
/// same indexes (here real rows of a real view) and expects the same row changes and counts.
@Suite struct ViewMappingsRangeTests {
    /// A view of Doubles in collection "rows", grouped by the key's prefix ("g-…" is group "g"),
    /// sorted by value; rows are inserted and deleted at indexes of a group.
    final class Harness {
        let fixture: DatabaseFixture
        let writer: YapDatabaseConnection
        let ui: YapDatabaseConnection
        let mappings: YapDatabaseViewMappings
        private(set) var rows: [String: [(key: String, value: Double)]] = [:]
        private var serial = 0
        /// The section changes of the last `changes(_:)`, sorted: "insert 1", "delete 0".
        private(set) var lastSections: [String] = []
        /// The open read-write transaction, inside `commit`.
        var transaction: YapDatabaseReadWriteTransaction?

        init(counts: [String: Int], configure: (YapDatabaseViewMappings) -> Void = { _ in }) throws {
            fixture = try DatabaseFixture()
            let grouping = YapDatabaseViewGrouping.withKeyBlock { _, collection, key in
                collection == "rows" ? String(key.prefix { $0 != "-" }) : nil
            }
            let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
                let a = o1 as! Double, b = o2 as! Double
                return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
            }
            #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "view"))
            writer = fixture.database.newConnection()
            ui = fixture.database.newConnection()
            let groups = counts.keys.sorted()
            mappings = YapDatabaseViewMappings(groups: groups, view: "view")
            configure(mappings)
            commit { h in
                for group in groups { for _ in 0..<counts[group]! { h.insert(at: h.rows[group, default: []].count, group) } }
            }
            ui.beginLongLivedReadTransaction()
            ui.read { tx in mappings.update(with: tx) }
        }

        /// Inserts a row at `index` of `group` (a value between its neighbours').
        func insert(at index: Int, _ group: String = "g") {
            var list = rows[group, default: []]
            let below = index > 0 ? list[index - 1].value : (list.first?.value ?? 0) - 2
            let above = index < list.count ? list[index].value : (list.last?.value ?? 0) + 2
            serial += 1
            let row = (key: "\(group)-\(serial)", value: (below + above) / 2)
            list.insert(row, at: index)
            rows[group] = list
            transaction!.setObject(row.value, forKey: row.key, inCollection: "rows")
        }

        /// Deletes the row at `index` of `group`.
        func delete(at index: Int, _ group: String = "g") {
            let row = rows[group]!.remove(at: index)
            transaction!.removeObject(forKey: row.key, inCollection: "rows")
        }

        /// Moves the row at `index` of `group` to `newIndex` (its value changes).
        func move(from index: Int, to newIndex: Int, _ group: String = "g") {
            var list = rows[group]!
            let row = list.remove(at: index)
            let below = newIndex > 0 ? list[newIndex - 1].value : (list.first?.value ?? 0) - 2
            let above = newIndex < list.count ? list[newIndex].value : (list.last?.value ?? 0) + 2
            list.insert((row.key, (below + above) / 2), at: newIndex)
            rows[group] = list
            transaction!.setObject((below + above) / 2, forKey: row.key, inCollection: "rows")
        }

        func removeAll() {
            rows = [:]
            transaction!.removeAllObjectsInAllCollections()
        }

        func commit(_ body: (Harness) -> Void) {
            writer.readWrite { tx in
                transaction = tx
                body(self)
                transaction = nil
            }
        }

        /// Commits `body` and returns the row changes, sorted: "insert [0, 2]", "delete [0, 19]",
        /// "move [0, 19] → [0, 0]", "update [0, 18] → [0, 17] dependency".
        func changes(_ body: (Harness) -> Void) -> [String] {
            commit(body)
            let notifications = ui.beginLongLivedReadTransaction()
            let connection = ui.ext("view") as! YapDatabaseViewConnection
            let (sectionChanges, rowChanges) = connection.getChanges(forNotifications: notifications, withMappings: mappings)
            lastSections = sectionChanges.map { "\($0.type) \($0.index)" }.sorted()
            return rowChanges.map(Self.describe).sorted()
        }

        static func describe(_ change: YapDatabaseViewRowChange) -> String {
            let from = "[\(change.originalSection), \(change.originalIndex)]", to = "[\(change.finalSection), \(change.finalIndex)]"
            switch change.type {
            case .insert: return "insert \(to)"
            case .delete: return "delete \(from)"
            case .move: return "move \(from) → \(to)"
            case .update: return "update \(from) → \(to)\(change.changes.contains(.changedDependency) ? " dependency" : "")"
            }
        }

        var shown: UInt { mappings.numberOfItems(inGroup: "g") }
    }

    static func fixed(_ length: UInt, _ pin: YapDatabaseViewPin, offset: UInt = 0) -> (YapDatabaseViewMappings) -> Void {
        { $0.setRangeOptions(.fixedRange(withLength: length, offset: offset, from: pin), forGroup: "g") }
    }

    static func flexible(_ length: UInt, _ pin: YapDatabaseViewPin, maxLength: UInt? = nil, minLength: UInt? = nil,
                         grow: YapDatabaseViewGrowOptions? = nil) -> (YapDatabaseViewMappings) -> Void {
        { mappings in
            let range = YapDatabaseViewRangeOptions.flexibleRange(withLength: length, offset: 0, from: pin)!
            if let maxLength { range.maxLength = maxLength }
            if let minLength { range.minLength = minLength }
            if let grow { range.growOptions = grow }
            mappings.setRangeOptions(range, forGroup: "g")
        }
    }

    // MARK: Range options

    @Test func theRangeOptionsValues() {
        #expect(YapDatabaseViewRangeOptions.fixedRange(withLength: 0, offset: 0, from: .beginning) == nil)
        let fixed = YapDatabaseViewRangeOptions.fixedRange(withLength: 20, offset: 5, from: .end)!
        #expect(fixed.isFixedRange && !fixed.isFlexibleRange && fixed.maxLength == 20 && fixed.minLength == 0 && fixed.pin == .end)
        let flexible = YapDatabaseViewRangeOptions.flexibleRange(withLength: 20, offset: 0, from: .beginning)!
        #expect(flexible.isFlexibleRange && flexible.maxLength == UInt.max && flexible.growOptions == .pinSide)
        flexible.minLength = 30
        flexible.maxLength = 10
        #expect(flexible.minLength == 30 && flexible.maxLength == 30, "maxLength never goes below minLength")
        let longer = flexible.copy(withNewLength: 40) as! YapDatabaseViewRangeOptions
        #expect(longer.length == 40 && longer.offset == 0 && longer.minLength == 30 && flexible.length == 20)
        flexible.growOptions = .onBothSides
        #expect(flexible.growOptions == [.pinSide, .nonPinSide])
    }

    @Test func fixedRangeAtTheBeginning() throws {
        let cases: [(String, Int, (Harness) -> Void, UInt, [String])] = [
            ("1A insert in the middle", 40, { $0.insert(at: 2) }, 20, ["delete [0, 19]", "insert [0, 2]"]),
            ("1B insert at the beginning", 40, { $0.insert(at: 0) }, 20, ["delete [0, 19]", "insert [0, 0]"]),
            ("1C insert at the end", 40, { $0.insert(at: 19) }, 20, ["delete [0, 19]", "insert [0, 19]"]),
            ("1D insert outside", 40, { $0.insert(at: 20) }, 20, []),
            ("2A delete in the middle", 40, { $0.delete(at: 2) }, 20, ["delete [0, 2]", "insert [0, 19]"]),
            ("2C delete at the end", 40, { $0.delete(at: 19) }, 20, ["delete [0, 19]", "insert [0, 19]"]),
            ("2D delete outside", 40, { $0.delete(at: 20) }, 20, []),
            ("3D inserts pushed partly outside", 40, { h in for _ in 0..<4 { h.insert(at: 18) } }, 20,
             ["delete [0, 18]", "delete [0, 19]", "insert [0, 18]", "insert [0, 19]"]),
            ("4D deletes partly outside", 40, { h in for _ in 0..<4 { h.delete(at: 18) } }, 20,
             ["delete [0, 18]", "delete [0, 19]", "insert [0, 18]", "insert [0, 19]"]),
            ("5A inserts into an empty view", 0, { h in h.insert(at: 0); h.insert(at: 1) }, 2, ["insert [0, 0]", "insert [0, 1]"]),
            ("5C inserts past the length", 19, { h in h.insert(at: 0); h.insert(at: 1) }, 20,
             ["delete [0, 18]", "insert [0, 0]", "insert [0, 1]"]),
            ("6A remove all", 2, { $0.removeAll() }, 0, ["delete [0, 0]", "delete [0, 1]"]),
        ]
        for (name, count, body, shown, expected) in cases {
            let h = try Harness(counts: ["g": count], configure: Self.fixed(20, .beginning))
            #expect(h.changes(body) == expected, "\(name)")
            #expect(h.shown == shown, "\(name)")
        }
    }

    @Test func fixedRangeAtTheEnd() throws {
        let cases: [(String, (Harness) -> Void, [String])] = [
            ("1A insert in the middle", { $0.insert(at: 30) }, ["delete [0, 0]", "insert [0, 9]"]),
            ("1B insert at the end of the group", { $0.insert(at: 40) }, ["delete [0, 0]", "insert [0, 19]"]),
            ("1C insert at the start of the range", { $0.insert(at: 21) }, ["delete [0, 0]", "insert [0, 0]"]),
            ("1D insert outside", { $0.insert(at: 10) }, []),
            ("2A delete in the middle", { $0.delete(at: 30) }, ["delete [0, 10]", "insert [0, 0]"]),
            ("2C delete the last", { $0.delete(at: 39) }, ["delete [0, 19]", "insert [0, 0]"]),
            ("2D delete outside", { $0.delete(at: 10) }, []),
        ]
        for (name, body, expected) in cases {
            let h = try Harness(counts: ["g": 40], configure: Self.fixed(20, .end))
            #expect(h.changes(body) == expected, "\(name)")
            #expect(h.shown == 20, "\(name)")
        }
    }

    @Test func flexibleRangeAtTheBeginning() throws {
        let cases: [(String, Int, (Harness) -> Void, UInt, [String])] = [
            ("1A insert in the middle", 40, { $0.insert(at: 2) }, 21, ["insert [0, 2]"]),
            ("1B insert at the beginning", 40, { $0.insert(at: 0) }, 21, ["insert [0, 0]"]),
            ("2A delete in the middle", 40, { $0.delete(at: 2) }, 19, ["delete [0, 2]"]),
            ("2B delete the first", 40, { $0.delete(at: 0) }, 19, ["delete [0, 0]"]),
            ("3A two inserts", 40, { h in h.insert(at: 10); h.insert(at: 10) }, 22, ["insert [0, 10]", "insert [0, 11]"]),
            ("4A two deletes", 40, { h in h.delete(at: 10); h.delete(at: 10) }, 18, ["delete [0, 10]", "delete [0, 11]"]),
            ("5A a move", 20, { $0.move(from: 19, to: 0) }, 20, ["move [0, 19] → [0, 0]"]),
            ("6A inserts into an empty view", 0, { h in h.insert(at: 0); h.insert(at: 1) }, 2, ["insert [0, 0]", "insert [0, 1]"]),
            ("7A remove all", 2, { $0.removeAll() }, 0, ["delete [0, 0]", "delete [0, 1]"]),
            ("insert just past the range: not in it", 40, { $0.insert(at: 20) }, 20, []),
        ]
        for (name, count, body, shown, expected) in cases {
            let h = try Harness(counts: ["g": count], configure: Self.flexible(20, .beginning))
            #expect(h.changes(body) == expected, "\(name)")
            #expect(h.shown == shown, "\(name)")
        }
    }

    @Test func flexibleRangeAtTheEnd() throws {
        let cases: [(String, (Harness) -> Void, UInt, [String])] = [
            ("1A insert in the middle", { $0.insert(at: 30) }, 21, ["insert [0, 10]"]),
            ("1B insert at the end: the pinned side grows", { $0.insert(at: 40) }, 21, ["insert [0, 20]"]),
            ("2A delete in the middle", { $0.delete(at: 22) }, 19, ["delete [0, 2]"]),
            ("2B delete the last", { $0.delete(at: 39) }, 19, ["delete [0, 19]"]),
            ("3B two inserts at the end", { h in h.insert(at: 40); h.insert(at: 41) }, 22, ["insert [0, 20]", "insert [0, 21]"]),
            ("4B two deletes at the end", { h in h.delete(at: 39); h.delete(at: 38) }, 18, ["delete [0, 18]", "delete [0, 19]"]),
            ("insert just before the range: not in it", { $0.insert(at: 20) }, 20, []),
        ]
        for (name, body, shown, expected) in cases {
            let h = try Harness(counts: ["g": 40], configure: Self.flexible(20, .end))
            #expect(h.changes(body) == expected, "\(name)")
            #expect(h.shown == shown, "\(name)")
            #expect(h.mappings.rangeOptions(forGroup: "g")?.offset == 0, "\(name): the range stays at the end")
        }
    }

    @Test func flexibleRangeLengthLimitsAndGrowOptions() throws {
        // 8A: three rows inserted at the top of a range of 8 capped at 10: the one past the
        // cap leaves at the side away from the pin.
        var h = try Harness(counts: ["g": 8], configure: Self.flexible(8, .beginning, maxLength: 10, grow: .onBothSides))
        #expect(h.changes { h in for _ in 0..<3 { h.insert(at: 0) } } == ["delete [0, 7]", "insert [0, 0]", "insert [0, 1]", "insert [0, 2]"])
        #expect(h.shown == 10)

        // minLength: deletes inside the range pull rows in while the group has them.
        h = try Harness(counts: ["g": 40], configure: Self.flexible(20, .beginning, minLength: 19))
        #expect(h.changes { h in h.delete(at: 0); h.delete(at: 1) } == ["delete [0, 0]", "delete [0, 2]", "insert [0, 18]"])
        #expect(h.shown == 19)

        // Grow options: at the edge away from the pin a row joins only with .nonPinSide.
        h = try Harness(counts: ["g": 40], configure: Self.flexible(20, .beginning, grow: .onBothSides))
        #expect(h.changes { $0.insert(at: 20) } == ["insert [0, 20]"])
        #expect(h.shown == 21)
        h = try Harness(counts: ["g": 40], configure: Self.flexible(20, .end, grow: []))
        #expect(h.changes { $0.insert(at: 40) } == [], "in range only: a row after the range's last stays outside")
        #expect(h.shown == 20 && h.mappings.rangeOptions(forGroup: "g")?.offset == 1)
    }

    @Test func rangesWhenTheGroupEmptiesAndWithSeveralGroups() throws {
        // fixedRange_end_7A: the window of a range pinned to the end, then every row removed.
        var h = try Harness(counts: ["g": 4], configure: Self.fixed(2, .end))
        #expect(h.shown == 2 && h.mappings.index(forRow: 0, inGroup: "g") == 2)
        #expect(h.changes { $0.removeAll() } == ["delete [0, 0]", "delete [0, 1]"])
        #expect(h.shown == 0 && h.mappings.rangeOptions(forGroup: "g")?.length == 0)
        #expect(h.mappings.rangePosition(forGroup: "g") == YapDatabaseViewRangePosition())

        // flexibleRange_9C: all 54 rows deleted one by one; the range of 50 empties.
        h = try Harness(counts: ["g": 54], configure: Self.flexible(50, .beginning))
        #expect(h.changes { h in for _ in 0..<54 { h.delete(at: 0) } }.count == 50)
        #expect(h.shown == 0 && h.mappings.rangeOptions(forGroup: "g")?.length == 0)

        // flexibleRange_11A-C: minLength 3 pulls the next row in after a delete anywhere.
        for index in 0..<3 {
            h = try Harness(counts: ["g": 4], configure: Self.flexible(3, .beginning, minLength: 3, grow: .onBothSides))
            #expect(h.changes { $0.delete(at: index) } == ["delete [0, \(index)]", "insert [0, 2]"], "delete at \(index)")
            #expect(h.shown == 3 && h.mappings.rangePosition(forGroup: "g") == YapDatabaseViewRangePosition(offsetFromBeginning: 0, offsetFromEnd: 0, length: 3))
        }

        // fixedRange_multi_1A: two groups, each with its own range.
        h = try Harness(counts: ["A": 40, "B": 40]) { mappings in
            for group in ["A", "B"] { mappings.setRangeOptions(.fixedRange(withLength: 20, offset: 0, from: .beginning), forGroup: group) }
        }
        #expect(h.changes { h in h.insert(at: 2, "A"); h.insert(at: 2, "B") } == ["delete [0, 19]", "delete [1, 19]", "insert [0, 2]", "insert [1, 2]"])
        #expect(h.lastSections.isEmpty)

        // reverse_1: the view's last row is the reversed table's first.
        h = try Harness(counts: ["g": 6]) { $0.setIsReversed(true, forGroup: "g") }
        #expect(h.changes { $0.delete(at: 5) } == ["delete [0, 0]"])
    }

    @Test func aReversedGroupSeesTheRangeFromItsOwnEnd() throws {
        // Shown reversed (newest first), the table's first 5 rows are the view's last 5.
        let h = try Harness(counts: ["g": 10]) { mappings in
            mappings.setIsReversed(true, forGroup: "g")
            mappings.setRangeOptions(.fixedRange(withLength: 5, offset: 0, from: .beginning), forGroup: "g")
        }
        #expect(h.mappings.rangeOptions(forGroup: "g")?.pin == .beginning)
        #expect(h.mappings.collectionKey(atRow: 0, inSection: 0)?.key == h.rows["g"]![9].key)
        #expect(h.mappings.rangePosition(forGroup: "g") == YapDatabaseViewRangePosition(offsetFromBeginning: 0, offsetFromEnd: 5, length: 5))
        #expect(h.changes { $0.insert(at: 10) } == ["delete [0, 4]", "insert [0, 0]"])
        h.ui.read { tx in
            let view = tx.ext("view") as! YapDatabaseViewTransaction
            #expect(view.indexPath(forKey: h.rows["g"]![10].key, inCollection: "rows", with: h.mappings) == IndexPath(indexes: [0, 0]))
            #expect(view.indexPath(forKey: h.rows["g"]![0].key, inCollection: "rows", with: h.mappings) == nil, "outside the range")
            #expect((view.object(atRow: 1, inSection: 0, with: h.mappings) as? Double) == h.rows["g"]![9].value)
        }
    }

    // MARK: Dependencies

    @Test func cellDrawingDependencies() throws {
        let configure: (YapDatabaseViewMappings) -> Void = { $0.setCellDrawingDependencyForNeighboringCell(withOffset: -1, forGroup: "g") }
        var h = try Harness(counts: ["g": 20], configure: configure)
        #expect(h.mappings.cellDrawingDependencyOffsets(forGroup: "g") == [NSNumber(value: -1)])
        #expect(h.changes { $0.delete(at: 17) } == ["delete [0, 17]", "update [0, 18] → [0, 17] dependency"],
                "the row after a deleted one is redrawn")
        h = try Harness(counts: ["g": 20], configure: configure)
        #expect(h.changes { h in h.delete(at: 18); h.delete(at: 18) } == ["delete [0, 18]", "delete [0, 19]"], "no row after them")
        h = try Harness(counts: ["g": 20], configure: configure)
        #expect(h.changes { $0.insert(at: 5) } == ["insert [0, 5]", "update [0, 5] → [0, 6] dependency"])
        h = try Harness(counts: ["g": 20]) { $0.setCellDrawingDependencyOffsets([NSNumber(value: -1), NSNumber(value: 1)], forGroup: "g") }
        #expect(h.changes { $0.delete(at: 5) } == ["delete [0, 5]", "update [0, 4] → [0, 4] dependency", "update [0, 6] → [0, 5] dependency"])
    }

    // MARK: Auto-consolidation

    @Test func groupsConsolidateBelowTheThreshold() throws {
        let h = try Harness(counts: ["g0": 2, "g1": 3]) { $0.setAutoConsolidateGroupsThreshold(5, withName: "all") }
        #expect(!h.mappings.isUsingConsolidatedGroup() && h.mappings.numberOfSections() == 2)
        #expect(h.mappings.autoConsolidateGroupsThreshold() == 5 && h.mappings.consolidatedGroupName() == "all")
        let rows = h.changes { $0.delete(at: 0, "g0") }
        #expect(rows == ["delete [0, 0]", "move [0, 1] → [0, 0]", "move [1, 0] → [0, 1]", "move [1, 1] → [0, 2]", "move [1, 2] → [0, 3]"])
        #expect(h.mappings.isUsingConsolidatedGroup() && h.mappings.visibleGroups() == ["all"])
        #expect(h.mappings.numberOfItems(inSection: 0) == 4)
        #expect(h.mappings.collectionKey(atRow: 2, inSection: 0)?.key == h.rows["g1"]![1].key)
        #expect(h.mappings.indexPath(forIndex: 2, inGroup: "g1") == IndexPath(indexes: [0, 3]))
        let back = h.changes { $0.insert(at: 0, "g0") }
        #expect(back.count == 5 && h.mappings.numberOfSections() == 2, "at the threshold again: a section per group")

        let named = YapDatabaseViewMappings(groups: ["g0", "g1"], view: "view")
        named.setAutoConsolidateGroupsThreshold(5, withName: "g1")
        #expect(named.consolidatedGroupName() == nil && named.autoConsolidateGroupsThreshold() == 0, "a group's name is refused")
    }

    // MARK: Sections (TestViewChangeLogic.m)

    @Test func sectionsAppearAndDisappearWithTheirRows() throws {
        // section_5A: C's first row and A's last row in one commit.
        let h = try Harness(counts: ["A": 1, "B": 1, "C": 0]) { $0.setIsDynamicSectionForAllGroups(true) }
        #expect(h.mappings.visibleGroups() == ["A", "B"])
        #expect(h.changes { h in h.insert(at: 0, "C"); h.delete(at: 0, "A") } == ["delete [0, 0]", "insert [1, 0]"])
        #expect(h.lastSections == ["delete 0", "insert 1"])
        // section_12A: removeAllObjectsInAllCollections deletes every row beside the sections.
        #expect(h.changes { $0.removeAll() } == ["delete [0, 0]", "delete [1, 0]"])
        #expect(h.lastSections == ["delete 0", "delete 1"])
    }

    // MARK: Raw changes

    @Test func numberOfRawChangesCountsTheViewsRowChanges() throws {
        let h = try Harness(counts: ["g": 5])
        h.commit { h in
            h.insert(at: 0)
            h.insert(at: 0)
            h.delete(at: 3)
        }
        h.commit { h in h.transaction!.setObject("elsewhere", forKey: "x", inCollection: "other") }
        let notifications = h.ui.beginLongLivedReadTransaction()
        let connection = h.ui.ext("view") as! YapDatabaseViewConnection
        #expect(connection.numberOfRawChanges(forNotifications: notifications) == 3)
        #expect(connection.numberOfRawChanges(forNotifications: [notifications[1]]) == 0)
    }
}
