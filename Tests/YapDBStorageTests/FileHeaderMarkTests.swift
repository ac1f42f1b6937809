#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBSimulatedDisk
@testable import YapDBStorage

/// The main file's high-water mark slots (docs/format.md §2, "High-water mark").
@Suite struct FileHeaderMarkTests {
    static func mark(_ sequence: UInt64, checkpoint: UInt32 = 3) -> HighWaterMark {
        var mark = HighWaterMark()
        mark.sequence = sequence
        mark.segment = 7
        mark.offset = 1234
        mark.snapshot = 99
        mark.checkpoint = checkpoint
        return mark
    }

    @Test func aSlotRoundTripsAndDamageIsSeen() {
        let bytes = Self.mark(5).encoded()
        #expect(bytes.count == Format.mainMarkSize)
        #expect(HighWaterMark.decode(bytes) == .valid(Self.mark(5)))
        #expect(HighWaterMark.decode([UInt8](repeating: 0, count: Format.mainMarkSize)) == .empty)
        for index in [0, 9, 30, 61] {
            var torn = bytes
            torn[index] ^= 0x40
            #expect(HighWaterMark.decode(torn) == .damaged, "byte \(index)")
        }
    }

    @Test func theNewerValidSlotWins() throws {
        let a = Self.mark(4, checkpoint: 1), b = Self.mark(5, checkpoint: 2)
        #expect(try HighWaterMark.newest(.valid(a), .valid(b), path: "m") == b)
        #expect(try HighWaterMark.newest(.valid(b), .valid(a), path: "m") == b)
        #expect(try HighWaterMark.newest(.damaged, .valid(a), path: "m") == a)
        #expect(try HighWaterMark.newest(.empty, .damaged, path: "m") == HighWaterMark())
        #expect(throws: StorageError.self) { _ = try HighWaterMark.newest(.damaged, .damaged, path: "m") }
    }

    /// Updates alternate slots; a torn update leaves the previous mark readable, and a failed
    /// one is retried in the same slot (never over the newest mark).
    @Test func updatesAlternateAndAFailedOneKeepsThePreviousMark() throws {
        let disk = SimulatedDisk(seed: 3)
        try disk.mkdir("/db")
        _ = try MainFile.create(at: "/db/main", fileSystem: disk)
        let file = try disk.open("/db/main", mode: .readWrite)
        let writer = HighWaterMarkWriter(file: file, mark: HighWaterMark())
        try writer.update { $0.checkpoint = 1 }
        try writer.update { $0.checkpoint = 2 }
        #expect(try MainFile.open(at: "/db/main", file: file).mark.checkpoint == 2)
        disk.inject(Fault(.write, pathContains: "main", effect: .shortWrite(EIO)))
        #expect(throws: IOFailure.self) { try writer.update { $0.checkpoint = 3 } }
        #expect(try MainFile.open(at: "/db/main", file: file).mark.checkpoint == 2, "the torn slot is not the newest")
        try writer.update { $0.checkpoint = 3 }
        let opened = try MainFile.open(at: "/db/main", file: file)
        #expect(opened.mark.checkpoint == 3 && opened.mark.sequence == 3)
        #expect(opened.damagedCopy == nil, "the header copies are untouched by the slots")
        // An update that changes nothing writes nothing.
        try writer.update { $0.checkpoint = 3 }
        #expect(writer.current.sequence == 3)
    }

    /// Two writers of one main file (two processes with multi-process support): one that
    /// reloads before updating follows the other's newest mark instead of writing an older
    /// sequence into its slot.
    @Test func aWriterThatReloadsFollowsAnotherWritersNewerMark() throws {
        let disk = SimulatedDisk(seed: 4)
        try disk.mkdir("/db")
        _ = try MainFile.create(at: "/db/main", fileSystem: disk)
        let first = HighWaterMarkWriter(file: try disk.open("/db/main", mode: .readWrite), mark: HighWaterMark())
        let second = HighWaterMarkWriter(file: try disk.open("/db/main", mode: .readWrite), mark: HighWaterMark())
        try first.update { $0.checkpoint = 1 }
        try first.update { $0.checkpoint = 2 }
        try first.update { $0.segment = 4 }
        // Without a reload the second writer's sequence 1 would go over the first's slot 1 and
        // lose to its sequence 2, an older mark.
        try second.reload()
        #expect(second.current == first.current)
        try second.update { $0.segment = 5 }
        let opened = try MainFile.open(at: "/db/main", file: try disk.open("/db/main", mode: .readOnly))
        #expect(opened.mark.sequence == 4 && opened.mark.segment == 5 && opened.mark.checkpoint == 2)
    }
}
