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
    }
}
