import Testing
import YapDBSimulatedDisk
@testable import YapDBEngine

/// A state made of one `ExtensionTree` behind the engine's door (`ExtensionTreesState`): the
/// engine writes, publishes and copies its pages; the root bytes are a tag byte and the root.
struct DoorState: ExtensionTreesState {
    var tree: ExtensionTree

    var extensionTrees: [ExtensionTree] { [tree] }

    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = [7]
        roots[0].append(to: &bytes)
        return bytes
    }

    func mapExtensionTrees(_ transform: (Int, ExtensionTree) -> ExtensionTree) -> DoorState {
        DoorState(tree: transform(0, tree))
    }

    init(tree: ExtensionTree) { self.tree = tree }

    init?(claimed: ClaimedExtensionRoots) {
        var root: ExtensionTreeRoot?
        claimed.rootBytes.withUnsafeBytes { raw in
            var cursor = 1
            guard raw.first == 7, let read = ExtensionTreeRoot.read(raw, &cursor), cursor == raw.count else { return }
            root = read
        }
        guard let root else { return nil }
        tree = ExtensionTree(root: root, in: claimed)
    }
}

/// `ExtensionTree`: get, put, remove, a batch, ordered walks and counts over key ranges, every
/// failure an `EngineError`; its pages survive a checkpoint and a reopen.
@Suite struct ExtensionTreeDoorTests {
    static func key(_ i: Int) -> [UInt8] { Array("k\(1000 + i)".utf8) }

    @Test func aTreeBehindTheDoorReadsWritesAndSurvivesAReopen() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        var engine = try Engine.open(path: "/db/main", options: options)
        _ = try engine.write { tx in
            var state = DoorState(tree: ExtensionTree(emptyLike: tx.keydir))
            for i in 0..<300 { try state.tree.upsert(Self.key(i), [UInt8(i % 256)]) }
            #expect(try state.tree.remove(Self.key(5)) == [5])
            #expect(try state.tree.remove(Self.key(5)) == nil, "a second removal finds nothing")
            try state.tree.apply([(key: Self.key(6), value: nil), (key: Self.key(7), value: [70])])
            tx.extensions["door"] = state
            tx.markChanged()
        }
        try engine.checkpoint()
        try engine.close()

        engine = try Engine.open(path: "/db/main", options: options)
        let claimed = try #require(engine.claimExtensionRoots("door"))
        let state = try #require(DoorState(claimed: claimed))
        #expect(state.tree.count == 298)
        try state.validateTrees()
        var seven: [UInt8] = []
        #expect(try state.tree.withValue(forKey: Self.key(7)) { seven = Array($0) })
        #expect(seven == [70])
        #expect(try !state.tree.withValue(forKey: Self.key(6)) { _ in })
        // [k1004, k1010): k1004, k1007, k1008, k1009 (k1005 and k1006 are gone).
        var walked: [String] = []
        try state.tree.forEach(from: Self.key(4), below: Self.key(10)) { key, _ in
            walked.append(String(decoding: key, as: UTF8.self))
            return true
        }
        #expect(walked == ["k1004", "k1007", "k1008", "k1009"])
        #expect(try state.tree.count(from: Self.key(4), below: Self.key(10)) == 4)
        #expect(try state.tree.count(from: Self.key(290), below: nil) == 10)
        var backwards: [String] = []
        try state.tree.forEach(from: nil, below: nil, reversed: true) { key, _ in
            backwards.append(String(decoding: key, as: UTF8.self))
            return backwards.count < 2
        }
        #expect(backwards == ["k1299", "k1298"])
        try engine.close()
    }

    /// The walks a secondary index and a full-text index make: bounds inclusive or not, walks
    /// from either end, positions, the first and last entry, and the same reads of a tree in an
    /// array in place, on unwritten nodes and on written, mapped pages after a reopen.
    @Test func keyRangesPositionsAndEdgesWithBoundsOfEitherKind() throws {
        func names(_ trees: [ExtensionTree], _ index: Int, _ lower: KeyBound?, _ upper: KeyBound?,
                   reversed: Bool = false) throws -> [String] {
            var viaTree: [String] = [], viaArray: [String] = []
            try trees[index].forEachInKeyRange(from: lower, to: upper, reversed: reversed) { key, _ in
                viaTree.append(String(decoding: key, as: UTF8.self))
                return true
            }
            try trees.forEachInKeyRange(ofTree: index, from: lower, to: upper, reversed: reversed) { key, _ in
                viaArray.append(String(decoding: key, as: UTF8.self))
                return true
            }
            #expect(viaTree == viaArray, "a tree in an array walks as the tree itself")
            return viaTree
        }
        func check(_ trees: [ExtensionTree]) throws {
            let tree = trees[1]
            #expect(try names(trees, 1, KeyBound(Self.key(10)), KeyBound(Self.key(13))) == ["k1010", "k1011", "k1012", "k1013"])
            #expect(try names(trees, 1, KeyBound(Self.key(10), inclusive: false), KeyBound(Self.key(13), inclusive: false))
                    == ["k1011", "k1012"])
            #expect(try names(trees, 1, KeyBound(Self.key(10)), KeyBound(Self.key(12)), reversed: true) == ["k1012", "k1011", "k1010"])
            #expect(try names(trees, 1, nil, KeyBound(Self.key(1), inclusive: false)) == ["k1000"])
            #expect(try names(trees, 1, KeyBound(Self.key(199), inclusive: false), nil).isEmpty)
            #expect(try tree.positions(from: KeyBound(Self.key(10)), to: KeyBound(Self.key(13), inclusive: false)) == 10..<13)
            #expect(try tree.positions(from: nil, to: nil).count == 200)
            var first = "", last = ""
            #expect(try trees.withEdgeEntry(ofTree: 1, last: false) { key, _ in first = String(decoding: key, as: UTF8.self) })
            #expect(try tree.withEdgeEntry(last: true) { key, _ in last = String(decoding: key, as: UTF8.self) })
            #expect((first, last) == ("k1000", "k1199"))
            #expect(try tree.firstEntry()?.key == Self.key(0))
            #expect(try tree.value(forKey: Self.key(42)) == [42] && tree.contains(Self.key(42)))
            #expect(try tree.value(forKey: Self.key(200)) == nil && !tree.contains(Self.key(200)))
            #expect(try !trees.withEdgeEntry(ofTree: 0, last: true) { _, _ in }, "an empty tree has no edge entry")
        }
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        var engine = try Engine.open(path: "/db/main", options: options)
        _ = try engine.write { tx in
            var state = DoorState(tree: ExtensionTree(emptyLike: tx.keydir))
            for i in 0..<200 { try state.tree.upsert(Self.key(i), [UInt8(i)]) }
            try check([ExtensionTree(emptyLike: tx.keydir), state.tree])
            tx.extensions["door"] = state
            tx.markChanged()
        }
        try engine.checkpoint()
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: options)
        let claimed = try #require(engine.claimExtensionRoots("door"))
        let state = try #require(DoorState(claimed: claimed))
        try check([ExtensionTree(emptyIn: claimed), state.tree])
        let mapped = try #require([ExtensionTree(emptyIn: claimed), state.tree].mappedTree(ofTree: 1), "written pages are mapped")
        var lastKey: [UInt8] = []
        #expect(try mapped.withEdgeEntry(last: true) { key, _ in lastKey = Array(key) })
        #expect(lastKey == Self.key(199))
        try engine.close()
    }

    @Test func anEntryTooLargeForAPageIsTooLarge() throws {
        var tree = ExtensionTree()
        #expect(throws: Never.self) { try tree.upsert([1], [2]) }
        do throws(EngineError) {
            try tree.upsert([UInt8](repeating: 1, count: tree.maximumEntrySize + 1), [])
            Issue.record("an over-long entry was stored")
        } catch {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
        #expect(tree.count == 1, "nothing changed")
        guard case .corrupted = EngineError.damagedExtensionEntry else { Issue.record("damage is corrupted"); return }
        guard case .corrupted = EngineError.extensionTreeCountMismatch(expected: 2, found: 1) else {
            Issue.record("a count that disagrees is corrupted")
            return
        }
    }
}
