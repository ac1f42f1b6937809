import Foundation
import XCTest
import YapDB

/// The other members of YapDatabase's headers that YapDB spells as Swift imports them: change
/// queries, the `ObjCBool` enumerations, view-transaction lookups and mapping arithmetic.
final class PortingMoreSpellingsTests: PortingTestCase {
    /// The header's notification names are `String` constants in Swift; code built on them names
    /// the same notifications YapDB posts.
    func testTheHeadersNotificationNameConstants() {
        XCTAssertEqual(NSNotification.Name(rawValue: YapDatabaseModifiedNotification), .YapDatabaseModified)
        XCTAssertEqual(YapDatabaseModifiedNotification, "YapDatabaseModifiedNotification")
        XCTAssertEqual(NSNotification.Name(rawValue: YapDatabaseModifiedExternallyNotification), .YapDatabaseModifiedExternally)
        XCTAssertEqual(YapDatabaseModifiedExternallyNotification, "YapDatabaseModifiedExternallyNotification")
    }

    func testChangeQueriesAndEnumerationsOfConnections() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("changes.sqlite")))
        database.registerSerializer({ _, _, object in Data(((object as? String) ?? "").utf8) }, deserializer: { _, _, data in
            String(decoding: data, as: UTF8.self)
        }, preSanitizer: { _, _, object in (object as? String)?.uppercased() ?? object }, postSanitizer: nil,
           forCollections: ["notes", "drafts"])
        let external = NotificationCenter.default.addObserver(forName: .YapDatabaseModifiedExternally, object: database, queue: nil) { _ in
            XCTFail("one process at a time: never posted")
        }
        defer { NotificationCenter.default.removeObserver(external) }
        let reader = database.newConnection()
        reader.beginLongLivedReadTransaction()
        let writer = database.newConnection()
        writer.readWrite { transaction in
            transaction.setObject("hello", forKey: "n1", inCollection: "notes")
            transaction.setObject("draft", forKey: "n1", inCollection: "drafts")
            transaction.setObject("world", forKey: "n2", inCollection: "notes", withMetadata: "meta")
        }
        writer.readWrite { transaction in
            transaction.replaceMetadata("meta2", forKey: "n2", inCollection: "notes")
        }
        let notifications = reader.beginLongLivedReadTransaction()
        XCTAssertEqual(notifications.count, 2)
        XCTAssertNil(notifications.first?.userInfo?[YapDatabaseModifiedExternallyKey])
        XCTAssertTrue(reader.hasObjectChange(forCollection: "notes", in: notifications))
        XCTAssertTrue(reader.hasMetadataChange(forAnyKeys: ["n2"], inCollection: "notes", in: Array(notifications.suffix(1))))
        XCTAssertFalse(reader.hasObjectChange(forAnyKeys: ["n2"], inCollection: "notes", in: Array(notifications.suffix(1))))
        XCTAssertTrue(reader.hasMetadataChange(forCollection: "drafts", in: notifications), "setObject sets the metadata too (to nil)")
        XCTAssertFalse(reader.hasObjectChange(forCollection: "other", in: notifications))

        var changed: [String] = []
        reader.enumerateChangedKeys(inCollection: "notes", in: notifications) { key, stop in
            changed.append(key)
            stop.pointee = true
        }
        XCTAssertEqual(changed.count, 1, "the ObjCBool stop ends it after one key")
        var collectionKeys: [YapCollectionKey] = []
        reader.enumerateChangedCollectionKeys(in: notifications) { collectionKey, stop in collectionKeys.append(collectionKey) }
        XCTAssertEqual(Set(collectionKeys.map(\.description)), ["notes/n1", "notes/n2", "drafts/n1"])

        reader.read { transaction in
            XCTAssertEqual(transaction.object(forKey: "n1", inCollection: "notes") as? String, "HELLO", "the pre-sanitizer ran")
            var collections: [String] = []
            transaction.enumerateCollections(forKey: "n1") { collection, stop in collections.append(collection) }
            XCTAssertEqual(collections.sorted(), ["drafts", "notes"])
            var metadata: [UInt: String] = [:]
            transaction.enumerateMetadata(forKeys: ["n1", "n2"], inCollection: "notes") { index, value, stop in
                metadata[index] = value as? String ?? "-"
            }
            XCTAssertEqual(metadata, [0: "-", 1: "META2"])
            var rows = 0
            transaction.enumerateRows(forKeys: ["n2", "zz"], inCollection: "notes") { index, object, metadata, stop in
                if index == 0 { XCTAssertEqual(object as? String, "WORLD") } else { XCTAssertNil(object) }
                rows += 1
            }
            XCTAssertEqual(rows, 2)
        }

        let flushed = expectation(description: "flushTransactions")
        writer.asyncReadWrite { transaction in transaction.removeObject(forKey: "n1", inCollection: "drafts") }
        writer.flushTransactions(withCompletionQueue: nil) { flushed.fulfill() }
        wait(for: [flushed], timeout: 60)
        writer.read { transaction in XCTAssertFalse(transaction.hasObject(forKey: "n1", inCollection: "drafts")) }
    }

    func testViewTransactionLookupsAndMappingArithmetic() throws {
        let manager = try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("lookups.sqlite")))
        for (i, conversation) in ["a", "a", "a", "b"].enumerated() {
            manager.save(Message(uniqueId: "m\(i)", conversationId: conversation, text: "t\(i)", timestamp: Double(i), isOutgoing: false),
                         unread: i == 1)
        }
        let mappings = YapDatabaseViewMappings(groups: ["a", "b", "z"], view: kView_MessagesByConversation)
        mappings.setIsReversed(true, forGroup: "a")
        mappings.setIsDynamicSectionForAllGroups(true)
        XCTAssertTrue(mappings.isDynamicSectionForAllGroups() && mappings.isDynamicSection(forGroup: "z"))
        let connection = manager.uiDatabaseConnection
        connection.beginLongLivedReadTransaction()
        connection.read { transaction in mappings.update(with: transaction) }
        XCTAssertEqual(mappings.visibleGroups(), ["a", "b"])
        XCTAssertEqual(mappings.section(forGroup: "b"), 1)
        XCTAssertEqual(mappings.section(forGroup: "z"), UInt(NSNotFound))
        XCTAssertEqual(mappings.index(forRow: 0, inSection: 0), 2, "reversed: row 0 is the group's last index")
        XCTAssertEqual(mappings.row(forIndex: 2, inGroup: "a"), 0)
        XCTAssertEqual(mappings.indexPath(forIndex: 0, inGroup: "b"), IndexPath(row: 0, section: 1))
        XCTAssertFalse(mappings.isEmpty())
        let copy = mappings.copy() as! YapDatabaseViewMappings
        copy.setIsReversed(false, forGroup: "a")
        XCTAssertTrue(mappings.isReversed(forGroup: "a") && !copy.isReversed(forGroup: "a"), "the copy is independent")
        XCTAssertEqual(copy.numberOfItemsInAllGroups(), 4)

        connection.read { transaction in
            guard let view = transaction.ext(kView_MessagesByConversation) as? YapDatabaseViewTransaction else { return XCTFail() }
            XCTAssertEqual(view.key(at: 0, inGroup: "a"), "m0")
            XCTAssertEqual(view.collection(at: 0, inGroup: "b"), kCollection_Messages)
            XCTAssertNil(view.key(at: 5, inGroup: "a"))
            XCTAssertEqual((view.metadata(at: 1, inGroup: "a") as? MessageMeta)?.unread, true)
            XCTAssertEqual((view.metadata(at: IndexPath(row: 1, section: 0), with: mappings) as? MessageMeta)?.unread, true)
            XCTAssertEqual((view.metadata(atRow: 1, inSection: 0, with: mappings) as? MessageMeta)?.unread, true)
            XCTAssertTrue(view.isEmptyGroup("z") && !view.isEmptyGroup("a"))
            XCTAssertEqual(view.versionTag(), MessagesByConversationView.versionTag)
            var row: UInt = 99, section: UInt = 99
            XCTAssertTrue(view.getRow(&row, section: &section, forKey: "m0", inCollection: kCollection_Messages, with: mappings))
            XCTAssertEqual([section, row], [0, 2], "m0 is index 0 of reversed group a: its last row")
            XCTAssertEqual(view.getCollectionKey(atIndexPath: IndexPath(row: 0, section: 0), withMappings: mappings)?.1, "m2")
            XCTAssertEqual(view.getCollectionKey(forRow: 0, section: 1, withMappings: mappings)?.1, "m3")
            var groups: [String] = []
            view.enumerateGroups { group, stop in groups.append(group) }
            XCTAssertEqual(groups.sorted(), ["a", "b"])
            let auto = view as? YapDatabaseAutoViewTransaction
            let first: UInt? = auto?.findFirstMatch(inGroup: "a", using: .withObjectBlock { _, _, object in
                ((object as? Message)?.timestamp ?? 0) < 1 ? .orderedAscending : .orderedSame
            })
            XCTAssertEqual(first, 1)
        }
        let viewConnection = try XCTUnwrap(connection.ext(kView_MessagesByConversation) as? YapDatabaseAutoViewConnection)
        XCTAssertEqual(viewConnection.autoView.versionTag, MessagesByConversationView.versionTag)
        XCTAssertTrue(viewConnection.parent is MessagesByConversationView)
        XCTAssertEqual(viewConnection.autoView.options.allowedCollections?.isAllowed(kCollection_Contacts), false)
        XCTAssertTrue(viewConnection.autoView.options.isPersistent)
    }

    /// `hasChanges(forGroup:in:)` as inbox screens use it: only commits that changed that
    /// conversation's rows count.
    func testHasChangesForGroupFollowsTheGroupsACommitTouched() throws {
        let manager = try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("groups.sqlite")))
        let connection = manager.uiDatabaseConnection
        connection.beginLongLivedReadTransaction()
        let viewConnection = try XCTUnwrap(connection.ext(kView_MessagesByConversation) as? YapDatabaseViewConnection)
        func commit(_ body: (YapDatabaseReadWriteTransaction) -> Void) -> [Notification] {
            manager.rwDatabaseConnection.readWrite { transaction in body(transaction) }
            return connection.beginLongLivedReadTransaction()
        }
        func message(_ id: String, _ conversation: String, _ time: Double) -> Message {
            Message(uniqueId: id, conversationId: conversation, text: id, timestamp: time, isOutgoing: false)
        }

        var notifications = commit { $0.setObject(message("m1", "alice", 1), forKey: "m1", inCollection: kCollection_Messages) }
        XCTAssertTrue(viewConnection.hasChanges(forGroup: "alice", in: notifications))
        XCTAssertFalse(viewConnection.hasChanges(forGroup: "bob", in: notifications))
        XCTAssertTrue(viewConnection.hasChanges(forAnyGroups: ["bob", "alice"], in: notifications))

        notifications = commit { $0.setObject(message("m2", "bob", 2), forKey: "m2", inCollection: kCollection_Messages) }
        XCTAssertEqual([viewConnection.hasChanges(forGroup: "alice", in: notifications),
                        viewConnection.hasChanges(forGroup: "bob", in: notifications)], [false, true])

        notifications = commit { $0.setObject(message("m1", "bob", 3), forKey: "m1", inCollection: kCollection_Messages) }
        XCTAssertTrue(viewConnection.hasChanges(forGroup: "alice", in: notifications), "m1 left alice")
        XCTAssertTrue(viewConnection.hasChanges(forGroup: "bob", in: notifications), "m1 entered bob")

        notifications = commit { $0.touchObject(forKey: "m2", inCollection: kCollection_Messages) }
        XCTAssertEqual([viewConnection.hasChanges(forGroup: "alice", in: notifications),
                        viewConnection.hasChanges(forGroup: "bob", in: notifications)], [false, true])

        notifications = commit { $0.setObject(Contact(name: "Carol"), forKey: "carol", inCollection: kCollection_Contacts) }
        XCTAssertFalse(viewConnection.hasChanges(forAnyGroups: ["alice", "bob"], in: notifications), "the view did not change")

        notifications = commit { $0.removeAllObjectsInAllCollections() }
        XCTAssertTrue(viewConnection.hasChanges(forGroup: "bob", in: notifications))
        XCTAssertFalse(viewConnection.hasChanges(forGroup: "alice", in: notifications), "alice was already empty")
    }
}
