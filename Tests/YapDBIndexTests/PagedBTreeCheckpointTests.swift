// The checkpoint pattern the engine will use: a snapshot is flushed on another thread while the
// writer keeps changing the tree; then, under the writer's control, the flush is published and
// the writer's newer tree drops the nodes that were written.
import Testing
import TestSupport
@testable import YapDBIndex

@Test(arguments: [61, 62, 63] as [UInt64])
func pagedBTreeFlushesASnapshotWhileTheWriterContinues(seed: UInt64) async throws {
    var rng = SeededRandom(seed: seed)
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedBTree(format: format, source: source)
    var model: [[UInt8]: [UInt8]] = [:]
    func write(_ count: Int) throws {
        for _ in 0..<count {
            let key = Array("k\(rng.next() % 3000)".utf8)
            if rng.next() % 4 == 0 {
                try tree.remove(key)
                model[key] = nil
            } else {
                let value = rng.bytes(Int(rng.next() % 20))
                try tree.upsert(key, value)
                model[key] = value
            }
        }
    }
    try write(3000)
    for round in 0..<4 {
        // Checkpoint of the current snapshot on another thread; the writer goes on meanwhile.
        let snapshot = tree, snapshotModel = model
        let checkpoint = Task.detached { () -> PageFlush in
            snapshot.flush(allocate: { () throws(Never) in source.allocate() }, write: { (id, bytes) throws(Never) in source.write(id, bytes) })
        }
        try write(60)
        let flush = await checkpoint.value
        // "Under the writer lock": publish, then release the written nodes from the newer tree.
        flush.publish()
        tree = tree.releasingFlushedNodes().reading(from: source)
        let context = "seed \(seed) round \(round)"
        guard isValid(tree.validate, context) else { return }
        #expect(tree.count == model.count, "\(context) count")
        for (key, value) in model.prefix(200) { #expect(try tree.value(forKey: key) == value, "\(context) value") }
        // The snapshot, reopened from its root page, is exactly what it was.
        let reopened = try PagedBTree(rootPage: flush.root, format: format, source: source)
        guard isValid(reopened.validate, context) else { return }
        #expect(reopened.count == snapshotModel.count, "\(context) snapshot count")
        for (key, value) in snapshotModel.prefix(200) { #expect(try reopened.value(forKey: key) == value, "\(context) snapshot value") }
        // The next flush of the newer tree writes only the paths changed after the snapshot.
        let next = tree.flush(allocate: { () throws(Never) in source.allocate() }, write: { (_, _) throws(Never) in })
        if round == 0 { #expect(next.pagesWritten < flush.pagesWritten / 2, "\(context) incremental") }
        try write(500)
    }
    // A final flush and reload matches the model.
    let last = source.flush(tree)
    let reloaded = try PagedBTree(rootPage: last.root, format: format, source: source)
    reloaded.checkInvariants()
    #expect(reloaded.count == model.count)
    var all: [[UInt8]: [UInt8]] = [:]
    try reloaded.forEach { key, value in all[Array(key)] = Array(value); return true }
    #expect(all == model)
}
