import Foundation
import XCTest
import YapDB

/// Database, connection and transaction code as YapDatabase's Swift users write it: counts as
/// `UInt`, `replace`, `extension`/`ext`, the overlay's `iterate…` forms, the `ObjCBool` forms,
/// the permitted-transaction constants, and the 3.x forms that still compile (with a warning).
final class PortingDatabaseTests: PortingTestCase {
    func testContactsStoreWithCountsReplaceAndIteration() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("contacts.sqlite")))
        database.registerCodableSerialization(Contact.self, forCollection: kCollection_Contacts)
        let connection = database.newConnection()
        connection.readWrite { transaction in
            for (key, name) in [("c1", "Ada"), ("c2", "Grace"), ("c3", "Linus")] {
                transaction.setObject(Contact(name: name), forKey: key, inCollection: kCollection_Contacts,
                                      withMetadata: key == "c2" ? "favourite" : nil)
            }
            transaction.replace(Contact(name: "Ada L."), forKey: "c1", inCollection: kCollection_Contacts)
            transaction.replace(Contact(name: "Nobody"), forKey: "c9", inCollection: kCollection_Contacts)
        }
        connection.read { transaction in
            let count: UInt = transaction.numberOfKeys(inCollection: kCollection_Contacts)
            XCTAssertEqual(count, 3, "replace never creates a row")
            let all: UInt = transaction.numberOfKeysInAllCollections()
            XCTAssertEqual(all, 3)
            let collections: UInt = transaction.numberOfCollections()
            XCTAssertEqual(collections, 1)
            XCTAssertEqual((transaction.object(forKey: "c1", inCollection: kCollection_Contacts) as? Contact)?.name, "Ada L.")

            var names: [String] = []
            transaction.iterateKeysAndObjects(inCollection: kCollection_Contacts, using: { (key, contact: Contact, stop) in
                names.append(contact.name)
            }, filter: { key in key != "c3" })
            XCTAssertEqual(names.sorted(), ["Ada L.", "Grace"], "the filter comes after the block and sees keys")

            var metadataByKey: [String: String?] = [:]
            transaction.iterateKeysAndMetadata(inCollection: kCollection_Contacts) { (key, metadata: String?, stop) in
                metadataByKey[key] = metadata
            }
            XCTAssertEqual(metadataByKey, ["c1": nil, "c2": "favourite", "c3": nil], "rows without metadata are visited with nil")

            var found: [UInt: String] = [:]
            transaction.enumerateObjects(forKeys: ["c3", "zz", "c1"], inCollection: kCollection_Contacts) { (keyIndex, object, stop) in
                found[keyIndex] = (object as? Contact)?.name ?? "-"
                if keyIndex == 1 { stop.pointee = true }
            }
            XCTAssertEqual(found, [0: "Linus", 1: "-"], "the ObjCBool stop pointer stops the enumeration")
        }
    }

    func testExtensionAndExtOnConnectionsAndTransactions() throws {
        let manager = try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("ext.sqlite")))
        manager.save(Message(uniqueId: "m1", conversationId: "x", text: "hi", timestamp: 1, isOutgoing: true), unread: false)
        let connection = manager.database.newConnection()
        XCTAssertTrue(connection.extension(kView_MessagesByConversation) is YapDatabaseViewConnection)
        XCTAssertTrue(connection.ext(kView_MessagesByConversation) is YapDatabaseAutoViewConnection)
        XCTAssertNil(connection.extension("nope"))
        connection.read { transaction in
            let viaExtension = transaction.extension(kView_MessagesByConversation) as? YapDatabaseAutoViewTransaction
            let viaExt = transaction.ext(kView_MessagesByConversation) as? YapDatabaseAutoViewTransaction
            XCTAssertNotNil(viaExtension)
            XCTAssertTrue(viaExtension === viaExt, "one extension transaction per transaction")
            XCTAssertEqual(viaExt?.numberOfItems(inGroup: "x"), 1)
        }
        connection.readWrite { transaction in
            let viewTransaction = transaction.extension(kView_MessagesByConversation) as? YapDatabaseAutoViewTransaction
            XCTAssertEqual(viewTransaction?.numberOfItemsInAllGroups(), 1)
        }
    }

    func testPermittedTransactionConstantsKeepYapDatabaseValues() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("permitted.sqlite")))
        let connection = database.newConnection()
        connection.permittedTransactions = [.YDB_MainThreadOnly, .YDB_SyncReadTransaction]
        XCTAssertEqual(connection.permittedTransactions.rawValue, 1 << 4 | 1 << 0)
        XCTAssertEqual(YapDatabasePermittedTransactions.YDB_AnyTransaction.rawValue, 0b1111)
        XCTAssertEqual(YapDatabasePermittedTransactions.YDB_AnyReadTransaction, [.YDB_SyncReadTransaction, .YDB_AsyncReadTransaction])
        XCTAssertEqual(YapDatabasePermittedTransactions.YDB_AnyReadWriteTransaction,
                       [.YDB_SyncReadWriteTransaction, .YDB_AsyncReadWriteTransaction])
        XCTAssertEqual(YapDatabasePermittedTransactions.YDB_AnySyncTransaction, [.YDB_SyncReadTransaction, .YDB_SyncReadWriteTransaction])
        XCTAssertEqual(YapDatabasePermittedTransactions.YDB_AnyAsyncTransaction, [.YDB_AsyncReadTransaction, .YDB_AsyncReadWriteTransaction])
        var keys: UInt = 99
        connection.read { transaction in keys = transaction.numberOfKeys(inCollection: nil) }   // main thread, sync read: allowed
        XCTAssertEqual(keys, 0)
    }

    func testWhitelistBlacklistFilterBlock() {
        let onlyMessages = YapWhitelistBlacklist(filterBlock: { item in (item as? String)?.hasPrefix("msg") ?? false })
        XCTAssertTrue(onlyMessages.isAllowed("msg-2024"))
        XCTAssertFalse(onlyMessages.isAllowed("contacts"))
        let everything = YapWhitelistBlacklist(filterBlock: nil)
        XCTAssertTrue(everything.isAllowed("anything"))
    }

    func testDefaultDatabaseOpensAtTheDefaultURL() throws {
        let url = YapDatabase.defaultDatabaseURL()
        let folder = url.deletingLastPathComponent()
        let folderExisted = FileManager.default.fileExists(atPath: folder.path)
        defer {
            if !folderExisted { try? FileManager.default.removeItem(at: folder) }
        }
        func removeDatabaseFiles() throws {
            // The folder is named after the test process; only files of the database are removed.
            guard FileManager.default.fileExists(atPath: folder.path) else { return }
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix(url.lastPathComponent) {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
            }
        }
        try removeDatabaseFiles()   // a leftover of an interrupted run
        do {
            let database = YapDatabase()
            XCTAssertEqual(database.databaseURL, url)
            let connection = database.newConnection()
            connection.readWrite { transaction in transaction.setObject("hello", forKey: "k", inCollection: nil) }
            connection.read { transaction in XCTAssertEqual(transaction.object(forKey: "k", inCollection: nil) as? String, "hello") }
            try database.close()
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path))
        try removeDatabaseFiles()
    }

    // MARK: YapDatabase 3.x forms (deprecated: these lines compile with a warning naming the 4.x spelling)

    func testYapDatabase3FormsStillCompileAndWork() throws {
        let path = directory.appendingPathComponent("legacy.sqlite").path
        do {
            let database = try XCTUnwrap(YapDatabase(path: path))
            database.registerCodableSerialization(Contact.self, forCollection: kCollection_Contacts)
            let connection = database.newConnection()
            connection.readWrite { transaction in
                transaction.setObject(Contact(name: "Ada"), forKey: "c1", inCollection: kCollection_Contacts, withMetadata: "vip")
                transaction.setObject(Contact(name: "Bob"), forKey: "c2", inCollection: kCollection_Contacts)
            }
            connection.read { transaction in
                var names: [String] = []
                transaction.enumerateKeysAndObjects(inCollection: kCollection_Contacts, using: { (key: String, object: Any, stop: UnsafeMutablePointer<ObjCBool>) in
                    if let contact = object as? Contact { names.append(contact.name) }
                })
                XCTAssertEqual(names.sorted(), ["Ada", "Bob"])
                var rows = 0
                var vip: [String] = []
                transaction.enumerateRows(inCollection: kCollection_Contacts) { (key, object, metadata, stop) in
                    rows += 1
                    if metadata as? String == "vip" { vip.append(key) }
                    stop.pointee = true
                }
                XCTAssertEqual(rows, 1, "stop.pointee = true stops after the first row")
                XCTAssertLessThanOrEqual(vip.count, 1)
            }
            try database.close()
        }
        let options = YapDatabaseOptions()
        options.corruptAction = .fail
        let reopened = try XCTUnwrap(YapDatabase(path: path, options: options))
        reopened.registerCodableSerialization(Contact.self, forCollection: kCollection_Contacts)
        reopened.newConnection().read { transaction in
            XCTAssertEqual(transaction.numberOfKeys(inCollection: kCollection_Contacts), 2)
        }
    }

    func testGetSectionChanges3FormFillsNSArrays() throws {
        let manager = try XCTUnwrap(ChatDatabaseManager(url: directory.appendingPathComponent("legacy-view.sqlite")))
        let mappings = YapDatabaseViewMappings(groups: ["x"], view: kView_MessagesByConversation)
        let connection = manager.uiDatabaseConnection
        _ = connection.beginLongLivedReadTransaction()
        connection.read { transaction in mappings.update(with: transaction) }
        manager.save(Message(uniqueId: "m1", conversationId: "x", text: "hi", timestamp: 1, isOutgoing: true), unread: false)

        let notifications = connection.beginLongLivedReadTransaction()
        let viewConnection = try XCTUnwrap(connection.ext(kView_MessagesByConversation) as? YapDatabaseViewConnection)
        var sectionChanges = NSArray()
        var rowChanges = NSArray()
        viewConnection.getSectionChanges(&sectionChanges, rowChanges: &rowChanges, for: notifications, with: mappings)
        XCTAssertEqual(sectionChanges.count, 0)
        let rows = try XCTUnwrap(rowChanges as? [YapDatabaseViewRowChange])
        XCTAssertEqual(rows.map { "\($0.type) \($0.finalIndex) \($0.collectionKey.key)" }, ["insert 0 m1"])

        manager.delete("m1")
        var optionalSections: NSArray?
        var optionalRows: NSArray?
        viewConnection.getSectionChanges(&optionalSections, rowChanges: &optionalRows,
                                         for: connection.beginLongLivedReadTransaction(), with: mappings)
        let deleted = try XCTUnwrap(optionalRows as? [YapDatabaseViewRowChange])
        XCTAssertEqual(deleted.map { "\($0.type) \($0.originalIndex)" }, ["delete 0"])
        XCTAssertEqual(optionalSections?.count, 0)
    }
}
