import Foundation
import XCTest
import YapDB

/// A conversation screen written as chat apps write it against YapDatabase: it shows the last
/// messages of one conversation through a flexible range pinned to the end ("load earlier
/// messages" makes the range longer), each bubble is drawn with its previous message (the
/// sender's name is hidden under a message of the same sender), and a batch too large to animate
/// is reloaded, decided by `numberOfRawChanges`.
final class PortingChatRangeTests: PortingTestCase {
    func makeManager() throws -> ChatDatabaseManager {
        try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("chat.sqlite")))
    }

    func message(_ id: String, at time: Double) -> Message {
        Message(uniqueId: id, conversationId: "alice", text: "text \(id)", timestamp: time, isOutgoing: false)
    }

    /// What the screen's `YapDatabaseModified` handler does: reload when the batch is large,
    /// else animate the changes (applied to a table model with UIKit's rules).
    func handleDatabaseModified(_ manager: ChatDatabaseManager, _ mappings: YapDatabaseViewMappings,
                                _ dataSource: ConversationListDataSource, table: inout TableViewModel) -> (reloaded: Bool, rows: [YapDatabaseViewRowChange]) {
        let notifications = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let viewConnection = manager.uiDatabaseConnection.ext(kView_MessagesByConversation) as! YapDatabaseViewConnection
        if viewConnection.numberOfRawChanges(forNotifications: notifications) > 20 {
            manager.uiDatabaseConnection.read { transaction in mappings.update(with: transaction) }
            table = TableViewModel(rows: dataSource.allRows())
            return (true, [])
        }
        let (sectionChanges, rowChanges) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
        table.performBatchUpdates(sectionChanges: sectionChanges, rowChanges: rowChanges,
                                  rowsOfInsertedSection: { dataSource.allRows()[$0] })
        return (false, rowChanges)
    }

    func testTheLastMessagesThroughAFlexibleRangePinnedToTheEnd() throws {
        let manager = try makeManager()
        manager.rwDatabaseConnection.readWrite { transaction in
            for i in 0..<30 {
                transaction.setObject(self.message(String(format: "m%02d", i), at: Double(i)), forKey: String(format: "m%02d", i),
                                      inCollection: kCollection_Messages, withMetadata: MessageMeta(unread: false))
            }
        }
        let mappings = YapDatabaseViewMappings(groups: ["alice"], view: kView_MessagesByConversation)
        let rangeOptions = YapDatabaseViewRangeOptions.flexibleRange(withLength: 10, offset: 0, from: .end)!
        rangeOptions.maxLength = 15
        rangeOptions.growOptions = .onBothSides
        mappings.setRangeOptions(rangeOptions, forGroup: "alice")
        mappings.setCellDrawingDependencyForNeighboringCell(withOffset: -1, forGroup: "alice")
        _ = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let dataSource = ConversationListDataSource(connection: manager.uiDatabaseConnection, mappings: mappings)
        var table = TableViewModel(rows: dataSource.allRows())
        XCTAssertEqual(table.sections, [(20..<30).map { String(format: "m%02d", $0) }], "the last 10 messages")

        // A new message arrives at the end: the range grows to show it (no bubble is drawn
        // with a message after it, so nothing else is redrawn).
        manager.save(message("m30", at: 30), unread: true)
        var (reloaded, rows) = handleDatabaseModified(manager, mappings, dataSource, table: &table)
        XCTAssertFalse(reloaded)
        XCTAssertEqual(rows.map { "\($0.type) \($0.finalIndex)" }, ["insert 10"])
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, dataSource.allRows())
        XCTAssertEqual(mappings.numberOfItems(inGroup: "alice"), 11)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "alice")?.length, 11)

        // The bubble after a deleted message is redrawn: it has a new previous message.
        manager.delete("m25")
        (reloaded, rows) = handleDatabaseModified(manager, mappings, dataSource, table: &table)
        XCTAssertEqual(rows.map { "\($0.type) \($0.collectionKey.key)" }.sorted(), ["delete m25", "update m26"])
        let redrawn = try XCTUnwrap(rows.first { $0.type == .update })
        XCTAssertTrue(redrawn.changes.contains(.changedDependency))
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, dataSource.allRows())

        // "Load earlier messages": a longer range (the table reloads).
        let current = try XCTUnwrap(mappings.rangeOptions(forGroup: "alice"))
        mappings.setRangeOptions(current.copy(withNewLength: current.length + 5) as? YapDatabaseViewRangeOptions, forGroup: "alice")
        table = TableViewModel(rows: dataSource.allRows())
        XCTAssertEqual(table.sections.first?.count, 15)
        XCTAssertEqual(table.sections.first?.first, "m15")

        // More messages than the cap: the oldest shown leave at the top.
        for i in 31..<34 { manager.save(message("m\(i)", at: Double(i)), unread: true) }
        (reloaded, rows) = handleDatabaseModified(manager, mappings, dataSource, table: &table)
        XCTAssertFalse(reloaded)
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, dataSource.allRows())
        XCTAssertEqual(mappings.numberOfItems(inGroup: "alice"), 15, "held at maxLength")
        XCTAssertEqual(table.sections.first?.last, "m33")

        // A large batch (a sync): the screen reloads instead of animating.
        manager.rwDatabaseConnection.readWrite { transaction in
            for i in 100..<130 {
                transaction.setObject(self.message("m\(i)", at: Double(i)), forKey: "m\(i)", inCollection: kCollection_Messages,
                                      withMetadata: MessageMeta(unread: true))
            }
        }
        (reloaded, _) = handleDatabaseModified(manager, mappings, dataSource, table: &table)
        XCTAssertTrue(reloaded)
        XCTAssertEqual(table.sections.first?.last, "m129")
        XCTAssertEqual(table.sections.first?.count, 15)
    }

    func testAFixedPageOfAFeed() throws {
        let manager = try makeManager()
        manager.rwDatabaseConnection.readWrite { transaction in
            for i in 0..<40 {
                transaction.setObject(self.message(String(format: "m%02d", i), at: Double(i)), forKey: String(format: "m%02d", i),
                                      inCollection: kCollection_Messages, withMetadata: MessageMeta(unread: false))
            }
        }
        // The feed shows the newest first: reversed, the first 20 of the table.
        let mappings = YapDatabaseViewMappings(groups: ["alice"], view: kView_MessagesByConversation)
        mappings.setIsReversed(true, forGroup: "alice")
        mappings.setRangeOptions(YapDatabaseViewRangeOptions.fixedRange(withLength: 20, offset: 0, from: .beginning), forGroup: "alice")
        _ = manager.uiDatabaseConnection.beginLongLivedReadTransaction()
        let dataSource = ConversationListDataSource(connection: manager.uiDatabaseConnection, mappings: mappings)
        var table = TableViewModel(rows: dataSource.allRows())
        XCTAssertEqual(table.sections.first?.first, "m39")
        XCTAssertEqual(table.sections.first?.count, 20)
        let position = mappings.rangePosition(forGroup: "alice")
        XCTAssertEqual(position.offsetFromBeginning, 0)
        XCTAssertEqual(position.offsetFromEnd, 20)

        // A new post at the top pushes the 20th out of the page.
        manager.save(message("m40", at: 40), unread: true)
        let (_, rows) = handleDatabaseModified(manager, mappings, dataSource, table: &table)
        XCTAssertEqual(rows.map { "\($0.type) \($0.collectionKey.key)" }.sorted(), ["delete m20", "insert m40"])
        XCTAssertEqual(table.problems, [])
        XCTAssertEqual(table.sections, dataSource.allRows())
        XCTAssertEqual(table.sections.first?.first, "m40")
    }
}
