import Foundation
import Synchronization
import Testing
import YapDB
import TestSupport

/// `YapDatabaseBlockInvoke`: each extension runs its block again for exactly the changes its
/// options name (counted per change kind), and skipping never leaves the extension's contents
/// different from what its blocks give (checked against a model over random changes).
///
/// Rows live in collection "c": the object an `Int`, the metadata a `String`.
@Suite struct BlockInvokeTests {
    /// Counts block calls.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        /// The calls made while `body` ran.
        func calls(during body: () -> Void) -> Int {
            let before = count.withLock { $0 }
            body()
            return count.withLock { $0 } - before
        }
    }

    /// The ways a transaction changes or touches an existing row, with the options each one
    /// matches (the correspondence YapDatabase's header documents).
    enum Change: String, CaseIterable, CustomStringConvertible {
        case setObject, setObjectWithMetadata, replaceObject, replaceMetadata, touchObject, touchMetadata, touchRow

        var description: String { rawValue }

        var matches: YapDatabaseBlockInvoke {
            switch self {
            case .setObject, .setObjectWithMetadata: [.ifObjectModified, .ifMetadataModified]
            case .replaceObject: .ifObjectModified
            case .replaceMetadata: .ifMetadataModified
            case .touchObject: .ifObjectTouched
            case .touchMetadata: .ifMetadataTouched
            case .touchRow: [.ifObjectTouched, .ifMetadataTouched]
            }
        }

        /// Applies the change to row `key`, writing `object` and `metadata` where it writes.
        func apply(_ tx: YapDatabaseReadWriteTransaction, _ key: String, object: Int, metadata: String) {
            switch self {
            case .setObject: tx.setObject(object, forKey: key, inCollection: "c")
            case .setObjectWithMetadata: tx.setObject(object, forKey: key, inCollection: "c", withMetadata: metadata)
            case .replaceObject: tx.replaceObject(object, forKey: key, inCollection: "c")
            case .replaceMetadata: tx.replaceMetadata(metadata, forKey: key, inCollection: "c")
            case .touchObject: tx.touchObject(forKey: key, inCollection: "c")
            case .touchMetadata: tx.touchMetadata(forKey: key, inCollection: "c")
            case .touchRow: tx.touchRow(forKey: key, inCollection: "c")
            }
        }
    }

    /// The options the counting tests run with: none, each flag alone, and all.
    static let optionSets: [YapDatabaseBlockInvoke] = [
        [], .ifObjectModified, .ifMetadataModified, .ifObjectTouched, .ifMetadataTouched, .any,
    ]

    /// Three rows k0…k2 (objects 0…2, metadata "m"), then for each change kind: the block calls
    /// it caused on k1 (same values written back, so nothing moves).
    static func callsPerChange(_ database: YapDatabase, _ counter: Counter) -> [Change: Int] {
        let connection = database.newConnection()
        connection.readWrite { tx in
            for i in 0..<3 { tx.setObject(i, forKey: "k\(i)", inCollection: "c", withMetadata: "m") }
        }
        var calls: [Change: Int] = [:]
        for change in Change.allCases {
            calls[change] = counter.calls {
                connection.readWrite { tx in change.apply(tx, "k1", object: 1, metadata: "m") }
            }
            // setObject without metadata cleared it: put it back for the next change.
            connection.readWrite { tx in tx.replaceMetadata("m", forKey: "k1", inCollection: "c") }
        }
        return calls
    }

    /// Expects a block that runs again to have run once per change (or, with `once` false,
    /// at least once: a sorting compares with several rows), and a skipped one not at all.
    static func expectRuns(_ calls: [Change: Int], for options: YapDatabaseBlockInvoke, once: Bool = true) {
        for change in Change.allCases {
            let runs = !options.isDisjoint(with: change.matches), n = calls[change]!
            #expect(once ? n == (runs ? 1 : 0) : (n > 0) == runs, "\(change) with options \(options.rawValue): \(n) calls")
        }
    }

    /// The keys of `group` of the view registered as `view`, in order.
    static func keys(_ database: YapDatabase, _ view: String, _ group: String) -> [String] {
        database.newConnection().read { tx in
            var keys: [String] = []
            (tx.ext(view) as! YapDatabaseViewTransaction).iterateKeys(inGroup: group) { _, key, _, _ in keys.append(key) }
            return keys
        }
    }

    // MARK: Spellings and defaults

    @Test func theOptionsAndBlockTypesHaveYapDatabasesBits() {
        #expect(YapDatabaseBlockInvoke.ifObjectModified.rawValue == 1)
        #expect(YapDatabaseBlockInvoke.ifMetadataModified.rawValue == 2)
        #expect(YapDatabaseBlockInvoke.ifObjectTouched.rawValue == 4)
        #expect(YapDatabaseBlockInvoke.ifMetadataTouched.rawValue == 8)
        #expect(YapDatabaseBlockInvoke.any.rawValue == 15)
        #expect(YapDatabaseBlockInvoke.defaultForBlockTypeWithObject == [.ifObjectModified, .ifObjectTouched])
        #expect(YapDatabaseBlockInvoke.defaultForBlockTypeWithMetadata == [.ifMetadataModified, .ifMetadataTouched])
        #expect(YapDatabaseBlockInvoke.defaultForBlockTypeWithRow == .any)
        #expect(YapDatabaseBlockType.objectFlag.rawValue == 1 && YapDatabaseBlockType.metadataFlag.rawValue == 2)
        #expect(YapDatabaseBlockType.withObject.rawValue == 1 && YapDatabaseBlockType.withMetadata.rawValue == 2)
        #expect(YapDatabaseBlockType.withRow.rawValue == 3)
    }

    @Test func thePlainFormsTakeTheDefaultsOfTheirBlockType() {
        let g = (YapDatabaseViewGrouping.withKeyBlock { _, _, _ in nil }, YapDatabaseViewGrouping.withObjectBlock { _, _, _, _ in nil },
                 YapDatabaseViewGrouping.withMetadataBlock { _, _, _, _ in nil }, YapDatabaseViewGrouping.withRowBlock { _, _, _, _, _ in nil })
        #expect([g.0.blockType, g.1.blockType, g.2.blockType, g.3.blockType] == [[], .withObject, .withMetadata, .withRow])
        #expect([g.0.blockInvokeOptions, g.1.blockInvokeOptions, g.2.blockInvokeOptions, g.3.blockInvokeOptions]
                == [[], .defaultForBlockTypeWithObject, .defaultForBlockTypeWithMetadata, .defaultForBlockTypeWithRow])
        let s = YapDatabaseViewSorting.withMetadataBlock { _, _, _, _, _, _, _, _ in .orderedSame }
        #expect(s.blockType == .withMetadata && s.blockInvokeOptions == .defaultForBlockTypeWithMetadata)
        let f = YapDatabaseViewFiltering.withRowBlock { _, _, _, _, _, _ in true }
        #expect(f.blockType == .withRow && f.blockInvokeOptions == .any)
        let h = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, _, _, _, _ in }
        #expect(h.blockType == .withObject && h.blockInvokeOptions == .defaultForBlockTypeWithObject)
        let k = YapDatabaseSecondaryIndexHandler.withKeyBlock { _, _, _, _ in }
        #expect(k.blockType == [] && k.blockInvokeOptions == [])
        #expect(YapDatabaseViewFind.withMetadataBlock { _, _, _ in .orderedSame }.findBlockType == .withMetadata)
        let o = YapDatabaseViewGrouping.withOptions(.ifMetadataTouched, objectBlock: { _, _, _, _ in nil })
        #expect(o.blockType == .withObject && o.blockInvokeOptions == .ifMetadataTouched)
    }

    // MARK: Which changes run each block again

    @Test(arguments: optionSets)
    func theGroupingRunsAgainForTheChangesItsOptionsName(_ options: YapDatabaseBlockInvoke) throws {
        let fixture = try DatabaseFixture()
        let counter = Counter()
        let grouping = YapDatabaseViewGrouping.withOptions(options, rowBlock: { _, _, _, _, _ in
            counter.increment()
            return "all"
        })
        let sorting = YapDatabaseViewSorting.withOptions([], keyBlock: { _, _, _, key1, _, key2 in key1.compare(key2) })
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        Self.expectRuns(Self.callsPerChange(fixture.database, counter), for: options)
        #expect(Self.keys(fixture.database, "v", "all") == ["k0", "k1", "k2"])
    }

    @Test(arguments: optionSets)
    func theSortingRunsAgainForTheChangesItsOptionsName(_ options: YapDatabaseBlockInvoke) throws {
        let fixture = try DatabaseFixture()
        let counter = Counter()
        let grouping = YapDatabaseViewGrouping.withOptions([], keyBlock: { _, _, _ in "all" })
        let sorting = YapDatabaseViewSorting.withOptions(options, rowBlock: { _, _, _, _, o1, _, _, _, o2, _ in
            counter.increment()
            return (o1 as! Int) < (o2 as! Int) ? .orderedAscending : (o1 as! Int) > (o2 as! Int) ? .orderedDescending : .orderedSame
        })
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        Self.expectRuns(Self.callsPerChange(fixture.database, counter), for: options, once: false)
        #expect(Self.keys(fixture.database, "v", "all") == ["k0", "k1", "k2"])
    }

    @Test(arguments: optionSets)
    func theFilterRunsAgainForTheChangesItsOptionsName(_ options: YapDatabaseBlockInvoke) throws {
        let fixture = try DatabaseFixture()
        let counter = Counter()
        let grouping = YapDatabaseViewGrouping.withOptions([], keyBlock: { _, _, _ in "all" })
        let sorting = YapDatabaseViewSorting.withOptions([], keyBlock: { _, _, _, key1, _, key2 in key1.compare(key2) })
        let filtering = YapDatabaseViewFiltering.withOptions(options, rowBlock: { _, _, _, key, _, _ in
            counter.increment()
            return key != "k2"
        })
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "v", filtering: filtering), withName: "f"))
        Self.expectRuns(Self.callsPerChange(fixture.database, counter), for: options)
        #expect(Self.keys(fixture.database, "f", "all") == ["k0", "k1"])
    }

    @Test(arguments: optionSets)
    func theSecondaryIndexHandlerRunsAgainForTheChangesItsOptionsName(_ options: YapDatabaseBlockInvoke) throws {
        let fixture = try DatabaseFixture()
        let counter = Counter()
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("n", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withOptions(options, rowBlock: { _, dict, _, _, object, _ in
            counter.increment()
            dict["n"] = object as? Int
        })
        #expect(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "i"))
        Self.expectRuns(Self.callsPerChange(fixture.database, counter), for: options)
        fixture.database.newConnection().read { tx in
            let index = tx.ext("i") as! YapDatabaseSecondaryIndexTransaction
            #expect(index.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n = ?", parameters: [1])) == 1)
        }
    }

    @Test func anObjectBlockIsNotRunAgainForAMetadataChangeByDefault() throws {
        let fixture = try DatabaseFixture()
        let grouped = Counter(), handled = Counter()
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, object in
            grouped.increment()
            return "g\((object as! Int) % 2)"
        }
        let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, key1, _, key2 in key1.compare(key2) }
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("n", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            handled.increment()
            dict["n"] = object as? Int
        }
        #expect(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "i"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in tx.setObject(1, forKey: "a", inCollection: "c") }
        #expect(grouped.calls { connection.readWrite { tx in tx.replaceMetadata("x", forKey: "a", inCollection: "c") } } == 0)
        #expect(handled.calls { connection.readWrite { tx in tx.touchMetadata(forKey: "a", inCollection: "c") } } == 0)
        #expect(grouped.calls { connection.readWrite { tx in tx.replaceObject(2, forKey: "a", inCollection: "c") } } == 1)
        connection.read { tx in
            #expect((tx.ext("v") as! YapDatabaseViewTransaction).group(forKey: "a", inCollection: "c") == "g0")
            let index = tx.ext("i") as! YapDatabaseSecondaryIndexTransaction
            #expect(index.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n = 2", parameters: [])) == 1)
        }
    }

    // MARK: What a skipped block keeps

    @Test func aBlockOnInsertOnlyKeepsItsFirstAnswer() throws {
        let fixture = try DatabaseFixture()
        let grouping = YapDatabaseViewGrouping.withOptions([], objectBlock: { _, _, _, object in "g\(object as! Int)" })
        let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, key1, _, key2 in key1.compare(key2) }
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("n", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withOptions([], objectBlock: { _, dict, _, _, object in dict["n"] = object as? Int })
        #expect(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "i"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in tx.setObject(1, forKey: "a", inCollection: "c") }
        connection.readWrite { tx in
            tx.setObject(2, forKey: "a", inCollection: "c")
            tx.touchRow(forKey: "a", inCollection: "c")
        }
        connection.read { tx in
            #expect((tx.ext("v") as! YapDatabaseViewTransaction).group(forKey: "a", inCollection: "c") == "g1", "the group of the insert")
            let index = tx.ext("i") as! YapDatabaseSecondaryIndexTransaction
            #expect(index.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n = 1", parameters: [])) == 1, "the value of the insert")
        }
        // Removed and inserted again: a new row, so the blocks run.
        connection.readWrite { tx in
            tx.removeObject(forKey: "a", inCollection: "c")
            tx.setObject(3, forKey: "a", inCollection: "c")
        }
        connection.read { tx in
            #expect((tx.ext("v") as! YapDatabaseViewTransaction).group(forKey: "a", inCollection: "c") == "g3")
        }
    }

    @Test func aFilterRunsAgainWhenItsRowChangesGroupWhateverItsOptions() throws {
        let fixture = try DatabaseFixture()
        let counter = Counter()
        let grouping = YapDatabaseViewGrouping.withMetadataBlock { _, _, _, metadata in metadata as? String }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            (o1 as! Int) < (o2 as! Int) ? .orderedAscending : (o1 as! Int) > (o2 as! Int) ? .orderedDescending : .orderedSame
        }
        let filtering = YapDatabaseViewFiltering.withOptions([], keyBlock: { _, group, _, _ in
            counter.increment()
            return group != "hidden"
        })
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "v", filtering: filtering), withName: "f"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            tx.setObject(1, forKey: "a", inCollection: "c", withMetadata: "shown")
            tx.setObject(5, forKey: "b", inCollection: "c", withMetadata: "shown")
        }
        // The row moves after b in the parent; the filter keeps its answer and the row its place.
        #expect(counter.calls { connection.readWrite { tx in tx.replaceObject(9, forKey: "a", inCollection: "c") } } == 0)
        connection.read { tx in
            let filtered = tx.ext("f") as! YapDatabaseViewTransaction
            #expect(filtered.key(at: 0, inGroup: "shown") == "b" && filtered.key(at: 1, inGroup: "shown") == "a")
        }
        connection.readWrite { tx in tx.removeObject(forKey: "b", inCollection: "c") }
        #expect(counter.calls { connection.readWrite { tx in tx.replaceMetadata("hidden", forKey: "a", inCollection: "c") } } == 1)
        connection.read { tx in #expect((tx.ext("f") as! YapDatabaseViewTransaction).numberOfItemsInAllGroups() == 0) }
        // Out of the parent and back in: filtered again.
        connection.readWrite { tx in tx.replaceMetadata(nil, forKey: "a", inCollection: "c") }
        #expect(counter.calls { connection.readWrite { tx in tx.replaceMetadata("back", forKey: "a", inCollection: "c") } } == 1)
        connection.read { tx in #expect((tx.ext("f") as! YapDatabaseViewTransaction).group(forKey: "a", inCollection: "c") == "back") }
    }

    @Test func aRowLeftInPlaceIsStillReportedAsChanged() throws {
        let fixture = try DatabaseFixture()
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, _ in "all" }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            (o1 as! Int) < (o2 as! Int) ? .orderedAscending : (o1 as! Int) > (o2 as! Int) ? .orderedDescending : .orderedSame
        }
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in for i in 0..<3 { tx.setObject(i, forKey: "k\(i)", inCollection: "c") } }
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: ["all"], view: "v")
        ui.read { tx in mappings.update(with: tx) }
        let view = ui.ext("v") as! YapDatabaseViewConnection
        writer.readWrite { tx in tx.replaceMetadata("note", forKey: "k1", inCollection: "c") }
        let notifications = ui.beginLongLivedReadTransaction()
        #expect(view.hasChanges(forNotifications: notifications), "a metadata change of a row in the view")
        #expect(view.hasChanges(forGroup: "all", in: notifications))
        let (_, rows) = view.getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(rows.count == 1 && rows.first?.type == .update && rows.first?.collectionKey.key == "k1")
    }

    // MARK: Contents stay right

    /// How the model test's view groups and sorts: by the object or by the metadata.
    enum Layout: String, CaseIterable, CustomStringConvertible {
        case groupByMetadataSortByObject, groupByObjectSortByMetadata
        var description: String { rawValue }
    }

    /// Random sets, replacements, touches, removals and inserts; after every commit the view,
    /// the filtered view and the secondary index (all with their blocks' default options) hold
    /// exactly what their blocks give for the rows, and `verify()` agrees.
    @Test(arguments: Layout.allCases)
    func skippedBlocksNeverLeaveARowInTheWrongPlace(_ layout: Layout) throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        // Objects are unique (value * 100 + key number), metadata "g<0…2>-<0…99>-<key number>": sort keys
        // never tie, so the expected order is exact.
        @Sendable func group(_ object: Int, _ metadata: String?) -> String? {
            switch layout {
            case .groupByMetadataSortByObject: metadata.map { String($0.prefix(2)) }
            case .groupByObjectSortByMetadata: metadata == nil ? nil : "g\(object / 100 % 3)"
            }
        }
        @Sendable func sortKey(_ object: Int, _ metadata: String?) -> String {
            switch layout {
            case .groupByMetadataSortByObject: String(format: "%08d", object)
            case .groupByObjectSortByMetadata: (metadata ?? "") + String(format: "%08d", object)
            }
        }
        @Sendable func passes(_ object: Int, group: String) -> Bool { object % 3 != 0 || group == "g0" }
        let grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting
        switch layout {
        case .groupByMetadataSortByObject:
            grouping = .withMetadataBlock { _, _, _, metadata in (metadata as? String).map { String($0.prefix(2)) } }
            sorting = .withObjectBlock { _, _, _, _, o1, _, _, o2 in sortKey(o1 as! Int, nil).compare(sortKey(o2 as! Int, nil)) }
        case .groupByObjectSortByMetadata:
            grouping = .withRowBlock { _, _, _, object, metadata in group(object as! Int, metadata as? String) }
            sorting = .withMetadataBlock { _, _, _, _, m1, _, _, m2 in (m1 as? String ?? "").compare(m2 as? String ?? "") }
        }
        let filtering = YapDatabaseViewFiltering.withObjectBlock { _, group, _, _, object in passes(object as! Int, group: group) }
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("g", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withMetadataBlock { _, dict, _, _, metadata in
            if let metadata = metadata as? String { dict["g"] = String(metadata.prefix(2)) }
        }
        #expect(database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting), withName: "v"))
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "v", filtering: filtering), withName: "f"))
        #expect(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "i"))

        var rng = SeededRandom(seed: 0xB10C_1A7E + UInt64(layout == .groupByMetadataSortByObject ? 0 : 1))
        var model: [String: (object: Int, metadata: String?)] = [:]
        let connection = database.newConnection()
        for round in 0..<60 {
            connection.readWrite { tx in
                for _ in 0..<4 {
                    let n = Int(rng.next() % 12), key = "k\(n)"
                    let object = Int(rng.next() % 50) * 100 + n
                    // The key number at the end: metadata never ties either.
                    let metadata = "g\(rng.next() % 3)-\(String(format: "%02d", Int(rng.next() % 100)))-\(String(format: "%02d", n))"
                    let exists = model[key] != nil
                    switch rng.next() % 9 {
                    case 0: tx.setObject(object, forKey: key, inCollection: "c"); model[key] = (object, nil)
                    case 1, 2: tx.setObject(object, forKey: key, inCollection: "c", withMetadata: metadata); model[key] = (object, metadata)
                    case 3: tx.replaceObject(object, forKey: key, inCollection: "c"); if exists { model[key]!.object = object }
                    case 4, 5: tx.replaceMetadata(metadata, forKey: key, inCollection: "c"); if exists { model[key]!.metadata = metadata }
                    case 6: tx.touchObject(forKey: key, inCollection: "c")
                    case 7: tx.touchRow(forKey: key, inCollection: "c")
                    default: tx.removeObject(forKey: key, inCollection: "c"); model[key] = nil
                    }
                }
            }
            // The expected lists: the blocks applied to the model.
            var expected: [String: [(key: String, sort: String)]] = [:]
            for (key, row) in model {
                guard let g = group(row.object, row.metadata) else { continue }
                expected[g, default: []].append((key, sortKey(row.object, row.metadata)))
            }
            connection.read { tx in
                let view = tx.ext("v") as! YapDatabaseViewTransaction
                let filtered = tx.ext("f") as! YapDatabaseViewTransaction
                let index = tx.ext("i") as! YapDatabaseSecondaryIndexTransaction
                #expect(Set(view.allGroups()) == Set(expected.keys), "round \(round): groups")
                for (g, rows) in expected {
                    let keys = rows.sorted { $0.sort < $1.sort }.map(\.key)
                    var inView: [String] = [], inFiltered: [String] = []
                    view.iterateKeys(inGroup: g) { _, key, _, _ in inView.append(key) }
                    filtered.iterateKeys(inGroup: g) { _, key, _, _ in inFiltered.append(key) }
                    #expect(inView == keys, "round \(round): group \(g) of the view")
                    #expect(inFiltered == keys.filter { passes(model[$0]!.object, group: g) }, "round \(round): group \(g) of the filtered view")
                }
                for g in ["g0", "g1", "g2"] {
                    let indexed = index.numberOfRows(matching: YapDatabaseQuery(string: "WHERE g = ?", parameters: [g]))
                    let rows = model.values.filter { $0.metadata.map { String($0.prefix(2)) } == g }.count
                    #expect(indexed == UInt(rows), "round \(round): rows of the index with g = \(g)")
                }
            }
        }
        let report = try database.verify()
        #expect(report.isValid, "\(report.problems)")
    }
}
