import Testing
@testable import YapDBEngine
import TestSupport

/// The registry's changeset queue against a plain array, and the registry's consumer rules.
@Suite struct SnapshotRegistryTests {
    /// Random appends (with gaps in the snapshot numbers, as rolled-back and empty transactions
    /// leave), prunes and range queries, each compared with a filter over a plain array.
    @Test(arguments: [1 as UInt64, 2, 3])
    func queueMatchesAnArrayModel(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var queue = ChangesetQueue()
        var model: [UInt64] = []
        var next: UInt64 = 1
        for _ in 0..<5_000 {
            switch rng.next() % 10 {
            case 0..<5:
                next += 1 + rng.next() % 3
                queue.append(Changeset(snapshot: next))
                model.append(next)
            case 5:
                let through = rng.next() % (next + 2)
                let dropped = queue.removeThrough(snapshot: through).map(\.snapshot)
                #expect(dropped == model.filter { $0 <= through }, "seed \(seed)")
                model.removeAll { $0 <= through }
            case 6 where rng.next() % 20 == 0:
                #expect(queue.removeAll().map(\.snapshot) == model)
                model.removeAll()
            default:
                let after = rng.next() % (next + 2)
                let through = rng.next() % 4 == 0 ? UInt64.max : after + rng.next() % 40
                let got = queue.range(after: after, through: through).map(\.snapshot)
                #expect(got == model.filter { $0 > after && $0 <= through }, "seed \(seed) after \(after) through \(through)")
            }
            #expect(queue.count == model.count)
            #expect(queue.lastSnapshot == model.last)
        }
    }

    /// A consumer that never advances keeps every changeset; one that advances past them all
    /// lets them go; without consumers nothing is retained.
    @Test func changesetsAreKeptUntilEveryConsumerIsPast() {
        let registry = SnapshotRegistry()
        registry.append(Changeset(snapshot: 1))
        #expect(registry.retainedChangesets == 0, "nobody to keep it for")
        let stuck = registry.addConsumer(at: 1)
        let moving = registry.addConsumer(at: 1)
        for snapshot in UInt64(2)...1_001 { registry.append(Changeset(snapshot: snapshot)) }
        registry.advance(consumer: moving, to: 1_001)
        #expect(registry.retainedChangesets == 1_000)
        #expect(registry.changesets(after: 500, through: 502).map(\.snapshot) == [501, 502])
        #expect(registry.changesets(after: 1_001).isEmpty)
        registry.advance(consumer: stuck, to: 600)
        #expect(registry.retainedChangesets == 401)
        #expect(registry.changesets(after: 0, through: 601).map(\.snapshot) == [601])
        registry.removeConsumer(stuck)
        #expect(registry.retainedChangesets == 0)
        registry.removeConsumer(moving)
    }
}
