import Foundation
import XCTest
import YapDB

/// The startup order of apps that observe `YapDatabaseModified` on the main queue while a
/// background connection writes and the main thread writes too (the ZeroDark.cloud framework's
/// pattern). XCTest runs these on the main thread, which drives the main queue by running the
/// main run loop, as an app's does.
final class PortingNotificationTests: PortingTestCase {
    /// What the main-queue observer saw; touched on the main thread only.
    final class Received: @unchecked Sendable {
        var snapshots: [UInt64] = []
    }

    func testMainQueueObserverWithCommitsFromTheMainThreadAndABackgroundThread() throws {
        XCTAssertTrue(Thread.isMainThread)
        // If commits waited for the main thread this test would deadlock with the main thread
        // inside a commit; the watchdog turns that into a failure (the process stops) instead
        // of a run that never ends.
        let watchdog = DispatchWorkItem {
            fatalError("PortingNotificationTests: no progress in 300 s (a commit is waiting for the main queue)")
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300, execute: watchdog)
        defer { watchdog.cancel() }

        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("startup.sqlite")))
        let received = Received()
        let observer = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database,
                                                              queue: .main) { notification in
            XCTAssertTrue(Thread.isMainThread)
            received.snapshots.append(notification.userInfo?["snapshot"] as? UInt64 ?? 0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let perThread = 100
        let backgroundConnection = database.newConnection()
        let uiConnection = database.newConnection()
        let backgroundDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<perThread {
                backgroundConnection.readWrite { transaction in
                    transaction.setObject("background \(i)", forKey: "bg\(i)", inCollection: "events")
                }
            }
            backgroundDone.signal()
        }
        for i in 0..<perThread {
            uiConnection.readWrite { transaction in
                transaction.setObject("main \(i)", forKey: "ui\(i)", inCollection: "events")
            }
            if i % 10 == 0 { RunLoop.main.run(until: Date()) }
        }

        let deadline = Date(timeIntervalSinceNow: 120)
        var backgroundFinished = false
        while Date() < deadline {
            if !backgroundFinished { backgroundFinished = backgroundDone.wait(timeout: .now()) == .success }
            if backgroundFinished && received.snapshots.count >= 2 * perThread { break }
            RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01))
        }
        XCTAssertTrue(backgroundFinished, "the background commits returned")
        // Anything still queued would arrive now: nothing more may come.
        RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.1))
        XCTAssertEqual(received.snapshots, (1...UInt64(2 * perThread)).map { $0 }, "every commit once, in commit order")
        XCTAssertEqual(database.snapshot, UInt64(2 * perThread))
        uiConnection.read { transaction in
            XCTAssertEqual(transaction.numberOfKeys(inCollection: "events"), UInt(2 * perThread))
        }
    }

    struct Contact: Codable {
        var username: String
        var displayName: String
    }

    /// The startup order of the issue: a view, a full-text index, then a search results view on
    /// both, each registered asynchronously with its completion on the main queue, while the
    /// main thread already writes and observes. Registrations run in the order made.
    func testStartupRegistersAViewTheFullTextIndexAndTheResultsViewInOrder() throws {
        XCTAssertTrue(Thread.isMainThread)
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("search.sqlite")))
        database.registerCodableSerialization(Contact.self, forCollection: "contacts")
        let received = Received()
        let observer = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database,
                                                              queue: .main) { notification in
            received.snapshots.append(notification.userInfo?["snapshot"] as? UInt64 ?? 0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        final class Results: @unchecked Sendable { var registered: [String] = [] }   // main thread only
        let results = Results()
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, object in object is Contact ? "contacts" : nil }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, a, _, _, b in
            ((a as? Contact)?.displayName ?? "").compare((b as? Contact)?.displayName ?? "")
        }
        database.asyncRegister(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "AllContacts",
                               completionQueue: .main) { ready in results.registered.append("AllContacts \(ready)") }
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { transaction, dict, collection, key, object in
            guard let contact = object as? Contact else { return }
            dict["username"] = contact.username
            dict["displayName"] = contact.displayName
        }
        database.asyncRegister(YapDatabaseFullTextSearch(columnNames: ["username", "displayName"], handler: handler),
                               withName: "ContactsFTS", completionQueue: .main) { ready in results.registered.append("ContactsFTS \(ready)") }
        database.asyncRegister(YapDatabaseSearchResultsView(fullTextSearchName: "ContactsFTS", parentViewName: "AllContacts",
                                                            versionTag: nil, options: nil),
                               withName: "ContactSearch", completionQueue: .main) { ready in results.registered.append("ContactSearch \(ready)") }
        let connection = database.newConnection()
        connection.readWrite { transaction in
            for (user, name) in [("alice@example.com", "Alice"), ("bob@example.com", "Bob"), ("alfred@example.org", "Alfred")] {
                transaction.setObject(Contact(username: user, displayName: name), forKey: user, inCollection: "contacts")
            }
        }

        let deadline = Date(timeIntervalSinceNow: 120)
        while results.registered.count < 3 && Date() < deadline { RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01)) }
        XCTAssertEqual(results.registered, ["AllContacts true", "ContactsFTS true", "ContactSearch true"])
        connection.readWrite { transaction in
            (transaction.ext("ContactSearch") as? YapDatabaseSearchResultsViewTransaction)?.performSearch(for: "al*")
        }
        connection.read { transaction in
            let search = transaction.ext("ContactSearch") as? YapDatabaseSearchResultsViewTransaction
            XCTAssertEqual(search?.numberOfItems(inGroup: "contacts"), 2, "Alice and Alfred")
        }
        let snapshot = database.snapshot
        while received.snapshots.last != snapshot && Date() < deadline { RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01)) }
        XCTAssertEqual(received.snapshots, (1...snapshot).map { $0 }, "every commit once, in commit order")
    }
}
