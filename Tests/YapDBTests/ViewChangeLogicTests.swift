import Foundation
import Testing
@testable import YapDB

/// YapDatabase's own change-logic cases, ported: the row and section cases of its
/// TestViewChangeLogic.m and the getter and auto-consolidation cases of TestViewMappingsLogic.m.
///
/// YapDatabase's cases feed a log of raw operations (insert, delete, update at an index, in
/// the order the view made them) to its change processing. YapDB computes a change set from
/// the rows the mappings show before and after, what changed of each row and which rows the
/// view placed anew, so each case here replays its log on the original rows to get the final
/// rows, and hands both to the mappings' change computation with the same facts the view
/// records (an inserted row was placed anew; an updated row changed its object). The expected
/// changes are YapDatabase's. The order of the changes within a change set is not part of the
/// contract (a table view applies them as one batch), so the cases compare them as sets.
@Suite struct ViewChangeLogicTests {
    enum Op {
        case insert(String, group: String, at: Int)
        case delete(String, group: String, at: Int)
        case update(String, group: String, at: Int)
    }

    /// The animals of the row cases, in view order.
    static let animals = ["lion", "tiger", "bear", "cat", "dog"]

    static func key(_ name: String) -> YapCollectionKey { YapCollectionKey(collection: "", key: name) }

    /// Mappings of `groups` showing `rows` (group → keys in view order) at `snapshot`.
    static func mappings(_ groups: [String], dynamic: Bool, _ rows: [String: [String]], snapshot: UInt64,
                         configure: (YapDatabaseViewMappings) -> Void = { _ in }) -> YapDatabaseViewMappings {
        let mappings = YapDatabaseViewMappings(groups: groups, view: "view")
        mappings.setIsDynamicSectionForAllGroups(dynamic)
        configure(mappings)
        mappings.adopt(groups: groups, lists: rows.mapValues { $0.map(key) }, snapshot: snapshot)
        return mappings
    }

    /// Replays `ops` on `original` and returns the change set of mappings of `groups` from the
    /// original rows to the final ones, as sorted descriptions (see `describe`).
    static func changes(groups: [String] = [""], dynamic: Bool = false, original: [String: [String]], _ ops: [Op],
                        configure: (YapDatabaseViewMappings) -> Void = { _ in })
        -> (sections: [String], rows: [String], changes: [YapDatabaseViewRowChange]) {
        var rows = original
        var changed: [YapCollectionKey: YapDatabaseViewChangesBitMask] = [:]
        var placed: Set<YapCollectionKey> = []
        for op in ops {
            switch op {
            case let .insert(name, group, index):
                rows[group, default: []].insert(name, at: index)
                placed.insert(key(name))
            case let .delete(name, group, index):
                #expect(rows[group]?[index] == name, "the case's log deletes \(name) where it is")
                rows[group]?.remove(at: index)
            case let .update(name, group, index):
                #expect(rows[group]?[index] == name, "the case's log updates \(name) where it is")
                changed[key(name), default: []].insert(.changedObject)
            }
        }
        let before = mappings(groups, dynamic: dynamic, original, snapshot: 1, configure: configure)
        let after = before.copy() as! YapDatabaseViewMappings
        after.allGroups = groups
        after.lists = rows.mapValues { $0.map(key) }
        after.setSnapshot(2)
        let (sectionChanges, rowChanges) = after.changes(from: before, changed: changed, placed: placed, rebuild: nil)
        return (sectionChanges.map { "\($0.type) \($0.index) \($0.group)" }.sorted(), rowChanges.map(describe).sorted(), rowChanges)
    }

    /// "insert zebra → [0, 3]", "delete bear [0, 2]", "move lion [0, 0] → [0, 2]",
    /// "update elm [0, 0]", from the change's original and final section and index.
    static func describe(_ change: YapDatabaseViewRowChange) -> String {
        let name = change.collectionKey.key
        let from = "[\(change.originalSection), \(change.originalIndex)]", to = "[\(change.finalSection), \(change.finalIndex)]"
        switch change.type {
        case .insert: return "insert \(name) → \(to)"
        case .delete: return "delete \(name) \(from)"
        case .move: return "move \(name) \(from) → \(to)"
        case .update: return "update \(name) \(from)"
        }
    }

    static func rowCase(_ ops: [Op]) -> [String] {
        changes(original: ["": animals], ops).rows
    }

    // MARK: Rows (one group, no section changes)

    @Test func row_1_deleteDelete() {
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .delete("lion", group: "", at: 0)])
            == ["delete bear [0, 2]", "delete lion [0, 0]"])
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .delete("cat", group: "", at: 2)])
            == ["delete bear [0, 2]", "delete cat [0, 3]"])
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .delete("dog", group: "", at: 3)])
            == ["delete bear [0, 2]", "delete dog [0, 4]"])
    }

    @Test func row_2_insertInsert() {
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .insert("goat", group: "", at: 0)])
            == ["insert goat → [0, 0]", "insert zebra → [0, 3]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .insert("goat", group: "", at: 2)])
            == ["insert goat → [0, 2]", "insert zebra → [0, 3]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .insert("goat", group: "", at: 6)])
            == ["insert goat → [0, 6]", "insert zebra → [0, 2]"])
    }

    @Test func row_3_deleteInsert() {
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .insert("zebra", group: "", at: 0)])
            == ["delete bear [0, 2]", "insert zebra → [0, 0]"])
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .insert("zebra", group: "", at: 2)])
            == ["delete bear [0, 2]", "insert zebra → [0, 2]"])
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .insert("zebra", group: "", at: 4)])
            == ["delete bear [0, 2]", "insert zebra → [0, 4]"])
    }

    @Test func row_4_insertDelete() {
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("lion", group: "", at: 0)])
            == ["delete lion [0, 0]", "insert zebra → [0, 1]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("tiger", group: "", at: 1)])
            == ["delete tiger [0, 1]", "insert zebra → [0, 1]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("bear", group: "", at: 3)])
            == ["delete bear [0, 2]", "insert zebra → [0, 2]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("cat", group: "", at: 4)])
            == ["delete cat [0, 3]", "insert zebra → [0, 2]"])
    }

    @Test func row_5_insertDeleteDelete() {
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("lion", group: "", at: 0), .delete("tiger", group: "", at: 0)])
            == ["delete lion [0, 0]", "delete tiger [0, 1]", "insert zebra → [0, 0]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("tiger", group: "", at: 1), .delete("bear", group: "", at: 2)])
            == ["delete bear [0, 2]", "delete tiger [0, 1]", "insert zebra → [0, 1]"])
    }

    @Test func row_6_deleteInsertInsert() {
        func run(_ zebra: Int, _ goat: Int) -> [String] {
            Self.rowCase([.delete("bear", group: "", at: 2), .insert("zebra", group: "", at: zebra), .insert("goat", group: "", at: goat)])
        }
        #expect(run(0, 0) == ["delete bear [0, 2]", "insert goat → [0, 0]", "insert zebra → [0, 1]"])
        #expect(run(0, 1) == ["delete bear [0, 2]", "insert goat → [0, 1]", "insert zebra → [0, 0]"])
        #expect(run(1, 0) == ["delete bear [0, 2]", "insert goat → [0, 0]", "insert zebra → [0, 2]"])
        #expect(run(1, 2) == ["delete bear [0, 2]", "insert goat → [0, 2]", "insert zebra → [0, 1]"])
        #expect(run(2, 1) == ["delete bear [0, 2]", "insert goat → [0, 1]", "insert zebra → [0, 3]"])
        #expect(run(2, 2) == ["delete bear [0, 2]", "insert goat → [0, 2]", "insert zebra → [0, 3]"])
    }

    @Test func row_7_insertThenFourDeletes() {
        let deletes = ["delete bear [0, 2]", "delete cat [0, 3]", "delete lion [0, 0]", "delete tiger [0, 1]"]
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("lion", group: "", at: 0), .delete("tiger", group: "", at: 0),
                              .delete("bear", group: "", at: 1), .delete("cat", group: "", at: 1)])
            == deletes + ["insert zebra → [0, 0]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("tiger", group: "", at: 1), .delete("lion", group: "", at: 0),
                              .delete("cat", group: "", at: 2), .delete("bear", group: "", at: 1)])
            == deletes + ["insert zebra → [0, 0]"])
        #expect(Self.rowCase([.insert("zebra", group: "", at: 2), .delete("bear", group: "", at: 3), .delete("cat", group: "", at: 3),
                              .delete("lion", group: "", at: 0), .delete("tiger", group: "", at: 0)])
            == deletes + ["insert zebra → [0, 0]"])
    }

    @Test func row_8_deleteThenThreeInserts() {
        #expect(Self.rowCase([.delete("bear", group: "", at: 2), .insert("zebra", group: "", at: 1), .insert("goat", group: "", at: 2),
                              .insert("fish", group: "", at: 3)])
            == ["delete bear [0, 2]", "insert fish → [0, 3]", "insert goat → [0, 2]", "insert zebra → [0, 1]"])
    }

    @Test func row_9_aDeleteAndAnInsertOfOneRowAreAMove() {
        let rows = Self.changes(original: ["": ["lion", "tiger", "bear"]],
                                [.delete("lion", group: "", at: 0), .insert("lion", group: "", at: 2)]).rows
        #expect(rows == ["move lion [0, 0] → [0, 2]"])
    }

    /// A row the view placed anew is a move even where it lands back at its old index (only a
    /// row whose index never budged is an update), as YapDatabase's consolidation says.
    @Test func aRowPlacedBackWhereItWasIsStillAMove() {
        let rows = Self.changes(original: ["": Self.animals],
                                [.delete("bear", group: "", at: 2), .insert("bear", group: "", at: 2)]).rows
        #expect(rows == ["move bear [0, 2] → [0, 2]"])
    }

    // MARK: Sections

    @Test func section_1_insert() {
        var result = Self.changes(groups: ["A"], dynamic: true, original: [:], [.insert("lion", group: "A", at: 0)])
        #expect(result.sections == ["insert 0 A"])
        #expect(result.rows == ["insert lion → [0, 0]"])
        result = Self.changes(groups: ["A"], dynamic: false, original: [:], [.insert("lion", group: "A", at: 0)])
        #expect(result.sections == [], "a static section is always there")
        #expect(result.rows == ["insert lion → [0, 0]"])
    }

    @Test func section_2_delete() {
        var result = Self.changes(groups: ["A"], dynamic: true, original: ["A": ["lion"]], [.delete("lion", group: "A", at: 0)])
        #expect(result.sections == ["delete 0 A"])
        #expect(result.rows == ["delete lion [0, 0]"])
        result = Self.changes(groups: ["A"], dynamic: false, original: ["A": ["lion"]], [.delete("lion", group: "A", at: 0)])
        #expect(result.sections == [])
        #expect(result.rows == ["delete lion [0, 0]"])
    }

    @Test func section_3_insertPlus() {
        var result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"]],
                                  [.insert("lion", group: "B", at: 0), .insert("oak", group: "A", at: 1)])
        #expect(result.sections == ["insert 1 B"])
        #expect(result.rows == ["insert lion → [1, 0]", "insert oak → [0, 1]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["B": ["elm"]],
                              [.insert("lion", group: "A", at: 0), .insert("oak", group: "B", at: 1)])
        #expect(result.sections == ["insert 0 A"])
        #expect(result.rows == ["insert lion → [0, 0]", "insert oak → [1, 1]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"]],
                              [.insert("lion", group: "B", at: 0), .update("elm", group: "A", at: 0)])
        #expect(result.sections == ["insert 1 B"])
        #expect(result.rows == ["insert lion → [1, 0]", "update elm [0, 0]"])

        // An update whose section index changed is a move.
        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["B": ["elm"]],
                              [.insert("lion", group: "A", at: 0), .update("elm", group: "B", at: 0)])
        #expect(result.sections == ["insert 0 A"])
        #expect(result.rows == ["insert lion → [0, 0]", "move elm [0, 0] → [1, 0]"])
        #expect(result.changes.first { $0.type == .move }?.changes == .changedObject, "the move keeps what changed")
    }

    @Test func section_4_deletePlus() {
        var result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "B": ["lion"]],
                                  [.delete("lion", group: "B", at: 0), .insert("oak", group: "A", at: 1)])
        #expect(result.sections == ["delete 1 B"])
        #expect(result.rows == ["delete lion [1, 0]", "insert oak → [0, 1]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "B": ["lion"]],
                              [.delete("elm", group: "A", at: 0), .insert("bear", group: "B", at: 1)])
        #expect(result.sections == ["delete 0 A"])
        #expect(result.rows == ["delete elm [0, 0]", "insert bear → [0, 1]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "B": ["lion"]],
                              [.delete("lion", group: "B", at: 0), .update("elm", group: "A", at: 0)])
        #expect(result.sections == ["delete 1 B"])
        #expect(result.rows == ["delete lion [1, 0]", "update elm [0, 0]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "B": ["lion"]],
                              [.delete("elm", group: "A", at: 0), .update("lion", group: "B", at: 0)])
        #expect(result.sections == ["delete 0 A"])
        #expect(result.rows == ["delete elm [0, 0]", "move lion [1, 0] → [0, 0]"])
    }

    @Test func section_5_insertAndDelete() {
        var result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["A": ["elm"], "B": ["lion"]],
                                  [.insert("john", group: "C", at: 0), .delete("elm", group: "A", at: 0)])
        #expect(result.sections == ["delete 0 A", "insert 1 C"])
        #expect(result.rows == ["delete elm [0, 0]", "insert john → [1, 0]"])

        result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["B": ["lion"], "C": ["john"]],
                              [.insert("elm", group: "A", at: 0), .delete("john", group: "C", at: 0)])
        #expect(result.sections == ["delete 1 C", "insert 0 A"])
        #expect(result.rows == ["delete john [1, 0]", "insert elm → [0, 0]"])

        result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["A": ["elm"], "C": ["john"]],
                              [.insert("lion", group: "B", at: 0), .delete("john", group: "C", at: 0)])
        #expect(result.sections == ["delete 1 C", "insert 1 B"])
        #expect(result.rows == ["delete john [1, 0]", "insert lion → [1, 0]"])
    }

    @Test func section_6_insertInsert() {
        for ops: [Op] in [[.insert("lion", group: "B", at: 0), .insert("john", group: "C", at: 0)],
                          [.insert("john", group: "C", at: 0), .insert("lion", group: "B", at: 0)]] {
            let result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["A": ["elm"]], ops)
            #expect(result.sections == ["insert 1 B", "insert 2 C"])
            #expect(result.rows == ["insert john → [2, 0]", "insert lion → [1, 0]"])
        }
    }

    @Test func section_7_deleteDelete() {
        for ops: [Op] in [[.delete("lion", group: "B", at: 0), .delete("john", group: "C", at: 0)],
                          [.delete("john", group: "C", at: 0), .delete("lion", group: "B", at: 0)]] {
            let result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["A": ["elm"], "B": ["lion"], "C": ["john"]], ops)
            #expect(result.sections == ["delete 1 B", "delete 2 C"])
            #expect(result.rows == ["delete john [2, 0]", "delete lion [1, 0]"])
        }
    }

    @Test func section_8_moves() {
        // From a group the mappings do not show: an insert.
        var result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "C": ["john"]],
                                  [.delete("john", group: "C", at: 0), .insert("john", group: "B", at: 0)])
        #expect(result.sections == ["insert 1 B"])
        #expect(result.rows == ["insert john → [1, 0]"])

        result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["A": ["elm"], "B": ["oak"]],
                              [.delete("oak", group: "B", at: 0), .insert("oak", group: "A", at: 1)])
        #expect(result.sections == ["delete 1 B"])
        #expect(result.rows == ["move oak [1, 0] → [0, 1]"])

        result = Self.changes(groups: ["A", "B", "C"], dynamic: true, original: ["A": ["elm"], "C": ["oak"]],
                              [.delete("oak", group: "C", at: 0), .insert("oak", group: "B", at: 0)])
        #expect(result.sections == ["delete 1 C", "insert 1 B"])
        #expect(result.rows == ["move oak [1, 0] → [1, 0]"])
    }

    @Test func section_9_updateThenMoveFromAnUnmappedGroup() {
        let result = Self.changes(groups: ["A"], dynamic: true, original: ["A": ["elm"], "B": ["oak"]],
                                  [.update("oak", group: "B", at: 0), .delete("oak", group: "B", at: 0), .insert("oak", group: "A", at: 1)])
        #expect(result.sections == [])
        #expect(result.rows == ["insert oak → [0, 1]"])
    }

    @Test func section_10_11_dropAndAddAgain() {
        var result = Self.changes(groups: ["A"], dynamic: true, original: ["A": ["elm"]],
                                  [.delete("elm", group: "A", at: 0), .insert("oak", group: "A", at: 0)])
        #expect(result.sections == [], "the section was emptied and filled again in one change set")
        #expect(result.rows == ["delete elm [0, 0]", "insert oak → [0, 0]"])

        result = Self.changes(groups: ["A"], dynamic: true, original: [:],
                              [.insert("oak", group: "A", at: 0), .delete("oak", group: "A", at: 0)])
        #expect(result.sections == [])
        #expect(result.rows == [], "inserted then deleted is nothing")
    }

    @Test func section_12_reset() {
        func reset(dynamic: Bool, then ops: [Op] = []) -> (sections: [String], rows: [String], changes: [YapDatabaseViewRowChange]) {
            Self.changes(groups: ["A"], dynamic: dynamic, original: ["A": ["elm", "oak"]],
                         [.delete("oak", group: "A", at: 1), .delete("elm", group: "A", at: 0)] + ops)
        }
        var result = reset(dynamic: true)
        #expect(result.sections == ["delete 0 A"])
        #expect(result.rows == ["delete elm [0, 0]", "delete oak [0, 1]"])
        result = reset(dynamic: false)
        #expect(result.sections == [])
        #expect(result.rows == ["delete elm [0, 0]", "delete oak [0, 1]"])
        result = reset(dynamic: true, then: [.insert("pine", group: "A", at: 0)])
        #expect(result.sections == [])
        #expect(result.rows == ["delete elm [0, 0]", "delete oak [0, 1]", "insert pine → [0, 0]"])
    }

    @Test func blogBugs() {
        // A row moved into a new section before its old one.
        var result = Self.changes(groups: ["A", "B"], dynamic: true, original: ["B": ["austin", "ben", "robbie", "zach"]],
                                  [.delete("austin", group: "B", at: 0), .insert("austin", group: "A", at: 0)])
        #expect(result.sections == ["insert 0 A"])
        #expect(result.rows == ["move austin [0, 0] → [0, 0]"])

        // An insert above a row that was re-placed one index up: the re-placed row is a move.
        result = Self.changes(groups: ["A"], dynamic: true, original: ["A": ["austin", "ben", "robbie", "zach"]],
                              [.insert("AAA", group: "A", at: 0), .delete("zach", group: "A", at: 4), .insert("zach", group: "A", at: 3)])
        #expect(result.sections == [])
        #expect(result.rows == ["insert AAA → [0, 0]", "move zach [0, 3] → [0, 3]"])
    }

    /// YapDatabase issue 125: rows added to a mapped group and then every row moved to a group
    /// the mappings do not show, in one transaction: only the rows shown before are deletes.
    @Test func issue125_rowsAddedThenMovedToAnUnmappedGroup() {
        let b = Self.rows("b", 18)
        func run(_ ops: [Op]) -> (sections: [String], rows: [String], changes: [YapDatabaseViewRowChange]) {
            Self.changes(groups: ["A"], original: ["A": ["k0", "k1"], "B": b], ops)
        }
        let moves: [Op] = [.delete("k0", group: "A", at: 0), .insert("k0", group: "B", at: 18),
                           .delete("k1", group: "A", at: 0), .insert("k1", group: "B", at: 19),
                           .delete("k2", group: "A", at: 0), .insert("k2", group: "B", at: 20)]
        var result = run([.insert("k2", group: "A", at: 2)] + moves)
        #expect(result.sections == [])
        #expect(result.rows == ["delete k0 [0, 0]", "delete k1 [0, 1]"])
        result = run([.insert("k3", group: "A", at: 2), .insert("k2", group: "A", at: 2)] + moves
                     + [.delete("k3", group: "A", at: 0), .insert("k3", group: "B", at: 21)])
        #expect(result.rows == ["delete k0 [0, 0]", "delete k1 [0, 1]"])
        result = run([.delete("k0", group: "A", at: 0), .insert("k3", group: "A", at: 1), .insert("k2", group: "A", at: 1),
                      .delete("k1", group: "A", at: 0), .insert("k1", group: "B", at: 18),
                      .delete("k2", group: "A", at: 0), .insert("k2", group: "B", at: 19),
                      .delete("k3", group: "A", at: 0), .insert("k3", group: "B", at: 20)])
        #expect(result.rows == ["delete k0 [0, 0]", "delete k1 [0, 1]"])
    }

    // MARK: Getters (TestViewMappingsLogic's getter cases)

    /// Checks `indexForRow:inSection:` for rows 0... and `rowForIndex:inGroup:` for indexes 0...
    /// of a group of `count` rows with `configure` applied (nil: NSNotFound).
    static func checkGetters(count: Int, _ configure: (YapDatabaseViewMappings) -> Void, indexes: [Int?], rows: [Int?],
                             sourceLocation: SourceLocation = #_sourceLocation) {
        let mappings = mappings([""], dynamic: false, ["": (0..<count).map { "k\($0)" }], snapshot: 1, configure: configure)
        let notFound = UInt(NSNotFound)
        for (row, index) in indexes.enumerated() {
            #expect(mappings.index(forRow: UInt(row), inSection: 0) == index.map(UInt.init) ?? notFound, "row \(row)", sourceLocation: sourceLocation)
        }
        for (index, row) in rows.enumerated() {
            #expect(mappings.row(forIndex: UInt(index), inGroup: "") == row.map(UInt.init) ?? notFound, "index \(index)", sourceLocation: sourceLocation)
        }
    }

    @Test func getters() {
        func range(_ offset: UInt, _ pin: YapDatabaseViewPin, reversed: Bool = false) -> (YapDatabaseViewMappings) -> Void {
            { mappings in
                mappings.setRangeOptions(YapDatabaseViewRangeOptions.fixedRange(withLength: 4, offset: offset, from: pin), forGroup: "")
                if reversed { mappings.setIsReversed(true, forGroup: "") }
            }
        }
        Self.checkGetters(count: 3, { _ in }, indexes: [0, 1, 2, nil], rows: [0, 1, 2, nil])                             // 1
        Self.checkGetters(count: 4, { $0.setIsReversed(true, forGroup: "") }, indexes: [3, 2, 1, 0, nil], rows: [3, 2, 1, 0, nil])
        Self.checkGetters(count: 5, range(0, .beginning), indexes: [0, 1, 2, 3, nil], rows: [0, 1, 2, 3, nil, nil])       // 3
        Self.checkGetters(count: 6, range(1, .beginning), indexes: [1, 2, 3, 4, nil], rows: [nil, 0, 1, 2, 3, nil, nil])
        Self.checkGetters(count: 5, range(0, .end), indexes: [1, 2, 3, 4, nil], rows: [nil, 0, 1, 2, 3, nil])             // 5
        Self.checkGetters(count: 6, range(1, .end), indexes: [1, 2, 3, 4, nil], rows: [nil, 0, 1, 2, 3, nil, nil])
        Self.checkGetters(count: 5, range(0, .beginning, reversed: true), indexes: [3, 2, 1, 0, nil], rows: [3, 2, 1, 0, nil, nil])
        Self.checkGetters(count: 6, range(1, .beginning, reversed: true), indexes: [4, 3, 2, 1, nil], rows: [nil, 3, 2, 1, 0, nil, nil])
        Self.checkGetters(count: 5, range(0, .end, reversed: true), indexes: [4, 3, 2, 1, nil], rows: [nil, 3, 2, 1, 0, nil])  // 9
        Self.checkGetters(count: 6, range(1, .end, reversed: true), indexes: [4, 3, 2, 1, nil], rows: [nil, 3, 2, 1, 0, nil, nil])
    }

    // MARK: Auto-consolidated groups (TestViewMappingsLogic's autoConsolidateGroups_2 and _3)

    static func consolidated(_ threshold: UInt) -> (YapDatabaseViewMappings) -> Void {
        { $0.setAutoConsolidateGroupsThreshold(threshold, withName: "auto") }
    }

    static func rows(_ prefix: String, _ count: Int) -> [String] { (0..<count).map { "\(prefix)-\($0)" } }

    @Test func autoConsolidateGroups_2_crossingTheThresholdSplitsOrJoinsTheSections() {
        // 2A: 1 + 3 rows (consolidated below 5) gain one in g0: every group gets its section back.
        var result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 1), "g1": Self.rows("b", 3)],
                                  [.insert("new", group: "g0", at: 0)], configure: Self.consolidated(5))
        #expect(result.sections == ["delete 0 auto", "insert 0 g0", "insert 1 g1"])
        #expect(result.rows == ["insert new → [0, 0]", "move a-0 [0, 0] → [0, 1]", "move b-0 [0, 1] → [1, 0]",
                                "move b-1 [0, 2] → [1, 1]", "move b-2 [0, 3] → [1, 2]"])
        #expect(result.changes.allSatisfy { $0.type == .insert || $0.originalGroup == "auto" })
        #expect(result.changes.first { $0.type == .insert }?.finalGroup == "g0")

        // 2B: 2 + 2 rows gain one in g1 (at 1).
        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 2), "g1": Self.rows("b", 2)],
                              [.insert("new", group: "g1", at: 1)], configure: Self.consolidated(5))
        #expect(result.sections == ["delete 0 auto", "insert 0 g0", "insert 1 g1"])
        #expect(result.rows == ["insert new → [1, 1]", "move a-0 [0, 0] → [0, 0]", "move a-1 [0, 1] → [0, 1]",
                                "move b-0 [0, 2] → [1, 0]", "move b-1 [0, 3] → [1, 2]"])

        // 2C: 1 + 2 rows gain one in each group.
        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 1), "g1": Self.rows("b", 2)],
                              [.insert("new0", group: "g0", at: 0), .insert("new1", group: "g1", at: 1)], configure: Self.consolidated(5))
        #expect(result.sections == ["delete 0 auto", "insert 0 g0", "insert 1 g1"])
        #expect(result.rows == ["insert new0 → [0, 0]", "insert new1 → [1, 1]", "move a-0 [0, 0] → [0, 1]",
                                "move b-0 [0, 1] → [1, 0]", "move b-1 [0, 2] → [1, 2]"])
        #expect(result.changes.allSatisfy { $0.type == .insert || $0.originalGroup == "auto" })

        // And back below the threshold: the sections join again.
        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 2), "g1": Self.rows("b", 3)],
                              [.delete("a-0", group: "g0", at: 0)], configure: Self.consolidated(5))
        #expect(result.sections == ["delete 0 g0", "delete 1 g1", "insert 0 auto"])
        #expect(result.rows == ["delete a-0 [0, 0]", "move a-1 [0, 1] → [0, 0]", "move b-0 [1, 0] → [0, 1]",
                                "move b-1 [1, 1] → [0, 2]", "move b-2 [1, 2] → [0, 3]"])
        #expect(result.changes.allSatisfy { $0.type == .delete || $0.finalGroup == "auto" })
    }

    @Test func autoConsolidateGroups_3_changesWhileConsolidated() {
        let five = ["g0": Self.rows("a", 2), "g1": Self.rows("b", 3)]
        var result = Self.changes(groups: ["g0", "g1"], original: five, [.delete("a-0", group: "g0", at: 0)], configure: Self.consolidated(20))
        #expect(result.sections == [])
        #expect(result.rows == ["delete a-0 [0, 0]"])
        #expect(result.changes.first?.originalGroup == "auto")

        result = Self.changes(groups: ["g0", "g1"], original: five, [.delete("b-1", group: "g1", at: 1)], configure: Self.consolidated(20))
        #expect(result.rows == ["delete b-1 [0, 3]"])

        result = Self.changes(groups: ["g0", "g1"], original: five,
                              [.delete("a-0", group: "g0", at: 0), .delete("b-1", group: "g1", at: 1)], configure: Self.consolidated(20))
        #expect(result.sections == [])
        #expect(result.rows == ["delete a-0 [0, 0]", "delete b-1 [0, 3]"])

        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 1), "g1": Self.rows("b", 3)],
                              [.insert("new", group: "g0", at: 0)], configure: Self.consolidated(20))
        #expect(result.sections == [])
        #expect(result.rows == ["insert new → [0, 0]"])
        #expect(result.changes.first?.finalGroup == "auto")

        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 2), "g1": Self.rows("b", 2)],
                              [.insert("new", group: "g1", at: 1)], configure: Self.consolidated(20))
        #expect(result.rows == ["insert new → [0, 3]"])

        result = Self.changes(groups: ["g0", "g1"], original: ["g0": Self.rows("a", 1), "g1": Self.rows("b", 2)],
                              [.insert("new0", group: "g0", at: 0), .insert("new1", group: "g1", at: 1)], configure: Self.consolidated(20))
        #expect(result.sections == [])
        #expect(result.rows == ["insert new0 → [0, 0]", "insert new1 → [0, 3]"])
    }

    // MARK: nearestIndexPath(forRow:inGroup:)

    @Test func nearestIndexPathFindsTheRowOrItsNearestNeighbour() {
        let mappings = Self.mappings(["A", "B", "C"], dynamic: true, ["A": Self.rows("a", 2), "C": Self.rows("c", 3)], snapshot: 1)
        #expect(mappings.nearestIndexPath(forRow: 1, inGroup: "A") == IndexPath(indexes: [0, 1]))
        #expect(mappings.nearestIndexPath(forRow: 7, inGroup: "C") == IndexPath(indexes: [1, 2]), "past the end: the group's last row")
        #expect(mappings.nearestIndexPath(forRow: 0, inGroup: "B") == IndexPath(indexes: [0, 1]), "an empty group: the last row above it")
        #expect(mappings.nearestIndexPath(forRow: 0, inGroup: "Z") == nil, "a group the mappings do not map")

        let onlyBelow = Self.mappings(["A", "B", "C"], dynamic: false, ["C": Self.rows("c", 3)], snapshot: 1)
        #expect(onlyBelow.nearestIndexPath(forRow: 4, inGroup: "A") == IndexPath(indexes: [2, 0]), "nothing above: the first row below")
        #expect(Self.mappings(["A"], dynamic: true, [:], snapshot: 1).nearestIndexPath(forRow: 0, inGroup: "A") == nil)
        #expect(YapDatabaseViewMappings(groups: ["A"], view: "view").nearestIndexPath(forRow: 0, inGroup: "A") == nil, "before the first update")

        let consolidated = Self.mappings(["A", "B", "C"], dynamic: true, ["A": Self.rows("a", 2), "C": Self.rows("c", 3)], snapshot: 1,
                                         configure: Self.consolidated(10))
        #expect(consolidated.isUsingConsolidatedGroup())
        #expect(consolidated.nearestIndexPath(forRow: 1, inGroup: "C") == IndexPath(indexes: [0, 3]), "consolidated: the row in the one section")
        #expect(consolidated.nearestIndexPath(forRow: 0, inGroup: "B") == IndexPath(indexes: [0, 1]))
    }
}
