import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine

/// A minimal extension state on index pages: one keyed tree and a tag.
struct TreeState: PagedExtensionState {
    var tag: String
    var tree: PagedBTree

    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let flush = try pages.flush(tree)
        return ExtensionPagesWritten(rootBytes: Self.rootBytes(tag, tree.root(after: flush)), flushes: [flush])
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let copy = try pages.copy(tree)
        return ExtensionPagesWritten(rootBytes: Self.rootBytes(tag, tree.root(after: copy.flush)), flushes: [copy.flush], detail: copy)
    }

    func adopting(_ written: ExtensionPagesWritten) -> TreeState {
        var state = self
        if let copy = written.detail as? PageCopy { state.tree = tree.remapping(to: copy) } else { state.tree = tree.releasingFlushedNodes() }
        return state
    }

    func reading(from source: any PageSource) -> TreeState {
        TreeState(tag: tag, tree: tree.reading(from: source))
    }

    static func rootBytes(_ tag: String, _ root: PagedTreeRoot) -> [UInt8] {
        Array(tag.utf8) + [0] + root.encoded
    }

    /// Opens the state a claim hands back; nil when the bytes are not ours.
    init?(claimed: ClaimedExtensionRoots) {
        guard let zero = claimed.rootBytes.firstIndex(of: 0),
              let root = PagedTreeRoot.decode(Array(claimed.rootBytes[(zero + 1)...])) else { return nil }
        tag = String(decoding: claimed.rootBytes[..<zero], as: UTF8.self)
        tree = PagedBTree(root: root, format: claimed.format, source: claimed.source)
    }

    init(tag: String, tree: PagedBTree) {
        self.tag = tag
        self.tree = tree
    }

    func contents() throws -> [String: String] {
        var out: [String: String] = [:]
        try tree.forEach { key, value in
            out[String(decoding: key, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
            return true
        }
        return out
    }
}

/// The engine facility for extension trees on index pages (`PagedExtensionState`): written by
/// the index checkpoint with the key directory, named in the root record, claimed after a
/// reopen without reading a page, copied by index compaction, and versioned per snapshot.
@Suite struct ExtensionTreeTests {
    static func options(_ disk: SimulatedDisk) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        options.indexFileSizeLimit = 16 << 10
        options.indexCompactionSlack = .max
        options.countsExtensionPageReads = true
        return options
    }

    /// Writes `entries` into the state named "t" (creating it) and into rows, in one commit.
    static func put(_ engine: Engine, _ entries: [String: String?], model: inout [String: String]) throws {
        _ = try engine.write { tx in
            var state = tx.extensions["t"] as? TreeState
                ?? TreeState(tag: "v1", tree: PagedBTree(format: tx.keydir.format, source: tx.keydir.rows.source))
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                if let value {
                    _ = try state.tree.upsert(Array(key.utf8), Array(value.utf8))
                    try EngineTesting.set(tx, "c", key, Array(value.utf8))
                    model[key] = value
                } else {
                    _ = try state.tree.remove(Array(key.utf8))
                    try tx.remove(collection: "c", key: key)
                    model[key] = nil
                }
            }
            tx.extensions["t"] = state
            tx.markChanged()
        }
    }

    static func state(_ snapshot: EngineSnapshot) -> TreeState? { snapshot.extensions["t"] as? TreeState }

    @Test func treesSurviveCheckpointAndReopenAndAreClaimedWithoutAPageRead() throws {
        let disk = try EngineTesting.simulated()
        var model: [String: String] = [:]
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.put(engine, Dictionary(uniqueKeysWithValues: (0..<300).map { ("k\($0)", "value \($0)") }), model: &model)
        try engine.checkpoint()
        let written = try #require(Self.state(engine.snapshot()))
        #expect(written.tree.writtenRoot != nil, "the checkpoint released every node it wrote")
        #expect(written.tree.height >= 2, "512-byte pages: the tree split")
        written.tree.checkInvariants()
        try engine.close()

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        #expect(engine.snapshot().extensions["t"] == nil, "nothing is loaded before the claim")
        let claimed = try #require(engine.claimExtensionRoots("t"))
        #expect(claimed.catchUp.changedKeys.isEmpty && claimed.catchUp.removedRowids.isEmpty && !claimed.catchUp.removedAll)
        let state = try #require(TreeState(claimed: claimed))
        #expect(state.tag == "v1")
        #expect(engine.extensionPagesRead == 0, "claiming and opening the roots read no page")
        #expect(state.tree.count == 300)
        #expect(try state.tree.value(forKey: Array("k42".utf8)) == Array("value 42".utf8))
        #expect(engine.extensionPagesRead! > 0 && engine.extensionPagesRead! <= state.tree.height)
        #expect(try state.contents() == model)
        state.tree.checkInvariants()
        #expect(engine.claimExtensionRoots("t") == nil, "a claim is taken once")
    }

    @Test func aCrashBetweenCheckpointsHandsTheChangesSinceToTheClaim() throws {
        let disk = try EngineTesting.simulated()
        var model: [String: String] = [:]
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.put(engine, Dictionary(uniqueKeysWithValues: (0..<100).map { ("k\($0)", "a\($0)") }), model: &model)
        try engine.checkpoint()
        let rowid = try #require(try engine.snapshot().entry(collection: "c", key: "k7")).rowid
        try Self.put(engine, ["k7": nil, "k8": "b8", "new": "n"], model: &model)
        engine.abandon()
        disk.powerCut(seed: 4, mode: .drop)

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        let claimed = try #require(engine.claimExtensionRoots("t"))
        #expect(claimed.catchUp.changedKeys == Set(["k7", "k8", "new"].map { CollectionKeyPair(collection: "c", key: $0) }))
        #expect(claimed.catchUp.removedRowids == [rowid])
        let state = try #require(TreeState(claimed: claimed))
        #expect(try state.tree.value(forKey: Array("k7".utf8)) == Array("a7".utf8), "the roots are the checkpoint's")
    }

    @Test func oldSnapshotsKeepTheirTreesAcrossCheckpointsAndIndexCompaction() throws {
        let disk = try EngineTesting.simulated()
        var model: [String: String] = [:]
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        var held: [(EngineSnapshot, [String: String])] = []
        for round in 0..<8 {
            var entries: [String: String?] = [:]
            for i in 0..<60 { entries["k\((i * 7 + round * 13) % 200)"] = "r\(round)-\(i)" }
            if round > 2 { for i in 0..<10 { entries["k\(i * 3 + round)"] = .some(nil) } }
            try Self.put(engine, entries, model: &model)
            held.append((engine.snapshot(), model))
            if round % 2 == 0 { try engine.checkpoint() }
            if round == 5 { try engine.compactIndex() }
        }
        try engine.compactIndex()
        for (snapshot, expected) in held {
            let state = try #require(Self.state(snapshot))
            #expect(try state.contents() == expected)
            state.tree.checkInvariants()
        }
        let now = try #require(Self.state(engine.snapshot()))
        #expect(try now.contents() == model)
        #expect(try engine.verify().isValid)
    }

    @Test func unclaimedRootsAreDroppedByTheNextCheckpoint() throws {
        let disk = try EngineTesting.simulated()
        var model: [String: String] = [:]
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.put(engine, ["a": "1", "b": "2"], model: &model)
        try engine.close()

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "b", Array("3".utf8)) }
        try engine.checkpoint()
        #expect(engine.claimExtensionRoots("t") == nil, "the checkpoint moved the replay past what the claim would need")
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        #expect(engine.claimExtensionRoots("t") == nil, "and did not record them again")
    }

    @Test func extensionRootsRoundTripInTheRootRecordAndOldRecordsStillRead() throws {
        let uuid = [UInt8](repeating: 7, count: 16)
        var root = IndexRoot(uuid: uuid, pageSize: 4096, sequence: 3, snapshot: 9, replay: LogPosition(segment: 1, offset: 64),
                             nextRowID: 5, trees: [IndexRoot.Tree(name: "rows", root: .none, count: 0, height: 0)],
                             files: [IndexRoot.File(number: 1, length: 8192)])
        let plain = root.encoded()
        #expect(try IndexRoot.decode(plain, path: "r", uuid: uuid) == root, "a record without extensions has no extension section")
        root.extensions = [IndexRoot.Extension(name: "view:a", bytes: [1, 2, 3]), IndexRoot.Extension(name: "view:b", bytes: [])]
        let bytes = root.encoded()
        #expect(bytes.count == plain.count + 4 + (5 + 6 + 3) + (5 + 6))
        #expect(try IndexRoot.decode(bytes, path: "r", uuid: uuid) == root)
        root.extensions.append(IndexRoot.Extension(name: "view:a", bytes: []))
        #expect(root.damage() == .duplicateTreeName("view:a"))
    }
}
