import Foundation
import Testing
import YapDB
import TestSupport

/// A view places a transaction's new rows together (sorted among themselves, then merged into
/// each group), which must give exactly the order that placing them one by one gives: each
/// new row after its equals, in arrival order; an updated row kept at its index while it still
/// sorts between its neighbours, else moved (also to another group). Seeded runs of large
/// transactions (many rows with equal sort values, updates that change group, removals, reads
/// in the middle of a transaction) are checked against a model that places one row at a time.
@Suite struct ViewBatchPlacementTests {
    struct Item: Codable, Equatable {
        /// 0–2: groups "g0"–"g2"; 3: not in the view.
        var group: Int
        /// The sort value (few values: many equals).
        var score: Int
    }

    static func configure(_ database: YapDatabase) {
        database.registerCodableSerialization(Item.self, forCollection: "items")
    }

    static func view() -> YapDatabaseAutoView {
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, object in
            (object as? Item).flatMap { $0.group < 3 ? "g\($0.group)" : nil }
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            let a = (o1 as! Item).score, b = (o2 as! Item).score
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1")
    }

    static let groups = ["g0", "g1", "g2"]

    /// The view placing one row at a time.
    struct Model {
        var items: [String: Item] = [:]
        var lists: [String: [String]] = ["g0": [], "g1": [], "g2": []]

        mutating func place(_ key: String, _ item: Item) {
            guard item.group < 3 else { return }
            let group = "g\(item.group)"
            let list = lists[group]!
            // After its equals.
            let index = list.firstIndex { items[$0]!.score > item.score } ?? list.count
            lists[group]!.insert(key, at: index)
        }

        mutating func take(_ key: String) {
            guard let item = items[key], item.group < 3 else { return }
            lists["g\(item.group)"]!.removeAll { $0 == key }
        }

        mutating func set(_ key: String, _ item: Item) {
            if let old = items[key], old.group == item.group, old.group < 3 {
                let list = lists["g\(old.group)"]!
                let index = list.firstIndex(of: key)!
                let fits = (index == 0 || items[list[index - 1]]!.score <= item.score)
                    && (index == list.count - 1 || items[list[index + 1]]!.score >= item.score)
                if fits {
                    items[key] = item
                    return
                }
            }
            take(key)
            items[key] = item
            place(key, item)
        }

        mutating func remove(_ key: String) {
            take(key)
            items[key] = nil
        }
    }

    static func lists(_ tx: YapDatabaseReadTransaction) -> [String: [String]] {
        let view = tx.ext("view") as! YapDatabaseViewTransaction
        var lists: [String: [String]] = [:]
        for group in groups {
            var keys: [String] = []
            view.iterateKeys(inGroup: group) { _, key, _, _ in keys.append(key) }
            #expect(keys.count == Int(view.numberOfItems(inGroup: group)))
            lists[group] = keys
        }
        return lists
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func largeTransactionsPlaceRowsAsOneByOneWould(seed: UInt64) throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        #expect(fixture.database.register(Self.view(), withName: "view"))
        let connection = fixture.database.newConnection()
        var rng = SeededRandom(seed: seed)
        func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var model = Model()
        var nextKey = 0
        for step in 0..<30 {
            var next = model
            let rollBack = random(10) == 0
            connection.readWrite { tx in
                // Mostly new rows: the first transactions fill empty groups, later ones merge
                // into groups that already hold rows.
                for _ in 0..<(1 + random(step < 3 ? 400 : 120)) {
                    let item = Item(group: random(4), score: random(6))
                    switch random(100) {
                    case 0..<65:
                        let key = String(format: "k%05d", nextKey)
                        nextKey += 1
                        tx.setObject(item, forKey: key, inCollection: "items")
                        next.set(key, item)
                    case 65..<85 where !next.items.isEmpty:
                        let key = next.items.keys.sorted()[random(next.items.count)]
                        tx.setObject(item, forKey: key, inCollection: "items")
                        next.set(key, item)
                    case 85..<95 where !next.items.isEmpty:
                        let key = next.items.keys.sorted()[random(next.items.count)]
                        tx.removeObject(forKey: key, inCollection: "items")
                        next.remove(key)
                    case 95..<100:
                        #expect(Self.lists(tx) == next.lists, "step \(step): a read inside the transaction sees every row placed")
                    default:
                        break
                    }
                }
                if rollBack { tx.rollback() }
            }
            if !rollBack { model = next }
            let lists = connection.read { Self.lists($0) }
            #expect(lists == model.lists, "step \(step): the view holds the model's rows in the model's order")
        }
        // Reopened: the written pages hold the same order.
        try fixture.reopen(configure: Self.configure)
        #expect(fixture.database.register(Self.view(), withName: "view"))
        #expect(fixture.database.newConnection().read { Self.lists($0) } == model.lists)
    }

    /// A group that already holds rows gets a batch that lands before, between and after them,
    /// with equal sort values: the new rows go after their equals, in arrival order.
    @Test func aBatchMergesIntoAGroupAfterItsEquals() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        #expect(fixture.database.register(Self.view(), withName: "view"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for (key, score) in [("a", 1), ("b", 3), ("c", 3), ("d", 5)] {
                tx.setObject(Item(group: 0, score: score), forKey: key, inCollection: "items")
            }
        }
        connection.readWrite { tx in
            for (key, score) in [("e", 5), ("f", 0), ("g", 3), ("h", 9), ("i", 3), ("j", 1)] {
                tx.setObject(Item(group: 0, score: score), forKey: key, inCollection: "items")
            }
        }
        #expect(connection.read { Self.lists($0)["g0"] } == ["f", "a", "j", "b", "c", "g", "i", "d", "e", "h"])
    }

    /// The view's change set for a batch: every new row is an insert at its final place.
    @Test func aBatchIsReportedAsInserts() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        #expect(fixture.database.register(Self.view(), withName: "view"))
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in tx.setObject(Item(group: 0, score: 2), forKey: "a", inCollection: "items") }
        let mappings = YapDatabaseViewMappings(groups: ["g0"], view: "view")
        ui.beginLongLivedReadTransaction()
        ui.read { mappings.update(with: $0) }
        writer.readWrite { tx in
            tx.setObject(Item(group: 0, score: 3), forKey: "b", inCollection: "items")
            tx.setObject(Item(group: 0, score: 1), forKey: "c", inCollection: "items")
            tx.setObject(Item(group: 0, score: 2), forKey: "d", inCollection: "items")
        }
        let notifications = ui.beginLongLivedReadTransaction()
        let viewConnection = ui.ext("view") as! YapDatabaseViewConnection
        #expect(viewConnection.hasChanges(for: notifications))
        #expect(viewConnection.numberOfRawChanges(for: notifications) == 3)
        let (_, rows) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
        let described = rows.map { "\($0.type) \($0.collectionKey.key) \($0.finalIndex)" }.sorted()
        #expect(described == ["insert b 3", "insert c 0", "insert d 2"])
    }
}
