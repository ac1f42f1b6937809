import Foundation
import Synchronization
import Testing
@testable import YapDB

/// A synchronous transaction on an idle connection runs on the caller's thread instead of
/// hopping through the connection's queue (`YapDatabaseConnection.onQueue`): it must still run
/// after the work queued before it, and never at the same time as any other work of the
/// connection.
@Suite struct ConnectionInlineTransactionTests {
    @Test func aSynchronousTransactionRunsAfterTheWorkQueuedBeforeIt() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        let gate = DispatchSemaphore(value: 0)
        connection.asyncRead { _ in gate.wait() }
        connection.asyncReadWrite { tx in tx.setObject("queued", forKey: "k", inCollection: "c") }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { gate.signal() }
        let seen = connection.read { tx in tx.object(forKey: "k", inCollection: "c") as? String }
        #expect(seen == "queued", "the read waited for the read-write queued before it")
        #expect(connection.pendingTransactionCount == 0)
    }

    @Test func inlineAndQueuedWorkNeverOverlap() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in tx.setObject(0, forKey: "n", inCollection: "c") }
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        @Sendable func turn() {
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            for _ in 0..<200 { _ = inside.load(ordering: .relaxed) }
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                for i in 0..<150 {
                    switch (thread + i) % 3 {
                    case 0: connection.read { _ in turn() }
                    case 1: connection.asyncRead { _ in turn() }
                    default: connection.readWrite { tx in turn(); tx.setObject(i, forKey: "n", inCollection: "c") }
                    }
                }
                group.leave()
            }
        }
        group.wait()
        let drained = DispatchSemaphore(value: 0)
        connection.flushTransactions { drained.signal() }
        drained.wait()
        #expect(overlaps.load(ordering: .relaxed) == 0, "two of the connection's transactions ran at once")
        #expect(connection.pendingTransactionCount == 0)
    }
}
