import Dispatch
import Synchronization
import Testing
import TestSupport
@testable import YapDBStorage

/// Readers on several threads take views and read pages while one thread appends, syncs and
/// adopts (so files roll, and the active file is mapped again at each longer published
/// length while the writer appends past it) — on real POSIX files, in both read modes. Every read returns the bytes written. Bounded: each thread runs a fixed
/// number of steps and ends by itself.
@Suite struct IndexFileConcurrencyTests {
    @Test(arguments: IndexFileTests.modes)
    func readersSeeEveryPageTheWriterPublishes(mode: IndexReadMode) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let harness = IndexFileHarness(fs: PosixFileSystem.shared, mainPath: dir.file("db"))
        let (first, writer) = try harness.cycle(after: nil, count: 3)
        let store = try harness.store(first.root, mode: mode)
        let known = Mutex(first.pages.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        let mismatches = Atomic(0)
        let reads = Atomic(0)
        let failures = Mutex<[String]>([])
        let owned = OwnedByOneThread(writer)

        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            if thread == 0 {
                let writer = owned.value
                do {
                    for round in 0..<30 {
                        var added: [(IndexPageID, [UInt8])] = []
                        for index in 0..<3 {
                            let bytes = harness.page(sequence: UInt64(100 + round), index: index)
                            added.append((try writer.append(bytes), bytes))
                        }
                        try store.adopt(try writer.sync())
                        known.withLock { $0 += added }
                    }
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
                return
            }
            var random = SeededRandom(seed: UInt64(thread))
            for _ in 0..<3000 {
                let view = store.view()
                let (id, bytes) = known.withLock { $0[Int(random.next() % UInt64($0.count))] }
                do throws(IndexFileError) {
                    let page = try view.page(id)
                    if page.array != bytes { mismatches.add(1, ordering: .relaxed) }
                    reads.add(1, ordering: .relaxed)
                } catch {
                    // A page published after this view was taken is not in it: only that is allowed.
                    guard case .badPageID = error else {
                        failures.withLock { $0.append("reader \(thread): \(error)") }
                        return
                    }
                }
            }
        }
        writer.close()
        #expect(failures.withLock { $0 } == [])
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(reads.load(ordering: .relaxed) > 0)
        // Files rolled and (mapped mode) every one is mapped in the final view, the active one
        // included (up to its published length).
        let view = store.view()
        #expect(view.fileNumbers.count > 5)
        for number in view.fileNumbers { #expect(view.isMapped(number) == (mode == .mapped)) }
    }
}

/// Hands a non-`Sendable` value to exactly one other thread.
///
/// `@unchecked Sendable`: the test touches `value` only from iteration 0 of
/// `concurrentPerform` until it returns, and only after that from the test's own thread.
final class OwnedByOneThread<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
