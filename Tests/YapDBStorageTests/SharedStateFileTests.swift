#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import TestSupport
@testable import YapDBStorage

/// The shared-state file of multi-process support (docs/format.md §14): round trip through
/// two mappings, the seqlock left odd by a dead publisher, bytes that are not a state.
@Suite struct SharedStateFileTests {
    static func state(_ generation: UInt64) -> PublishedState {
        PublishedState(uuid: Array(0..<16), generation: generation, snapshot: 40 + generation,
                       logEnd: LogPosition(segment: 3, offset: 4096 + UInt32(generation)),
                       durableThrough: LogPosition(segment: 3, offset: 4000), checkpoint: 7)
    }

    @Test func aPublishedStateIsReadThroughAnotherMapping() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db-shm")
        let writer = try SharedStateFile.open(path: path)
        let reader = try SharedStateFile.open(path: path)
        #expect(reader.read() == nil, "zeros: nothing published")
        let before = reader.sequence
        writer.publish(Self.state(1))
        #expect(reader.read() == Self.state(1))
        #expect(reader.sequence != before && reader.sequence & 1 == 0)
        writer.publish(Self.state(2))
        #expect(reader.read() == Self.state(2))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == SharedStateFile.size)
    }

    @Test func anEncodedStateIsSixtyFourBytesAndAFlippedBitIsRefused() {
        let bytes = SharedStateFile.encode(Self.state(5))
        #expect(bytes.count == SharedStateFile.copySize)
        #expect(SharedStateFile.decode(bytes) == Self.state(5))
        for index in [0, 20, 47, 59, 62] {
            var damaged = bytes
            damaged[index] ^= 0x10
            #expect(SharedStateFile.decode(damaged) == nil, "byte \(index)")
        }
        #expect(SharedStateFile.decode(Array(bytes.dropLast())) == nil)
    }

    /// A publisher that died half-way leaves the sequence number odd: readers still get a
    /// state whose checksum holds, and the next publish makes the number even again.
    @Test func anOddSequenceNumberFallsBackToACheckedCopy() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db-shm")
        let file = try SharedStateFile.open(path: path)
        file.publish(Self.state(1))
        // As a dead writer leaves it: the number odd, copy A half-written (damaged), copy B old.
        let raw = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try raw.seek(toOffset: UInt64(SharedStateFile.sequenceOffset))
        raw.write(Data(withUnsafeBytes(of: (file.sequence + 1)) { Array($0) }))
        try raw.seek(toOffset: UInt64(SharedStateFile.copyOffsets[0] + 8))
        raw.write(Data([0xFF, 0xFF]))
        try raw.close()
        #expect(file.sequence & 1 == 1)
        #expect(file.read() == Self.state(1))
        file.publish(Self.state(2))
        #expect(file.sequence & 1 == 0)
        #expect(file.read() == Self.state(2))
    }

    @Test func anotherProgramsBytesReadAsNothingPublished() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db-shm")
        var random = SeededRandom(seed: 13)
        let garbage = (0..<SharedStateFile.size).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(garbage)))
        #expect(try SharedStateFile.open(path: path).read() == nil)
        // The right header over random copies: still nothing.
        var headed = garbage
        headed.replaceSubrange(0..<8, with: SharedStateFile.magic)
        headed.replaceSubrange(8..<12, with: [1, 0, 0, 0])
        headed.replaceSubrange(16..<24, with: [UInt8](repeating: 0, count: 8))
        #expect(FileManager.default.createFile(atPath: path, contents: Data(headed)))
        #expect(try SharedStateFile.open(path: path).read() == nil)
    }
}

/// The reader table of the shared-state file: slots claimed, released, and reclaimed from
/// processes that are gone or whose id another process now has.
@Suite struct SharedStateReaderTableTests {
    @Test func slotsAreClaimedReleasedAndReclaimed() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try SharedStateFile.open(path: directory.file("db-shm"))
        let me = ProcessIdentity.current()
        #expect(ProcessIdentity.isLive(me))
        let mine = try #require(file.claimSlot(me, isLive: ProcessIdentity.isLive))
        #expect(file.slot(mine) == me)
        // A process that is gone, and one whose id is now another process's (this one's id,
        // another start time): both slots are freed at the next claim.
        let gone = SharedStateFile.Slot(pid: Int32.max - 1, start: 1)
        let reused = SharedStateFile.Slot(pid: me.pid, start: me.start &+ 1)
        let goneIndex = try #require(file.claimSlot(gone, isLive: { _ in true }))
        let reusedIndex = try #require(file.claimSlot(reused, isLive: { _ in true }))
        #expect(!ProcessIdentity.isLive(gone))
        #expect(me.start == 0 || !ProcessIdentity.isLive(reused), "a start time that differs is another process")
        let live = file.reclaimStaleSlots(isLive: ProcessIdentity.isLive)
        #expect(live[mine] == me)
        #expect(live[goneIndex] == nil && file.slot(goneIndex) == nil)
        if me.start != 0 { #expect(live[reusedIndex] == nil) }
        file.releaseSlot(mine, holding: me)
        #expect(file.slot(mine) == nil)
        #expect(file.reclaimStaleSlots(isLive: ProcessIdentity.isLive).isEmpty || me.start == 0)
    }

    @Test func aFullTableRefusesAClaim() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try SharedStateFile.open(path: directory.file("db-shm"))
        for n in 0..<SharedStateFile.slotCount {
            #expect(file.claimSlot(.init(pid: Int32(100 + n), start: 7), isLive: { _ in true }) == n)
        }
        #expect(file.claimSlot(.init(pid: 99, start: 7), isLive: { _ in true }) == nil)
    }
}
