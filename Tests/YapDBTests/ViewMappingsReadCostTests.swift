import Foundation
import Testing
import TestSupport
@testable import YapDB

/// `getChanges(forNotifications:withMappings:)` reads again only the groups the commits changed
/// (their notes say which), and gives exactly what reading every group gives.
@Suite struct ViewMappingsReadCostTests {
    typealias Task = ViewTests.Task

    /// Tasks grouped by hundreds of priority ("g0"…"g3"; 400 and up left out), sorted by
    /// priority then title.
    static func database() throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, object in
            guard let task = object as? Task, task.priority < 400 else { return nil }
            return "g\(task.priority / 100)"
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            let a = o1 as! Task, b = o2 as! Task
            if a.priority != b.priority { return a.priority < b.priority ? .orderedAscending : .orderedDescending }
            return a.title < b.title ? .orderedAscending : (a.title == b.title ? .orderedSame : .orderedDescending)
        }
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "v"))
        return fixture
    }

    static let groups = ["g0", "g1", "g2", "g3"]

    /// Pairs of identically configured mappings: plain sections with a reversed group, a
    /// range and a drawing dependency; dynamic sections chosen by a group filter; consolidated.
    static func mappingPairs() -> [(fast: YapDatabaseViewMappings, full: YapDatabaseViewMappings)] {
        func plain() -> YapDatabaseViewMappings {
            let m = YapDatabaseViewMappings(groups: groups, view: "v")
            m.setIsReversed(true, forGroup: "g1")
            m.setRangeOptions(.flexibleRange(withLength: 6, offset: 1, from: .end), forGroup: "g2")
            m.setCellDrawingDependencyForNeighboringCell(withOffset: 1, forGroup: "g0")
            m.setIsDynamicSection(true, forGroup: "g3")
            return m
        }
        func filtered() -> YapDatabaseViewMappings {
            let m = YapDatabaseViewMappings(groupFilterBlock: { group, _ in group != "g2" },
                                            sortBlock: { a, b, _ in a > b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending) },
                                            view: "v")
            m.setIsDynamicSectionForAllGroups(true)
            m.setIsReversed(true, forGroup: "g0")
            return m
        }
        func consolidated() -> YapDatabaseViewMappings {
            let m = YapDatabaseViewMappings(groups: groups, view: "v")
            m.setAutoConsolidateGroupsThreshold(12, withName: "all")
            m.setIsReversed(true, forGroup: "g3")
            return m
        }
        return [plain, filtered, consolidated].map { make in
            let full = make()
            full.readsEveryGroup = true
            return (make(), full)
        }
    }

    static func describe(_ changes: (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange])) -> [String] {
        changes.sectionChanges.map { "section \($0.type) \($0.index) \($0.group)" }
            + changes.rowChanges.map { "\(ViewChangeSetTests.describe($0)) \($0.changes.rawValue)" }.sorted()
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func notesGiveWhatReadingEveryGroupGives(seed: UInt64) throws {
        let fixture = try Self.database()
        let database = fixture.database!
        let writer = database.newConnection(), ui = database.newConnection()
        var random = SeededRandom(seed: seed)
        writer.readWrite { tx in
            for i in 0..<20 {
                tx.setObject(Task(title: "t\(i)", priority: Int.random(in: 0..<400, using: &random), done: false),
                             forKey: "k\(i)", inCollection: "tasks")
            }
        }
        ui.beginLongLivedReadTransaction()
        let pairs = Self.mappingPairs()
        ui.read { tx in for pair in pairs { pair.fast.update(with: tx); pair.full.update(with: tx) } }
        var fastPaths = 0
        for round in 0..<40 {
            // One to three commits between updates, each a few random changes.
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                writer.readWrite { tx in
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let key = "k\(Int.random(in: 0..<30, using: &random))"
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0..<2: tx.removeObject(forKey: key, inCollection: "tasks")
                        case 2: tx.touchObject(forKey: key, inCollection: "tasks")
                        case 3:   // changed in place: a field the view neither groups nor sorts by
                            if var task = tx.object(forKey: key, inCollection: "tasks") as? Task {
                                task.done.toggle()
                                tx.setObject(task, forKey: key, inCollection: "tasks")
                            }
                        default:  // inserted, or moved within or between groups, or out of the view
                            tx.setObject(Task(title: key, priority: Int.random(in: 0..<450, using: &random), done: false),
                                         forKey: key, inCollection: "tasks")
                        }
                    }
                }
            }
            let notifications = ui.beginLongLivedReadTransaction()
            let connection = ui.ext("v") as! YapDatabaseViewConnection
            for (n, pair) in pairs.enumerated() {
                let readBefore = pair.fast.keysRead, fullBefore = pair.full.keysRead
                let fast = Self.describe(connection.getChanges(forNotifications: notifications, withMappings: pair.fast))
                let full = Self.describe(connection.getChanges(forNotifications: notifications, withMappings: pair.full))
                #expect(fast == full, "seed \(seed) round \(round) mappings \(n)")
                if pair.fast.keysRead - readBefore < pair.full.keysRead - fullBefore { fastPaths += 1 }
                ui.read { tx in
                    for group in Self.groups {
                        let shown = (tx.ext("v") as! YapDatabaseViewTransaction).count(group)
                        #expect(pair.fast.count(group) == (pair.fast.allGroups.contains(group) ? Int(shown) : 0))
                    }
                }
            }
        }
        #expect(fastPaths > 0, "some updates skipped unchanged groups")
    }

    /// An update after a commit that changed one small group reads that group's keys only, not
    /// the 10,000 rows of the other.
    @Test func updateReadsOnlyTheChangedGroups() throws {
        let fixture = try Self.database()
        let database = fixture.database!
        let writer = database.newConnection(), ui = database.newConnection()
        writer.readWrite { tx in
            for i in 0..<10_000 { tx.setObject(Task(title: "big\(i)", priority: 50, done: false), forKey: "big\(i)", inCollection: "tasks") }
            for i in 0..<3 { tx.setObject(Task(title: "s\(i)", priority: 150, done: false), forKey: "s\(i)", inCollection: "tasks") }
        }
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: Self.groups, view: "v")
        ui.read { tx in mappings.update(with: tx) }
        #expect(mappings.keysRead == 10_003)

        writer.readWrite { tx in tx.setObject(Task(title: "s9", priority: 120, done: false), forKey: "s9", inCollection: "tasks") }
        // A commit that leaves the view alone (the row is left out of it).
        writer.readWrite { tx in tx.setObject(Task(title: "other", priority: 500, done: false), forKey: "x", inCollection: "tasks") }
        let notifications = ui.beginLongLivedReadTransaction()
        let changes = (ui.ext("v") as! YapDatabaseViewConnection).getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(changes.rowChanges.map(ViewChangeSetTests.describe) == ["insert s9 → [1, 0]"])
        #expect(mappings.keysRead == 10_003 + 4, "only g1 (4 rows) read again")

        // A commit the caller did not pass: every group is read again.
        writer.readWrite { tx in tx.setObject(Task(title: "s8", priority: 130, done: false), forKey: "s8", inCollection: "tasks") }
        ui.beginLongLivedReadTransaction()
        _ = (ui.ext("v") as! YapDatabaseViewConnection).getChanges(forNotifications: [], withMappings: mappings)
        #expect(mappings.keysRead == 10_003 + 4 + 10_005)
    }
}
