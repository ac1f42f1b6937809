import Foundation
import XCTest
import YapDB

/// The chat app's screens against the store: mappings, a table view's data source, the change
/// sets a `YapDatabaseModified` handler animates. XCTest runs these on the main thread, where the
/// UI connection (`[.YDB_MainThreadOnly, .YDB_SyncReadTransaction]`) must be used.
final class PortingChatAppTests: PortingTestCase {
    func makeManager() throws -> ChatDatabaseManager {
        try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("chat.sqlite")))
    }

    func message(_ id: String, in conversation: String, at time: Double) -> Message {
        Message(uniqueId: id, conversationId: conversation, text: "text \(id)", timestamp: time, isOutgoing: false)
    }

    func testConversationScreenAnimatesChangesLikeATableView() throws {
        XCTAssertTrue(Thread.isMainThread)
        let manager = try makeManager()
        manager.save(message("m1", in: "alice", at: 1), unread: true)
        manager.save(message("m2", in: "alice", at: 2), unread: true)
        manager.save(message("m3", in: "bob", at: 3), unread: false)

        let mappings = YapDatabaseViewMappings(groups: ["alice", "bob", "carol"], view: kView_MessagesByConversation)
        mappings.setIsDynamicSection(true, forGroup: "carol")
        _ = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let dataSource = ConversationListDataSource(connection: manager.uiDatabaseConnection, mappings: mappings)

        let sections: UInt = mappings.numberOfSections()
        XCTAssertEqual(sections, 2, "carol's empty dynamic section is hidden")
        let aliceRows: UInt = mappings.numberOfItems(inSection: UInt(0))
        XCTAssertEqual(aliceRows, 2)
        XCTAssertEqual(mappings.group(forSection: UInt(1)), "bob")
        XCTAssertNil(mappings.group(forSection: UInt(2)))
        let everything: UInt = mappings.numberOfItemsInAllGroups()
        XCTAssertEqual(everything, 3)
        manager.uiDatabaseConnection.objectCacheLimit = mappings.numberOfItemsInAllGroups()   // UInt to UInt, as apps write it
        XCTAssertEqual(manager.uiDatabaseConnection.objectCacheLimit, 3)
        XCTAssertEqual(dataSource.allRows(), [["m1", "m2"], ["m3"]])
        XCTAssertEqual(dataSource.title(forHeaderInSection: 0), "alice")

        manager.uiDatabaseConnection.read { transaction in
            guard let viewTransaction = transaction.ext(kView_MessagesByConversation) as? YapDatabaseAutoViewTransaction else {
                return XCTFail("a read transaction gives the auto view's transaction")
            }
            let inAlice: UInt = viewTransaction.numberOfItems(inGroup: "alice")
            XCTAssertEqual(inAlice, 2)
            XCTAssertEqual((viewTransaction.object(at: UInt(1), inGroup: "alice") as? Message)?.uniqueId, "m2")
            XCTAssertNil(viewTransaction.object(at: UInt(2), inGroup: "alice"))
            XCTAssertEqual((viewTransaction.object(atRow: 0, inSection: 1, with: mappings) as? Message)?.uniqueId, "m3")
            XCTAssertEqual((viewTransaction.object(at: IndexPath(row: 1, section: 0), with: mappings) as? Message)?.uniqueId, "m2")
            XCTAssertEqual(viewTransaction.indexPath(forKey: "m3", inCollection: kCollection_Messages, with: mappings),
                           IndexPath(row: 0, section: 1))
            XCTAssertNil(viewTransaction.indexPath(forKey: "nope", inCollection: kCollection_Messages, with: mappings))
            let all: UInt = viewTransaction.numberOfItemsInAllGroups()
            XCTAssertEqual(all, 3)
            let groups: UInt = viewTransaction.numberOfGroups()
            XCTAssertEqual(groups, 2)
        }

        // A background commit: a new message for carol (her section appears), one for alice
        // that sorts first, and bob's message removed (his section stays: not dynamic).
        manager.rwDatabaseConnection.readWrite { transaction in
            transaction.setObject(self.message("m4", in: "carol", at: 4), forKey: "m4", inCollection: kCollection_Messages)
            transaction.setObject(self.message("m0", in: "alice", at: 0), forKey: "m0", inCollection: kCollection_Messages)
            transaction.removeObject(forKey: "m3", inCollection: kCollection_Messages)
        }
        var table = TableViewModel(rows: [["m1", "m2"], ["m3"]])
        let (sectionChanges, rowChanges) = try XCTUnwrap(dataSource.databaseModified())
        XCTAssertEqual(sectionChanges.map { "\($0.type) \($0.index) \($0.group)" }, ["insert 2 carol"])
        let insert = try XCTUnwrap(rowChanges.first { $0.collectionKey.key == "m0" })
        XCTAssertEqual(insert.type, .insert)
        let finalIndex: UInt = insert.finalIndex
        XCTAssertEqual(finalIndex, 0)
        XCTAssertEqual(insert.finalSection, 0)
        let delete = try XCTUnwrap(rowChanges.first { $0.collectionKey.key == "m3" })
        XCTAssertEqual(delete.type, .delete)
        let originalIndex: UInt = delete.originalIndex
        XCTAssertEqual(originalIndex, 0)
        XCTAssertEqual(delete.originalSection, 1)
        XCTAssertEqual(delete.originalGroup, "bob")
        let intoNewSection = try XCTUnwrap(rowChanges.first { $0.collectionKey.key == "m4" },
                                           "rows of an inserted section are reported beside the section insert")
        XCTAssertEqual(intoNewSection.type, .insert)
        XCTAssertEqual(intoNewSection.newIndexPath, IndexPath(row: 0, section: 2))
        table.performBatchUpdates(sectionChanges: sectionChanges, rowChanges: rowChanges,
                                  rowsOfInsertedSection: { dataSource.allRows()[$0] })
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, dataSource.allRows())
        XCTAssertEqual(table.sections, [["m0", "m1", "m2"], [], ["m4"]])

        // Editing a message is an update at its place; marking it read too.
        manager.edit("m1", text: "edited")
        manager.markRead("m2")
        let (noSections, updates) = try XCTUnwrap(dataSource.databaseModified())
        XCTAssertEqual(noSections.count, 0)
        XCTAssertEqual(Set(updates.map { "\($0.type) \($0.collectionKey.key) \($0.originalIndex)" }), ["update m1 1", "update m2 2"])
        XCTAssertEqual(updates.map(\.newIndexPath), [nil, nil], "an update has no newIndexPath, as in YapDatabase")
        XCTAssertEqual(Set(updates.map(\.finalIndex)), [1, 2])
        let edited = try XCTUnwrap(updates.first { $0.collectionKey.key == "m1" })
        XCTAssertTrue(edited.changes.contains(.changedObject) && !edited.changes.contains(.changedMetadata), "replace keeps the metadata")
        let markedRead = try XCTUnwrap(updates.first { $0.collectionKey.key == "m2" })
        XCTAssertEqual(markedRead.changes, .changedMetadata)
        XCTAssertEqual(dataSource.message(at: IndexPath(row: 1, section: 0))?.text, "edited")
        XCTAssertEqual(manager.unreadCount(), 1, "m0 and m4 have no metadata; m1 is unread; m2 was marked read")

        // A commit that touches only contacts does not change the view.
        manager.rwDatabaseConnection.readWrite { transaction in
            transaction.setObject(Contact(name: "Alice"), forKey: "alice", inCollection: kCollection_Contacts)
        }
        let contactNotifications = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        XCTAssertEqual(contactNotifications.count, 1)
        let viewConnection = try XCTUnwrap(manager.uiDatabaseConnection.ext(kView_MessagesByConversation) as? YapDatabaseViewConnection)
        XCTAssertFalse(viewConnection.hasChanges(for: contactNotifications))
        manager.uiDatabaseConnection.read { transaction in mappings.update(with: transaction) }

        // A message moved to another shown conversation is a move between sections.
        var moved = message("m2", in: "bob", at: 2)
        moved.text = "forwarded"
        manager.save(moved, unread: false)
        var table2 = TableViewModel(rows: [["m0", "m1", "m2"], [], ["m4"]])
        let (moveSections, moves) = try XCTUnwrap(dataSource.databaseModified())
        XCTAssertEqual(moves.map { "\($0.type) \($0.originalGroup)[\($0.originalIndex)] → \($0.finalGroup)[\($0.finalIndex)]" },
                       ["move alice[2] → bob[0]"])
        table2.performBatchUpdates(sectionChanges: moveSections, rowChanges: moves, rowsOfInsertedSection: { dataSource.allRows()[$0] })
        XCTAssertEqual(table2.problems, [])
        XCTAssertEqual(table2.sections, [["m0", "m1"], ["m2"], ["m4"]])
    }

    /// Random batches of inserts, removes, moves within and across groups, touches and cleared
    /// conversations, each applied to a table with UIKit's rules: the rows the table ends up with
    /// must be the rows the data source reads from the view.
    func testRandomBatchesKeepTheTableConsistent() throws {
        var seen: [String: Int] = [:]
        for seed: UInt64 in [1, 2, 3, 4] {
            try runRandomBatches(seed: seed, reversedGroup: seed % 2 == 0 ? "b" : nil, seen: &seen)
        }
        for kind in ["section insert", "section delete", "row insert", "row delete", "row move", "row update"] {
            XCTAssertGreaterThan(seen[kind, default: 0], 3, "the batches exercise every kind of change: \(seen)")
        }
    }

    /// The same random batches through mappings with ranges (a flexible one pinned to the end
    /// of "a", a fixed page of "b", shown reversed for some seeds), cell-drawing dependencies, and
    /// for some seeds auto-consolidated groups: the table still ends up with exactly the rows the
    /// data source reads, as the ranges grow and shrink.
    func testRandomBatchesThroughRangesKeepTheTableConsistent() throws {
        var seen: [String: Int] = [:]
        for seed: UInt64 in [11, 12, 13, 14] {
            try runRandomBatches(seed: seed, reversedGroup: seed % 2 == 0 ? "b" : nil, seen: &seen) { mappings in
                let flexible = YapDatabaseViewRangeOptions.flexibleRange(withLength: 4, offset: 0, from: .end)!
                flexible.maxLength = 7
                flexible.minLength = 2
                flexible.growOptions = seed == 13 ? .onBothSides : .pinSide
                mappings.setRangeOptions(flexible, forGroup: "a")
                mappings.setRangeOptions(YapDatabaseViewRangeOptions.fixedRange(withLength: 3, offset: seed == 12 ? 1 : 0, from: .beginning),
                                         forGroup: "b")
                mappings.setCellDrawingDependencyForNeighboringCell(withOffset: -1, forGroup: "a")
                mappings.setCellDrawingDependencyOffsets([NSNumber(value: -1), NSNumber(value: 1)], forGroup: "c")
                if seed == 14 { mappings.setAutoConsolidateGroupsThreshold(8, withName: "all") }
            }
        }
        XCTAssertGreaterThan(seen["row update", default: 0], 3)
        XCTAssertGreaterThan(seen["row move", default: 0], 3)
    }

    func runRandomBatches(seed: UInt64, reversedGroup: String?, seen: inout [String: Int],
                          configure: (YapDatabaseViewMappings) -> Void = { _ in }) throws {
        let manager = try ChatDatabaseManager(url: directory.appendingPathComponent("random-\(seed).sqlite")).unwrap()
        let conversations = ["a", "b", "c", "d"]
        let mappings = YapDatabaseViewMappings(groups: conversations, view: kView_MessagesByConversation)
        mappings.setIsDynamicSection(true, forGroup: "c")
        mappings.setIsDynamicSection(true, forGroup: "d")
        if let reversedGroup { mappings.setIsReversed(true, forGroup: reversedGroup) }
        configure(mappings)
        _ = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let dataSource = ConversationListDataSource(connection: manager.uiDatabaseConnection, mappings: mappings)
        var table = TableViewModel(rows: dataSource.allRows())
        var random = SeededRandom(seed: seed)
        var live: [String] = []
        var nextId = 0

        for batch in 0..<60 {
            let commits = random.next(in: 1...3)
            for _ in 0..<commits {
                manager.rwDatabaseConnection.readWrite { transaction in
                    for _ in 0..<random.next(in: 1...6) {
                        let operation = random.next(in: 0...9)
                        switch operation == 9 && live.count < 4 ? 0 : operation {   // clear only when there is enough to clear
                        case 0...3:
                            let id = String(format: "m%03d", nextId)
                            nextId += 1
                            live.append(id)
                            let conversation = conversations[random.next(in: 0...3)]
                            transaction.setObject(self.message(id, in: conversation, at: Double(random.next(in: 0...50))),
                                                  forKey: id, inCollection: kCollection_Messages)
                        case 4, 5:
                            guard !live.isEmpty else { break }
                            let id = live.remove(at: random.next(in: 0...(live.count - 1)))
                            transaction.removeObject(forKey: id, inCollection: kCollection_Messages)
                        case 6, 7:
                            guard let id = live.randomElement(using: &random),
                                  var message = transaction.object(forKey: id, inCollection: kCollection_Messages) as? Message else { break }
                            if random.next(in: 0...1) == 0 {
                                message.timestamp = Double(random.next(in: 0...50))
                            } else {
                                message.conversationId = conversations[random.next(in: 0...3)]
                            }
                            transaction.replace(message, forKey: id, inCollection: kCollection_Messages)
                        case 8:
                            guard let id = live.randomElement(using: &random) else { break }
                            transaction.touchObject(forKey: id, inCollection: kCollection_Messages)
                        default:
                            // Clear a conversation: its dynamic section, if any, disappears.
                            let conversation = conversations[random.next(in: 0...3)]
                            var doomed: [String] = []
                            transaction.iterateKeysAndObjects(inCollection: kCollection_Messages) { (key, message: Message, stop) in
                                if message.conversationId == conversation { doomed.append(key) }
                            }
                            transaction.removeObjects(forKeys: doomed, inCollection: kCollection_Messages)
                            live.removeAll { doomed.contains($0) }
                        }
                    }
                }
            }
            if let (sectionChanges, rowChanges) = dataSource.databaseModified() {
                for change in sectionChanges { seen["section \(change.type)", default: 0] += 1 }
                for change in rowChanges { seen["row \(change.type)", default: 0] += 1 }
                table.performBatchUpdates(sectionChanges: sectionChanges, rowChanges: rowChanges,
                                  rowsOfInsertedSection: { dataSource.allRows()[$0] })
                let context = "seed \(seed) batch \(batch): sections \(sectionChanges) rows \(rowChanges)"
                XCTAssertEqual(table.problems, [], context)
                XCTAssertEqual(table.sections, dataSource.allRows(), context)
                if !table.problems.isEmpty || table.sections != dataSource.allRows() { return }
                for change in rowChanges where change.type == .update {
                    let place = table.sections[Int(change.finalSection)][Int(change.finalIndex)]
                    XCTAssertEqual(place, change.collectionKey.key, "an update's final place shows its row: \(context)")
                }
            } else {
                XCTAssertEqual(table.sections, dataSource.allRows(), "no change set, no change: seed \(seed) batch \(batch)")
            }
            let counted = table.sections.reduce(0) { $0 + $1.count }
            XCTAssertEqual(UInt(counted), mappings.numberOfItemsInAllGroups())
        }
    }

    /// Mappings whose groups a filter block chooses and a sort block orders: conversations with
    /// a name starting with "team-", newest name first; sections come and go with the groups.
    func testGroupFilterMappingsFollowTheBlocks() throws {
        let manager = try makeManager()
        manager.save(message("m1", in: "team-a", at: 1), unread: false)
        manager.save(message("m2", in: "private", at: 2), unread: false)

        let filter: YapDatabaseViewMappingGroupFilter = { (group, transaction) in group.hasPrefix("team-") }
        let sort: YapDatabaseViewMappingGroupSort = { (group1, group2, transaction) in group2.compare(group1) }
        let mappings = YapDatabaseViewMappings(groupFilterBlock: filter, sortBlock: sort, view: kView_MessagesByConversation)
        _ = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let dataSource = ConversationListDataSource(connection: manager.uiDatabaseConnection, mappings: mappings)
        XCTAssertEqual(mappings.allGroups, ["team-a"])
        XCTAssertEqual(dataSource.allRows(), [["m1"]])

        manager.save(message("m3", in: "team-b", at: 3), unread: false)
        manager.save(message("m4", in: "private", at: 4), unread: false)
        var table = TableViewModel(rows: [["m1"]])
        let (sectionChanges, rowChanges) = try XCTUnwrap(dataSource.databaseModified())
        XCTAssertEqual(sectionChanges.map { "\($0.type) \($0.index) \($0.group)" }, ["insert 0 team-b"])
        table.performBatchUpdates(sectionChanges: sectionChanges, rowChanges: rowChanges,
                                  rowsOfInsertedSection: { dataSource.allRows()[$0] })
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, [["m3"], ["m1"]])
        XCTAssertEqual(table.sections, dataSource.allRows())
        XCTAssertEqual(mappings.visibleGroups(), ["team-b", "team-a"])

        manager.delete("m1")
        let (gone, _) = try XCTUnwrap(dataSource.databaseModified())
        XCTAssertEqual(gone.map { "\($0.type) \($0.index) \($0.group)" }, ["delete 1 team-a"], "an emptied group leaves the view and the mappings")
        XCTAssertEqual(mappings.numberOfSections(), 1)
    }
}

extension Optional {
    /// `XCTUnwrap` for code outside a test method.
    func unwrap(file: StaticString = #filePath, line: UInt = #line) throws -> Wrapped {
        try XCTUnwrap(self, file: file, line: line)
    }
}

/// A small deterministic generator (SplitMix64), so every run makes the same batches.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
