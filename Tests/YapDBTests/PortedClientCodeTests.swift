import Foundation
import Testing
import YapDB   // the only change from the YapDatabase original: `import YapDatabase`

// Client code written the way apps use YapDatabase's Swift API, unchanged but for the import.

struct Book: Codable, Equatable {
    let id: String
    var title: String
    var author: String
    var pages: Int
}

struct BookMetadata: Codable, Equatable {
    var lastOpened: Date
}

final class BookStore {
    let database: YapDatabase
    let uiConnection: YapDatabaseConnection
    let bgConnection: YapDatabaseConnection

    init?(url: URL) {
        guard let database = YapDatabase(url: url) else { return nil }
        database.registerCodableSerialization(Book.self, metadata: BookMetadata.self, forCollection: "books")
        self.database = database
        uiConnection = database.newConnection()
        uiConnection.objectCacheLimit = 500
        uiConnection.beginLongLivedReadTransaction()
        bgConnection = database.newConnection()
    }

    func save(_ books: [Book], completion: @escaping @Sendable () -> Void) {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        bgConnection.asyncReadWrite({ transaction in
            for book in books {
                transaction.setObject(book, forKey: book.id, inCollection: "books", withMetadata: BookMetadata(lastOpened: now))
            }
        }, completionBlock: completion)
    }

    func titles(completion: @escaping @Sendable ([String]) -> Void) {
        bgConnection.asyncRead { transaction in
            var titles: [String] = []
            transaction.iterateKeysAndObjects(inCollection: "books") { (key: String, book: Book, stop: inout Bool) in
                titles.append(book.title)
            }
            completion(titles.sorted())
        }
    }

    func book(_ id: String) -> Book? {
        var book: Book?
        uiConnection.read { transaction in
            book = transaction.object(forKey: id, inCollection: "books") as? Book
        }
        return book
    }

    func refreshUI() -> [Notification] {
        uiConnection.beginLongLivedReadTransaction()
    }
}

@Suite struct PortedClientCodeTests {
    @Test func yapDatabaseStyleClientCodeRunsUnchanged() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(BookStore(url: directory.appendingPathComponent("books.sqlite")))

        let saved = DispatchSemaphore(value: 0)
        store.save([Book(id: "1", title: "Dune", author: "Herbert", pages: 412),
                    Book(id: "2", title: "Emma", author: "Austen", pages: 474)]) { saved.signal() }
        saved.wait()

        #expect(store.book("1") == nil, "the UI connection sits on its long-lived snapshot")
        let notifications = store.refreshUI()
        #expect(notifications.count == 1)
        #expect(store.uiConnection.hasChange(forKey: "1", inCollection: "books", in: notifications))
        #expect(store.book("1") == Book(id: "1", title: "Dune", author: "Herbert", pages: 412))

        let listed = DispatchSemaphore(value: 0)
        let result = TitlesBox()
        store.titles { titles in
            result.titles = titles
            listed.signal()
        }
        listed.wait()
        #expect(result.titles == ["Dune", "Emma"])

        store.bgConnection.readWrite { transaction in
            if var book = transaction.object(forKey: "2", inCollection: "books") as? Book {
                book.pages += 1
                transaction.replaceObject(book, forKey: "2", inCollection: "books")
            }
        }
        store.bgConnection.read { transaction in
            let metadata = transaction.metadata(forKey: "2", inCollection: "books") as? BookMetadata
            #expect(metadata?.lastOpened == Date(timeIntervalSince1970: 1_700_000_000))
            #expect((transaction.object(forKey: "2", inCollection: "books") as? Book)?.pages == 475)
        }
    }

    final class TitlesBox: @unchecked Sendable {
        var titles: [String] = []
    }
}
