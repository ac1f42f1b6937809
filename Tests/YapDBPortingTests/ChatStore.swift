import Foundation
import YapDB   // the only line a YapDatabase app changes: it was `import YapDatabase`
#if canImport(UIKit)
import UIKit   // IndexPath(row:section:)
#endif

// A chat app's storage layer, written the way apps write it against YapDatabase's Swift API:
// a singleton-ish manager with a read-write connection for the background and a UI connection
// on a long-lived read transaction, a packaged view subclass, and mappings per screen.

let kCollection_Messages = "messages"
let kCollection_Contacts = "contacts"
let kView_MessagesByConversation = "messagesByConversation"

struct Message: Codable, Equatable {
    var uniqueId: String
    var conversationId: String
    var text: String
    var timestamp: Double
    var isOutgoing: Bool
}

struct MessageMeta: Codable, Equatable {
    var unread: Bool
}

struct Contact: Codable, Equatable {
    var name: String
}

/// Messages grouped by conversation, oldest first: the view the chat screens use, packaged as a
/// subclass the way apps do it.
final class MessagesByConversationView: YapDatabaseAutoView, @unchecked Sendable {
    static let versionTag = "1"

    override init() {
        let grouping = YapDatabaseViewGrouping.withObjectBlock { (transaction, collection, key, object) -> String? in
            guard let message = object as? Message else { return nil }
            return message.conversationId
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock {
            (transaction, group, collection1, key1, object1, collection2, key2, object2) -> ComparisonResult in
            guard let m1 = object1 as? Message, let m2 = object2 as? Message else { return .orderedSame }
            if m1.timestamp != m2.timestamp { return m1.timestamp < m2.timestamp ? .orderedAscending : .orderedDescending }
            return key1 < key2 ? .orderedAscending : (key1 == key2 ? .orderedSame : .orderedDescending)
        }
        let options = YapDatabaseViewOptions()
        options.allowedCollections = YapWhitelistBlacklist(filterBlock: { item in
            (item as? String) == kCollection_Messages
        })
        super.init(grouping: grouping, sorting: sorting, versionTag: Self.versionTag, options: options)
    }
}

final class ChatDatabaseManager {
    let database: YapDatabase
    let uiDatabaseConnection: YapDatabaseConnection
    let rwDatabaseConnection: YapDatabaseConnection

    init?(url: URL) {
        guard let database = YapDatabase(url: url) else { return nil }
        self.database = database
        database.registerCodableSerialization(Message.self, metadata: MessageMeta.self, forCollection: kCollection_Messages)
        database.registerCodableSerialization(Contact.self, forCollection: kCollection_Contacts)
        guard database.register(MessagesByConversationView(), withName: kView_MessagesByConversation) else { return nil }

        uiDatabaseConnection = database.newConnection()
        uiDatabaseConnection.objectCacheLimit = 400
        uiDatabaseConnection.metadataCacheLimit = 400
        uiDatabaseConnection.name = "uiDatabaseConnection"
        uiDatabaseConnection.permittedTransactions = [.YDB_MainThreadOnly, .YDB_SyncReadTransaction]   // no async reads
        uiDatabaseConnection.enableExceptionsForImplicitlyEndingLongLivedReadTransaction()
        uiDatabaseConnection.beginLongLivedReadTransaction()

        rwDatabaseConnection = database.newConnection()
        rwDatabaseConnection.permittedTransactions = [.YDB_AnyReadWriteTransaction, .YDB_AnyReadTransaction]
        rwDatabaseConnection.name = "rwDatabaseConnection"
    }

    func save(_ message: Message, unread: Bool) {
        rwDatabaseConnection.readWrite { transaction in
            transaction.setObject(message, forKey: message.uniqueId, inCollection: kCollection_Messages,
                                  withMetadata: MessageMeta(unread: unread))
        }
    }

    func markRead(_ messageId: String) {
        rwDatabaseConnection.readWrite { transaction in
            if transaction.hasObject(forKey: messageId, inCollection: kCollection_Messages) {
                transaction.replaceMetadata(MessageMeta(unread: false), forKey: messageId, inCollection: kCollection_Messages)
            }
        }
    }

    func edit(_ messageId: String, text: String) {
        rwDatabaseConnection.readWrite { transaction in
            guard var message = transaction.object(forKey: messageId, inCollection: kCollection_Messages) as? Message else { return }
            message.text = text
            transaction.replace(message, forKey: messageId, inCollection: kCollection_Messages)
        }
    }

    func delete(_ messageId: String) {
        rwDatabaseConnection.readWrite { transaction in
            transaction.removeObject(forKey: messageId, inCollection: kCollection_Messages)
        }
    }

    func unreadCount() -> Int {
        var count = 0
        rwDatabaseConnection.read { transaction in
            transaction.iterateKeysAndMetadata(inCollection: kCollection_Messages) { (key, meta: MessageMeta?, stop) in
                if meta?.unread == true { count += 1 }
            }
        }
        return count
    }
}

/// A screen's list of rows: a UITableView data source driven by mappings, as a view controller
/// writes it (the table itself is the stand-in `TableViewModel`).
final class ConversationListDataSource {
    let connection: YapDatabaseConnection
    let mappings: YapDatabaseViewMappings

    init(connection: YapDatabaseConnection, mappings: YapDatabaseViewMappings) {
        self.connection = connection
        self.mappings = mappings
        connection.read { transaction in
            mappings.update(with: transaction)
        }
    }

    // UITableViewDataSource
    func numberOfSections() -> Int {
        Int(mappings.numberOfSections())
    }

    func numberOfRows(inSection section: Int) -> Int {
        Int(mappings.numberOfItems(inSection: UInt(section)))
    }

    func message(at indexPath: IndexPath) -> Message? {
        var message: Message?
        connection.read { transaction in
            guard let viewTransaction = transaction.ext(kView_MessagesByConversation) as? YapDatabaseAutoViewTransaction else { return }
            message = viewTransaction.object(at: indexPath, with: mappings) as? Message
        }
        return message
    }

    func title(forHeaderInSection section: Int) -> String? {
        mappings.group(forSection: UInt(section))
    }

    /// Every row's message id, section by section: what the table shows after `reloadData()`.
    func allRows() -> [[String]] {
        (0..<numberOfSections()).map { section in
            (0..<numberOfRows(inSection: section)).map { row in
                message(at: IndexPath(row: row, section: section))?.uniqueId ?? "<nil>"
            }
        }
    }

    /// The `YapDatabaseModified` handler of the screen: move the UI connection forward and get
    /// the changes to animate; nil when the view did not change.
    func databaseModified() -> (sections: [YapDatabaseViewSectionChange], rows: [YapDatabaseViewRowChange])? {
        let notifications = connection.beginLongLivedReadTransaction()
        guard let viewConnection = connection.ext(kView_MessagesByConversation) as? YapDatabaseViewConnection else { return nil }
        if !viewConnection.hasChanges(for: notifications) {
            connection.read { transaction in
                mappings.update(with: transaction)
            }
            return nil
        }
        let (sectionChanges, rowChanges) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
        if sectionChanges.isEmpty && rowChanges.isEmpty { return nil }
        return (sectionChanges, rowChanges)
    }
}

#if !canImport(UIKit)
extension IndexPath {
    /// UIKit's `IndexPath(row:section:)`, for the platforms without UIKit.
    init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }
}
#endif
