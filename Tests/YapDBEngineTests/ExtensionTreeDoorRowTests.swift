import Testing
import YapDBSimulatedDisk
import TestSupport
@testable import YapDBEngine

/// A state made of one keyed tree and one row tree behind the engine's door
/// (`ExtensionTreesState` over `AnyExtensionTree`): the engine writes, publishes, copies and
/// checks both; the root bytes are a tag byte and the two roots.
struct MixedDoorState: ExtensionTreesState {
    var names: ExtensionTree
    var order: ExtensionRowTree

    var extensionTrees: [AnyExtensionTree] { [.keyed(names), .rows(order)] }

    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = [9]
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    func mapExtensionTrees(_ transform: (Int, AnyExtensionTree) -> AnyExtensionTree) -> MixedDoorState {
        MixedDoorState(names: transform(0, .keyed(names)).keyed, order: transform(1, .rows(order)).rows)
    }

    /// The keyed tree holds as many entries as the row tree.
    func validateState() throws(EngineError) {
        guard names.count == order.count else { throw .extensionTreeCountMismatch(expected: names.count, found: order.count) }
    }

    init(names: ExtensionTree, order: ExtensionRowTree) {
        self.names = names
        self.order = order
    }

    /// The roots a claim hands back, or nil when the bytes are not this state's.
    static func roots(_ claimed: ClaimedExtensionRoots) -> (names: ExtensionTreeRoot, order: ExtensionTreeRoot)? {
        claimed.rootBytes.withUnsafeBytes { raw in
            var cursor = 1
            guard raw.first == 9, let names = ExtensionTreeRoot.read(raw, &cursor), let order = ExtensionTreeRoot.read(raw, &cursor),
                  cursor == raw.count else { return nil }
            return (names, order)
        }
    }

    init?(claimed: ClaimedExtensionRoots) {
        guard let roots = Self.roots(claimed) else { return nil }
        let pages = ExtensionTreePages(claimed)
        self.init(names: pages.keyedTree(root: roots.names), order: pages.rowTree(root: roots.order))
    }
}

/// `ExtensionRowTree`: positional inserts, removals and replacements, the searches with the
/// caller's comparison, ordered walks both ways, every failure an `EngineError`; a state made
/// of both kinds of tree is written, adopted, copied, verified and reopened by the engine.
@Suite struct ExtensionTreeDoorRowTests {
    /// The sort value of a row id in these tests: runs of equal values, so the searches meet ties.
    static func value(_ rowid: UInt64) -> UInt64 { rowid % 37 }

    /// How the row `rowid` compares to the stored `existing` by `value` (the door's convention).
    static func compare(_ rowid: UInt64) -> (UInt64) -> RowComparison {
        { existing in
            value(rowid) < value(existing) ? .orderedAscending : value(rowid) > value(existing) ? .orderedDescending : .orderedSame
        }
    }

    @Test func aRowTreeKeepsPositionsAndSearchesWithTheCallersComparison() throws {
        var tree = ExtensionRowTree()
        var model: [UInt64] = []
        // Each row after its equals, as a view places rows; 3,000 row ids make a few levels.
        var rng = SeededRandom(seed: 24)
        for _ in 0..<3_000 {
            let rowid = rng.next() >> 20
            let index = try tree.insertionIndex(Self.compare(rowid))
            let expected = model.lastIndex { Self.value($0) <= Self.value(rowid) }.map { $0 + 1 } ?? 0
            #expect(index == expected)
            try tree.insert(rowid, at: index)
            model.insert(rowid, at: index)
        }
        #expect(tree.count == model.count)
        #expect(tree.height > 1, "the tree has branches, so the searches descend")
        #expect(try tree.rowids() == model)
        #expect(tree.first == model.first)
        #expect(try tree.last() == model.last)
        for index in stride(from: 0, to: model.count, by: 97) { #expect(try tree.element(at: index) == model[index]) }

        // Searches: the run of rows equal to a value, and a row found in its run.
        let probe = model[1_234]
        let run = try tree.findRange(Self.compare(probe))
        #expect(run == model.firstIndex { Self.value($0) == Self.value(probe) }!..<(model.lastIndex { Self.value($0) == Self.value(probe) }! + 1))
        #expect(try tree.lowerBound(Self.compare(probe)) == run.lowerBound)
        #expect(try tree.upperBound(Self.compare(probe)) == run.upperBound)
        #expect(try tree.partitionIndex { Self.value($0) > Self.value(probe) } == run.upperBound)
        #expect(try tree.firstIndex(of: probe, Self.compare(probe)) == model.firstIndex(of: probe))
        #expect(try tree.firstIndex(of: UInt64.max, Self.compare(probe)) == nil, "a row id not stored is not found")

        // Ordered walks from a position, forward and reversed, stopping when asked.
        var forward: [UInt64] = []
        try tree.forEach(in: 100..<110) { index, rowid in
            #expect(model[index] == rowid)
            forward.append(rowid)
            return true
        }
        #expect(forward == Array(model[100..<110]))
        var backward: [Int] = []
        try tree.forEach(in: 0..<model.count, reversed: true) { index, _ in
            backward.append(index)
            return backward.count < 3
        }
        #expect(backward == [model.count - 1, model.count - 2, model.count - 3])

        // Changes at a position.
        #expect(try tree.remove(at: 500) == model.remove(at: 500))
        #expect(try tree.replace(at: 42, with: 7) == model[42])
        model[42] = 7
        try tree.append(99)
        model.append(99)
        #expect(try tree.rowids() == model)
        try tree.validate()
        #expect(tree.writtenRoot == nil, "a tree never written has no written root")
        tree.removeAll()
        #expect(tree.isEmpty && tree.first == nil)
    }

    @Test func aStateOfBothKindsIsWrittenAdoptedCopiedAndReopened() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        var engine = try Engine.open(path: "/db/main", options: options)
        let rowids = (0..<400).map { UInt64($0 * 3 + 1) }
        _ = try engine.write { tx in
            let pages = ExtensionTreePages(emptyLike: tx.keydir)
            var state = MixedDoorState(names: pages.keyedTree(), order: pages.rowTree())
            for rowid in rowids {
                try state.names.upsert(Array("row\(rowid)".utf8), [UInt8(rowid % 256)])
                try state.order.insert(rowid, at: 0)   // newest first
            }
            #expect(state.unwrittenPageCount > 2, "both trees hold unwritten nodes")
            tx.extensions["mixed"] = state
            tx.markChanged()
        }
        try engine.checkpoint()
        // The checkpoint's adoption released the written nodes: both trees are as written.
        let adopted = try engine.write { tx in tx.extensions["mixed"] as? MixedDoorState }.value
        let state = try #require(adopted)
        #expect(state.names.writtenRoot != nil && state.order.writtenRoot != nil)
        #expect(state.unwrittenPageCount == 0)
        #expect(try state.extensionWrittenPageCount() > 2)
        try engine.compactIndex()
        #expect(try engine.verify().problems == [])
        try engine.close()

        engine = try Engine.open(path: "/db/main", options: options)
        let claimed = try #require(engine.claimExtensionRoots("mixed"))
        let reopened = try #require(MixedDoorState(claimed: claimed))
        try reopened.validateExtensionPages()
        #expect(reopened.names.count == rowids.count)
        #expect(try reopened.order.rowids() == rowids.reversed())
        var four: [UInt8] = []
        #expect(try reopened.names.withValue(forKey: Array("row4".utf8)) { four = Array($0) })
        #expect(four == [4])

        // A row tree opened on a keyed tree's pages: damage, reported as the engine's error.
        let roots = try #require(MixedDoorState.roots(claimed))
        let wrong = ExtensionTreePages(claimed).rowTree(root: roots.names)
        do throws(EngineError) {
            _ = try wrong.element(at: 0)
            Issue.record("a keyed page was read as a row tree's")
        } catch {
            guard case .corrupted = error else { Issue.record("expected corrupted, got \(error)"); return }
        }
        try engine.close()
    }
}
