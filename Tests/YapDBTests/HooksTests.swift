import Foundation
import Testing
import YapDB

/// Row hooks: each hook fires with the right arguments for each kind of write, inside the
/// writing transaction; what hooks write commits with the row, or not at all.
@Suite struct HooksTests {
    /// What the hooks saw, in order.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        private var transactions: Set<ObjectIdentifier> = []

        func add(_ entry: String, _ transaction: YapDatabaseReadWriteTransaction) {
            lock.lock()
            entries.append(entry)
            transactions.insert(ObjectIdentifier(transaction))
            lock.unlock()
        }

        /// The entries since the last call, and the transactions they ran in.
        func take() -> (entries: [String], transactions: Set<ObjectIdentifier>) {
            lock.lock()
            defer { entries = []; transactions = []; lock.unlock() }
            return (entries, transactions)
        }
    }

    static func configure(_ database: YapDatabase) {
        for collection in ["s", "t", "log"] {
            database.registerCodableSerialization(String.self, metadata: Int.self, forCollection: collection)
        }
    }

    static func describe(_ flags: YapDatabaseHooksBitMask) -> String {
        let names: [(YapDatabaseHooksBitMask, String)] = [
            (.insertedRow, "inserted"), (.updatedRow, "updated"), (.changedObject, "object"),
            (.changedMetadata, "metadata"), (.touchedObject, "touchedObject"), (.touchedMetadata, "touchedMetadata"),
        ]
        return names.filter { flags.contains($0.0) }.map(\.1).joined(separator: ",")
    }

    /// "value" for a value at hand, "lazy:value" for one read on demand.
    static func describe(_ proxy: YapProxyObject) -> String {
        let loaded = proxy.isRealObjectLoaded
        let value = proxy.realObject.map { "\($0)" } ?? "nil"
        return loaded ? value : "lazy:\(value)"
    }

    /// Hooks logging every call, with the stored object at the time of the call.
    static func loggingHooks(_ log: Log) -> YapDatabaseHooks {
        let hooks = YapDatabaseHooks()
        @Sendable func stored(_ tx: YapDatabaseReadWriteTransaction, _ collection: String, _ key: String) -> String {
            (tx.object(forKey: key, inCollection: collection) as? String) ?? "-"
        }
        hooks.willModifyRow = { tx, collection, key, object, metadata, flags in
            log.add("will \(collection)/\(key) [\(describe(flags))] \(describe(object)) \(describe(metadata)) stored=\(stored(tx, collection, key))", tx)
        }
        hooks.didModifyRow = { tx, collection, key, object, metadata, flags in
            log.add("did \(collection)/\(key) [\(describe(flags))] \(describe(object)) \(describe(metadata)) stored=\(stored(tx, collection, key))", tx)
        }
        hooks.willRemoveRow = { tx, collection, key in log.add("willRemove \(collection)/\(key) stored=\(stored(tx, collection, key))", tx) }
        hooks.didRemoveRow = { tx, collection, key in log.add("didRemove \(collection)/\(key) stored=\(stored(tx, collection, key))", tx) }
        hooks.willRemoveAllRows = { tx in log.add("willRemoveAll rows=\(tx.numberOfKeysInAllCollections())", tx) }
        hooks.didRemoveAllRows = { tx in log.add("didRemoveAll rows=\(tx.numberOfKeysInAllCollections())", tx) }
        return hooks
    }

    @Test func eachHookFiresWithTheRightArgumentsInTheWritingTransaction() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        let log = Log()
        let hooks = Self.loggingHooks(log)
        #expect(database.register(hooks, withName: "hooks"))
        #expect(database.registeredExtension("hooks") === hooks)
        let connection = database.newConnection()
        #expect((connection.ext("hooks") as? YapDatabaseHooksConnection)?.parent === hooks)
        connection.read { tx in #expect(tx.ext("hooks") is YapDatabaseHooksTransaction) }

        /// Runs `body` in a write and returns the log, checking every hook ran in that transaction.
        func logged(_ body: (YapDatabaseReadWriteTransaction) -> Void) -> [String] {
            var id: ObjectIdentifier?
            connection.readWrite { tx in
                id = ObjectIdentifier(tx)
                body(tx)
            }
            let (entries, transactions) = log.take()
            #expect(entries.isEmpty || transactions == [id!], "the hooks get the writing transaction itself")
            return entries
        }

        #expect(logged { $0.setObject("x", forKey: "k", inCollection: "s") } == [
            "will s/k [inserted,object,metadata] x nil stored=-",
            "did s/k [inserted,object,metadata] x nil stored=x",
        ])
        #expect(logged { $0.setObject("y", forKey: "k", inCollection: "s", withMetadata: 7) } == [
            "will s/k [updated,object,metadata] y 7 stored=x",
            "did s/k [updated,object,metadata] y 7 stored=y",
        ])
        #expect(logged { $0.replaceObject("z", forKey: "k", inCollection: "s") } == [
            "will s/k [updated,object] z lazy:7 stored=y",
            "did s/k [updated,object] z lazy:7 stored=z",
        ])
        #expect(logged { $0.replaceMetadata(8, forKey: "k", inCollection: "s") } == [
            "will s/k [updated,metadata] lazy:z 8 stored=z",
            "did s/k [updated,metadata] lazy:z 8 stored=z",
        ])
        #expect(logged { tx in
            tx.touchObject(forKey: "k", inCollection: "s")
            tx.touchMetadata(forKey: "k", inCollection: "s")
            tx.touchRow(forKey: "k", inCollection: "s")
        } == [
            "did s/k [touchedObject] lazy:z lazy:8 stored=z",
            "did s/k [touchedMetadata] lazy:z lazy:8 stored=z",
            "did s/k [touchedObject,touchedMetadata] lazy:z lazy:8 stored=z",
        ], "touches: the did hook only")
        #expect(logged { tx in
            tx.replaceObject("nobody", forKey: "missing", inCollection: "s")
            tx.removeObject(forKey: "missing", inCollection: "s")
        }.isEmpty, "writes that do nothing call no hook")
        #expect(logged { $0.removeObject(forKey: "k", inCollection: "s") } == ["willRemove s/k stored=z", "didRemove s/k stored=-"])

        _ = logged { tx in
            for key in ["a", "b", "c"] { tx.setObject(key, forKey: key, inCollection: "t") }
        }
        #expect(logged { $0.removeObjects(forKeys: ["a", "b"], inCollection: "t") } == [
            "willRemove t/a stored=a", "didRemove t/a stored=-", "willRemove t/b stored=b", "didRemove t/b stored=-",
        ])
        _ = logged { tx in
            for key in ["d", "e"] { tx.setObject(key, forKey: key, inCollection: "t") }
        }
        let cleared = logged { $0.removeAllObjects(inCollection: "t") }
        #expect(Set(cleared) == ["willRemove t/c stored=c", "willRemove t/d stored=d", "willRemove t/e stored=e",
                                 "didRemove t/c stored=-", "didRemove t/d stored=-", "didRemove t/e stored=-"]
                && cleared.count == 6 && cleared.prefix(3).allSatisfy { $0.hasPrefix("willRemove") },
                "clearing a collection: each row, all wills before the clear, all dids after")

        _ = logged { tx in
            tx.setObject("1", forKey: "1", inCollection: "s")
            tx.setObject("2", forKey: "2", inCollection: "t")
        }
        #expect(logged { $0.removeAllObjectsInAllCollections() } == ["willRemoveAll rows=2", "didRemoveAll rows=0"],
                "clearing everything: the remove-all hooks only")

        hooks.allowedCollections = YapWhitelistBlacklist(whitelist: ["s"])
        #expect(logged { tx in
            tx.setObject("x", forKey: "k", inCollection: "t")
            tx.removeObject(forKey: "k", inCollection: "t")
            tx.setObject("x", forKey: "k", inCollection: "s")
        } == [
            "will s/k [inserted,object,metadata] x nil stored=-",
            "did s/k [inserted,object,metadata] x nil stored=x",
        ], "rows of collections not allowed are not reported")

        database.unregisterExtension(withName: "hooks")
        #expect(logged { $0.setObject("y", forKey: "k", inCollection: "s") }.isEmpty, "unregistered: no more calls")
    }

    @Test func whatHooksWriteCommitsWithTheRowAndRollsBackWithIt() throws {
        let fixture = try DatabaseFixture(configure: { database in
            Self.configure(database)
            FilteredViewModel.configure(database)
        })
        let database = fixture.database!
        #expect(database.register(FilteredViewModel.parentView(), withName: "all"))
        let hooks = YapDatabaseHooks()
        hooks.allowedCollections = YapWhitelistBlacklist(whitelist: ["s"])
        hooks.didModifyRow = { tx, collection, key, object, _, flags in
            // An audit row, and a row in a collection the view watches.
            tx.setObject("\(Self.describe(flags)) \(object.realObject ?? "?")", forKey: key, inCollection: "log")
            tx.setObject(FilteredViewModel.Item(score: 3, flag: true), forKey: key, inCollection: "b")
        }
        hooks.willRemoveRow = { tx, _, key in
            tx.removeObject(forKey: key, inCollection: "log")
            tx.removeObject(forKey: key, inCollection: "b")
        }
        #expect(database.register(hooks, withName: "hooks"))
        let writer = database.newConnection(), reader = database.newConnection()
        reader.beginLongLivedReadTransaction()
        let recorder = NotificationRecorder(database)

        writer.readWrite { tx in
            tx.setObject("hello", forKey: "k1", inCollection: "s")
            #expect(tx.object(forKey: "k1", inCollection: "log") as? String == "inserted,object,metadata hello",
                    "the hook's write is visible in the transaction at once")
        }
        reader.read { tx in #expect(tx.object(forKey: "k1", inCollection: "log") == nil, "the old snapshot sees nothing") }
        let notifications = reader.beginLongLivedReadTransaction()
        #expect(notifications.count == 1 && recorder.notifications.count == 1, "one commit")
        let changed = recorder.notifications.last?.userInfo?["objectChanges"] as? Set<YapCollectionKey>
        #expect(changed == Set(["s", "log", "b"].map { YapCollectionKey(collection: $0, key: "k1") }), "the row and the hook's rows in one change set")
        reader.read { tx in
            #expect(tx.object(forKey: "k1", inCollection: "s") as? String == "hello")
            #expect(tx.object(forKey: "k1", inCollection: "log") as? String == "inserted,object,metadata hello")
            #expect(FilteredViewModel.lists(tx, "all")["g0"]!.map(\.description) == ["b/k1"], "views follow hook writes in the same commit")
        }

        writer.readWrite { tx in
            tx.setObject("bye", forKey: "k2", inCollection: "s")
            tx.removeObject(forKey: "k1", inCollection: "s")
            #expect(tx.object(forKey: "k2", inCollection: "log") != nil && tx.object(forKey: "k1", inCollection: "log") == nil)
            tx.rollback()
        }
        #expect(recorder.notifications.count == 1, "a rolled-back transaction notifies nobody")
        writer.read { tx in
            #expect(tx.object(forKey: "k2", inCollection: "s") == nil && tx.object(forKey: "k2", inCollection: "log") == nil,
                    "rollback discards the row and what the hook wrote")
            #expect(tx.object(forKey: "k1", inCollection: "log") != nil && tx.object(forKey: "k1", inCollection: "b") != nil,
                    "and restores what the hook removed")
        }

        writer.readWrite { tx in tx.removeObject(forKey: "k1", inCollection: "s") }
        writer.read { tx in
            #expect(tx.numberOfKeysInAllCollections() == 0, "the remove hook's removals committed with the row")
            #expect((tx.ext("all") as! YapDatabaseViewTransaction).isEmpty())
        }
    }
}
