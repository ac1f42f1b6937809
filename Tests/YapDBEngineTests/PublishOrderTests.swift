import Foundation
import Synchronization
import Testing
import YapDBStorage
import YapDBSimulatedDisk
@testable import YapDBEngine
import TestSupport

/// The order of a commit's last steps, seen from another thread.
@Suite struct PublishOrderTests {
    /// Bug (found by the reliability harness's cache-coherence soak): a commit published its
    /// snapshot before appending its changeset to the registry. A connection starting a
    /// transaction in between synced its caches "to" the new snapshot without that changeset,
    /// then never applied it: a value it had cached stayed stale until the key changed again.
    /// Whenever a snapshot is visible, its changeset must already be there.
    ///
    /// The consumer never advances, so every changeset stays retained while the reader spins:
    /// the registry's lookup must not scan them (it once did, under the lock every commit
    /// takes, and this test then ran for 25+ minutes under ThreadSanitizer). Bounded: 5,000
    /// commits, and the reader stops when the writer is done.
    @Test func aPublishedSnapshotsChangesetIsAlreadyInTheRegistry() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk)
        options.syncMode = .off
        let engine = try Engine.open(path: "/db/main", options: options)
        let consumer = engine.registry.addConsumer(at: 0)
        let done = Atomic<Bool>(false)
        let misses = Atomic<Int>(0)
        let checks = Atomic<Int>(0)
        let reader = Thread {
            while !done.load(ordering: .acquiring) {
                let number = engine.snapshot().number
                guard number > 0 else { continue }
                checks.add(1, ordering: .relaxed)
                if engine.registry.changesets(after: number - 1, through: number).isEmpty { misses.add(1, ordering: .relaxed) }
            }
        }
        reader.start()
        for i in 0..<5_000 {
            _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(i % 10)", [UInt8(i & 0xFF)]) }
        }
        done.store(true, ordering: .releasing)
        while !reader.isFinished { usleep(1000) }
        _ = consumer
        #expect(checks.load(ordering: .relaxed) > 0)
        #expect(misses.load(ordering: .relaxed) == 0, "snapshots were visible before their changesets")
    }
}
