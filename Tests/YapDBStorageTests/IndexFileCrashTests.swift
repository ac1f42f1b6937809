#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage
import YapDBSimulatedDisk

/// Power cuts at every I/O step of a "write pages + sync + publish root" cycle, under every
/// power-cut mode and both rules for unsynced names: the root found afterwards is the one
/// whose publication completed last or the one being published (never a partial one), every
/// page it can reach reads back with its bytes in both read modes, and the next checkpoint
/// works on top of it (docs/format.md §10, crash rules).
@Suite struct IndexFileCrashTests {
    struct Tally {
        var cuts = 0, newRoots = 0, oldRoots = 0, noRoots = 0
    }

    /// The engine's recovery recipe: remove index files the root does not name.
    static func removeOrphans(_ harness: IndexFileHarness, root: IndexRoot?) throws {
        let named = Set(root?.files.map(\.number) ?? [])
        for number in try harness.files.listIndexFiles(harness.fs) where !named.contains(number) {
            try harness.fs.remove(harness.files.indexPath(number))
        }
    }

    /// A disk holding `before` completed cycles, and what they published.
    static func prepared(seed: UInt64, before: Int) throws -> (SimulatedDisk, IndexFileHarness, IndexFileHarness.Published?) {
        let disk = SimulatedDisk(seed: seed)
        try disk.mkdir("/db")
        let harness = IndexFileHarness(fs: disk, mainPath: "/db/main")
        var published: IndexFileHarness.Published?
        for _ in 0..<before {
            let (next, writer) = try harness.cycle(after: published, count: 5)
            writer.close()
            published = next
        }
        return (disk, harness, published)
    }

    /// Whether `error` is the disk's power loss (the only failure a crash run may see).
    static func isPowerLoss(_ error: IndexFileError) -> Bool {
        switch error {
        case .io(let failure): failure.operation == "power lost"
        case .failed: true
        default: false
        }
    }

    func sweep(before: Int, names: UnsyncedNames) throws -> Tally {
        // A dry run gives the cycle's number of mutating calls and what it publishes.
        let (dryDisk, dryHarness, dryPrevious) = try Self.prepared(seed: 0, before: before)
        dryDisk.resetOperationCount()
        let (attempted, dryWriter) = try dryHarness.cycle(after: dryPrevious, count: 6)
        dryWriter.close()
        let steps = dryDisk.operationCount
        #expect(steps >= 10)

        var tally = Tally()
        for step in 1...(steps + 1) {
            for (index, mode) in [PowerCutMode.drop, .torn, .garble].enumerated() {
                let seed = UInt64(step * 10 + index)
                let (disk, harness, previous) = try Self.prepared(seed: seed, before: before)
                disk.crashAfter(operations: step)
                var completed = false
                do throws(IndexFileError) {
                    let (_, writer) = try harness.cycle(after: previous, count: 6)
                    writer.close()
                    completed = true
                } catch {
                    #expect(Self.isPowerLoss(error), "step \(step) \(mode): \(error)")
                }
                let log = disk.powerCut(seed: seed, mode: mode, names: names)
                tally.cuts += 1
                let context = "step \(step)/\(steps), \(mode), \(names), completed \(completed)\n" + log.joined(separator: "\n")
                let root: IndexRoot?
                do { root = try harness.load() } catch {
                    Issue.record("no valid root after the cut: \(error)\n\(context)")
                    continue
                }
                let expected: IndexFileHarness.Published?
                switch root {
                case nil:
                    #expect(previous == nil && !completed, "\(context)")
                    tally.noRoots += 1
                    expected = nil
                case let root? where root == attempted.root:
                    tally.newRoots += 1
                    expected = attempted
                case let root?:
                    #expect(root == previous?.root && !completed, "unexpected root \(root.sequence)\n\(context)")
                    tally.oldRoots += 1
                    expected = previous
                }
                if let expected {
                    for readMode in IndexFileTests.modes {
                        let view = try harness.store(expected.root, mode: readMode).view()
                        #expect(IndexFileHarness.mismatches(view, expected.pages).isEmpty, "\(readMode)\n\(context)")
                    }
                }
                // The next checkpoint builds on what was found.
                try Self.removeOrphans(harness, root: root)
                let (next, writer) = try harness.cycle(after: expected, count: 3)
                writer.close()
                let reloaded = try #require(try harness.load())
                #expect(reloaded == next.root)
                let view = try harness.store(reloaded, mode: .mapped).view()
                #expect(IndexFileHarness.mismatches(view, next.pages).isEmpty, "\(context)")
            }
        }
        return tally
    }

    @Test(arguments: [UnsyncedNames.needDirectorySync, .seeded])
    func cutsDuringTheFirstCheckpoint(names: UnsyncedNames) throws {
        let tally = try sweep(before: 0, names: names)
        #expect(tally.newRoots > 0 && tally.noRoots > 0)
    }

    @Test(arguments: [UnsyncedNames.needDirectorySync, .seeded])
    func cutsDuringACheckpointThatResumesAFile(names: UnsyncedNames) throws {
        let tally = try sweep(before: 2, names: names)
        #expect(tally.newRoots > 0 && tally.oldRoots > 0)
    }
}

/// Failing I/O calls (EIO, ENOSPC, short writes, a sync that drops its pages) during a cycle:
/// typed errors, no trap, and after a power cut the previous root (or the new one, when only
/// the final directory sync failed) with every page readable.
@Suite struct IndexFileFaultTests {
    static let effects: [Fault.Effect] = [.error(EIO), .error(ENOSPC), .shortWrite(ENOSPC), .syncFailsMarkingClean]

    @Test(arguments: [Fault.Call.write, .sync, .syncDirectory, .rename, .remove, .open, .truncate])
    func faultsDuringACheckpoint(call: Fault.Call) throws {
        var failedRuns = 0
        for effect in Self.effects {
            for nth in 1...6 {
                let (disk, harness, previous) = try IndexFileCrashTests.prepared(seed: UInt64(nth), before: 1)
                let first = try #require(previous)
                // A leftover temporary checkpoint, so publication has a remove to fail, and an
                // unpublished page after the last file's published length, for resume to cut.
                _ = try disk.open(harness.files.checkpointPath(UInt32(first.root.sequence) + 1) + Format.temporarySuffix, mode: .create)
                let last = try #require(first.root.files.last)
                let tail = try disk.open(harness.files.indexPath(last.number), mode: .readWrite)
                try tail.write(harness.page(sequence: 99, index: 0), at: last.length)
                try tail.sync()
                tail.close()
                disk.inject(Fault(call, nth: nth, effect: effect))
                var attempted: IndexFileHarness.Published?
                do throws(IndexFileError) {
                    let (published, writer) = try harness.cycle(after: first, count: 6)
                    writer.close()
                    attempted = published
                } catch {
                    failedRuns += 1
                    guard case .io(let failure) = error else {
                        Issue.record("\(call) \(effect) #\(nth): \(error)")
                        continue
                    }
                    let expected: Int32 = switch effect {
                    case .error(let code), .shortWrite(let code): code
                    case .syncFailsMarkingClean: EIO
                    }
                    #expect(failure.errno == expected, "\(call) \(effect) #\(nth): \(failure)")
                }
                disk.clearFaults()
                disk.powerCut(seed: UInt64(nth), mode: .drop)
                let root = try #require(try harness.load())
                let found = root == attempted?.root ? attempted! : first
                #expect(root == found.root, "\(call) \(effect) #\(nth)")
                let view = try harness.store(root, mode: .cached(pages: 2)).view()
                #expect(IndexFileHarness.mismatches(view, found.pages).isEmpty, "\(call) \(effect) #\(nth)")
            }
        }
        // Every kind of call fails at least once in a cycle (the sweep reaches it).
        #expect(failedRuns > 0)
    }

    @Test func aFullDiskFailsTheCheckpointAndKeepsThePreviousRoot() throws {
        let (disk, harness, previous) = try IndexFileCrashTests.prepared(seed: 5, before: 1)
        disk.capacity = disk.usedBytes + 700
        #expect(throws: IndexFileError.self) { _ = try harness.cycle(after: previous, count: 6) }
        disk.capacity = nil
        disk.powerCut(seed: 5, mode: .garble)
        #expect(try harness.load() == previous?.root)
    }

    @Test func aWriterThatFailedRefusesFurtherWork() throws {
        let (disk, harness, _) = try IndexFileCrashTests.prepared(seed: 6, before: 0)
        let writer = try IndexFileWriter(files: harness.files, fileSystem: disk, uuid: IndexFileHarness.uuid,
                                         pageSize: 256, newFile: 1, sequence: 1)
        _ = try writer.append(harness.page(sequence: 1, index: 0))
        disk.inject(Fault(.sync, effect: .syncFailsMarkingClean))
        #expect(throws: IndexFileError.io(IOFailure(errno: EIO, operation: "fdatasync", path: harness.files.indexPath(1)))) {
            try writer.sync()
        }
        #expect(throws: IndexFileError.failed) { try writer.sync() }
        #expect(throws: IndexFileError.failed) { try writer.append(harness.page(sequence: 1, index: 1)) }
        #expect(IndexFileError.failed.storageError == .poisoned)
    }

    @Test func aFailedMapIsATypedErrorAndTheCachedModeNeedsNoMap() throws {
        let (disk, harness, previous) = try IndexFileCrashTests.prepared(seed: 7, before: 1)
        let root = try #require(previous?.root)
        disk.inject(Fault(.map, persistent: true, effect: .error(ENOMEM)))
        #expect(throws: IndexFileError.io(IOFailure(errno: ENOMEM, operation: "mmap", path: harness.files.indexPath(1)))) {
            try harness.store(root, mode: .mapped)
        }
        let view = try harness.store(root, mode: .cached(pages: 8)).view()
        #expect(IndexFileHarness.mismatches(view, previous!.pages).isEmpty)
    }
}
