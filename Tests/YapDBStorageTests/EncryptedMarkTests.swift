#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBCrypto
import YapDBSimulatedDisk
@testable import YapDBStorage

/// The authenticated high-water mark of encrypted databases (docs/format.md §2, "High-water
/// mark", and §12, "Threat model"): slots rewritten without the key do not verify, so they
/// cannot lower the mark's promises; one unverifiable slot is survived like a torn update; none
/// verifiable is `corrupted`; a wrong key stays `wrongKey`; a rekey keeps the tags valid.
@Suite struct EncryptedMarkTests {
    static let path = "/db/main"
    static let key = CipherKeyOptions(key: .raw(Array(repeating: 0x3C, count: 32)))

    static func harness(_ disk: SimulatedDisk, key: CipherKeyOptions? = Self.key) throws -> LogHarness {
        try? disk.mkdir("/db")
        var harness = LogHarness(path: path, fs: disk)
        harness.cipherKey = key
        return harness
    }

    static func close(_ opened: LogStore.Opened) {
        opened.writer.file.close()
        opened.lock?.unlock()
    }

    static func value(_ n: Int) -> [UInt8] { Array(repeating: UInt8(n % 251), count: 200) }

    /// Three sessions of three commits each, then an open without commits. Sequence 1 is the
    /// new main file's, each open writes the next: afterwards the first slot holds sequence 5
    /// (the fourth open's) and the second slot sequence 4 (the third open's, promising the log
    /// up to session 1's end). Opens after it write nothing (nothing changed). Returns the
    /// active segment's path and its bytes after the first commit (an older copy an attacker
    /// could keep).
    static func threeSessions(_ harness: LogHarness, disk: SimulatedDisk) throws -> (segment: String, olderCopy: [UInt8]) {
        var olderCopy: [UInt8] = []
        var segment = ""
        for session in 0..<3 {
            let (opened, _) = try harness.open()
            for n in 0..<3 {
                try LogHarness.commit(opened.writer, [("k\(session)-\(n)", Self.value(n))])
                if session == 0 && n == 0 {
                    segment = opened.writer.file.path
                    olderCopy = try #require(disk.currentBytes(of: segment))
                }
            }
            Self.close(opened)
        }
        let (opened, _) = try harness.open()
        #expect(opened.writer.highWaterMark?.current.sequence == 5)
        Self.close(opened)
        return (segment, olderCopy)
    }

    /// A slot's 64 bytes in `main`.
    static func slot(_ index: Int, of main: [UInt8]) -> [UInt8] {
        let start = Int(HighWaterMark.slotOffset(index: index))
        return Array(main[start..<(start + Format.mainMarkSize)])
    }

    /// `main` with slot `index` set to `bytes`.
    static func replacing(_ index: Int, in main: [UInt8], with bytes: [UInt8]) -> [UInt8] {
        var main = main
        let start = Int(HighWaterMark.slotOffset(index: index))
        main.replaceSubrange(start..<(start + Format.mainMarkSize), with: bytes)
        return main
    }

    /// `slot` with a new valid crc over its bytes 0 ..< 60, as someone without the key can make.
    static func recrc(_ slot: [UInt8]) -> [UInt8] {
        var slot = Array(slot[0..<Format.mainMarkChecksumOffset])
        slot.appendLE(CRC32C.mask(CRC32C.checksum(slot)))
        return slot
    }

    /// The marks of both slots, decoded with the database's authenticator.
    static func decoded(_ main: [UInt8], _ authenticator: MarkAuthenticator) -> [HighWaterMark.Slot] {
        (0..<2).map { HighWaterMark.decode(slot($0, of: main), authenticator: authenticator, slot: $0) }
    }

    static func authenticator(_ disk: SimulatedDisk, harness: LogHarness) throws -> MarkAuthenticator {
        let (opened, _) = try harness.open()
        defer { close(opened) }
        return try #require(opened.cipher?.markAuthenticator)
    }

    /// The error an open with `harness` fails with; nil when it opens (then it is closed).
    static func openError(_ harness: LogHarness) -> StorageError? {
        do throws(StorageError) {
            let (opened, _) = try harness.open()
            close(opened)
            return nil
        } catch {
            return error
        }
    }

    static func expectCorruptedMark(_ harness: LogHarness) {
        guard let error = openError(harness) else { Issue.record("opened without an authentic high-water mark"); return }
        guard case .corrupted(let offset, let reason) = error else { Issue.record("\(error)"); return }
        #expect(offset == Int64(Format.mainMarkOffset))
        #expect(reason.hasPrefix("main: ") && reason.contains("did not authenticate"), "\(reason)")
    }

    @Test func aForgedNewestSlotAndAnOlderSegmentDoNotOpen() throws {
        let disk = SimulatedDisk(seed: 21)
        let harness = try Self.harness(disk)
        let (segment, olderCopy) = try Self.threeSessions(harness, disk: disk)
        let main = try #require(disk.currentBytes(of: Self.path))
        // The newest mark (sequence 5, the first slot) rewritten with promises the older copy
        // meets, a higher sequence and a valid crc; then the older, shorter segment restored.
        // Without tags this slot would be the newest valid one and the copy would open.
        var forged = HighWaterMark()
        forged.sequence = 7
        forged.segment = 1
        forged.offset = UInt32(olderCopy.count)
        try disk.setBytes(Self.replacing(0, in: main, with: forged.encoded()), of: Self.path)
        try disk.setBytes(olderCopy, of: segment)
        // The forged slot is damage; the other slot's authentic mark (sequence 4) promises
        // more of the segment than the copy holds.
        let error = try #require(Self.openError(harness), "an older segment opened under a forged mark")
        guard case .missingFiles(let names) = error else { Issue.record("\(error)"); return }
        #expect(names.count == 1 && names[0].hasPrefix(Paths.fileName(of: segment)) && names[0].contains("\(olderCopy.count) bytes"), "\(names)")
        // Both slots forged the same way: no authentic mark is left.
        var older = forged
        older.sequence = 6
        let both = Self.replacing(1, in: Self.replacing(0, in: main, with: forged.encoded()), with: older.encoded())
        try disk.setBytes(both, of: Self.path)
        Self.expectCorruptedMark(harness)
    }

    @Test func aSlotWhoseTagDoesNotVerifyIsIgnoredAndTheOtherIsUsed() throws {
        let disk = SimulatedDisk(seed: 22)
        let harness = try Self.harness(disk)
        _ = try Self.threeSessions(harness, disk: disk)
        let authenticator = try Self.authenticator(disk, harness: harness)
        let main = try #require(disk.currentBytes(of: Self.path))
        // One bit of the newest slot's tag (sequence 5, the first page), with a valid crc.
        var flipped = Self.slot(0, of: main)
        flipped[Format.mainMarkTagOffset + 5] ^= 0x10
        let damaged = Self.replacing(0, in: main, with: Self.recrc(flipped))
        #expect(Self.decoded(damaged, authenticator)[0] == .unauthenticated)
        try disk.setBytes(damaged, of: Self.path)
        let file = try disk.open(Self.path, mode: .readOnly)
        var read = try MainFile.open(at: Self.path, file: file)
        file.close()
        #expect(read.mark == HighWaterMark(), "not decoded before the key is unlocked")
        try read.authenticateMark(with: authenticator, path: Self.path)
        #expect(read.mark.sequence == 4, "the other slot's mark")
        let (opened, state) = try harness.open()
        // The open moved the mark on from sequence 4: sequence 5 again, over the bad slot.
        #expect(opened.writer.highWaterMark?.current.sequence == 5)
        #expect(state.count == 9 && state["k2-2"] == Self.value(2))
        Self.close(opened)
        let healed = try #require(disk.currentBytes(of: Self.path))
        #expect(Self.decoded(healed, authenticator).allSatisfy { if case .valid = $0 { true } else { false } })
    }

    @Test func noVerifiableSlotIsCorruptedButAWrongKeyStaysAWrongKey() throws {
        let disk = SimulatedDisk(seed: 23)
        let harness = try Self.harness(disk)
        _ = try Self.threeSessions(harness, disk: disk)
        let main = try #require(disk.currentBytes(of: Self.path))
        var broken = main
        for index in 0..<2 {
            var slot = Self.slot(index, of: main)
            slot[Format.mainMarkTagOffset + 31] ^= 0x01
            broken = Self.replacing(index, in: broken, with: Self.recrc(slot))
        }
        let zeroed = Self.replacing(1, in: Self.replacing(0, in: main, with: Array(repeating: 0, count: 64)), with: Array(repeating: 0, count: 64))
        for bytes in [broken, zeroed] {
            try disk.setBytes(bytes, of: Self.path)
            Self.expectCorruptedMark(harness)
            let wrong = try Self.harness(disk, key: CipherKeyOptions(key: .raw(Array(repeating: 0x3D, count: 32))))
            #expect(throws: StorageError.wrongKey) { _ = try wrong.open() }
            #expect(throws: StorageError.keyUnavailable) { _ = try Self.harness(disk, key: nil).open() }
            #expect(disk.currentBytes(of: Self.path) == bytes, "a refused open changes nothing")
        }
    }

    @Test func aSlotCopiedIntoTheOtherPlaceDoesNotVerify() throws {
        let disk = SimulatedDisk(seed: 24)
        let harness = try Self.harness(disk)
        _ = try Self.threeSessions(harness, disk: disk)
        let authenticator = try Self.authenticator(disk, harness: harness)
        let main = try #require(disk.currentBytes(of: Self.path))
        // The newest slot (sequence 5, the first page's) copied into the second page's place.
        let newest = Self.slot(0, of: main)
        let copied = Self.replacing(1, in: main, with: newest)
        #expect(Self.decoded(copied, authenticator)[1] == .unauthenticated)
        // With its own slot gone, the copy is all that is left: it must not be taken.
        let moved = Self.replacing(0, in: copied, with: Array(repeating: 0, count: 64))
        try disk.setBytes(moved, of: Self.path)
        Self.expectCorruptedMark(harness)
    }

    @Test func aRekeyKeepsTheMarkValid() throws {
        let disk = SimulatedDisk(seed: 25)
        let harness = try Self.harness(disk)
        _ = try Self.threeSessions(harness, disk: disk)
        let newKey = CipherKeyOptions(key: .passphrase(Array("another key".utf8)), creationIterations: 1000)
        let main = try disk.open(Self.path, mode: .readWrite)
        let opened = try MainFile.open(at: Self.path, file: main)
        try MainFile.rekey(file: main, path: Self.path, uuid: opened.header.uuid, current: Self.key.key, new: newKey.key, iterations: 1000)
        main.close()
        let rekeyed = try Self.harness(disk, key: newKey)
        let (reopened, state) = try rekeyed.open()
        #expect(reopened.writer.highWaterMark?.current.sequence == 5, "the authentic mark of sequence 5 was read")
        #expect(state.count == 9)
        Self.close(reopened)
        #expect(throws: StorageError.wrongKey) { _ = try harness.open() }
    }

    @Test func aNewEncryptedMainFileHoldsATaggedMarkAndPlainSlotsStayZero() throws {
        let disk = SimulatedDisk(seed: 26)
        let encrypted = try Self.harness(disk)
        let (created, _) = try encrypted.open()
        let authenticator = try #require(created.cipher?.markAuthenticator)
        Self.close(created)
        let main = try #require(disk.currentBytes(of: Self.path))
        let slots = Self.decoded(main, authenticator)
        #expect(slots[0] == .valid(HighWaterMark.initial))
        guard case .valid(let second) = slots[1] else { Issue.record("\(slots[1])"); return }
        #expect(second.sequence == 2 && second.segment == 1)
        for index in 0..<2 {
            #expect(Self.slot(index, of: main)[Format.mainMarkTagOffset..<Format.mainMarkChecksumOffset].contains { $0 != 0 })
            // Read as a plain slot, a tagged one is damage.
            #expect(HighWaterMark.decode(Self.slot(index, of: main)) == .damaged)
        }

        let plainDisk = SimulatedDisk(seed: 27)
        let plain = try Self.harness(plainDisk, key: nil)
        for session in 0..<3 {
            let (opened, _) = try plain.open()
            try LogHarness.commit(opened.writer, [("p\(session)", Self.value(session))])
            Self.close(opened)
        }
        let plainMain = try #require(plainDisk.currentBytes(of: Self.path))
        for index in 0..<2 {
            let slot = Self.slot(index, of: plainMain)
            #expect(slot[Format.mainMarkTagOffset..<Format.mainMarkChecksumOffset].allSatisfy { $0 == 0 })
            guard case .valid(let mark) = HighWaterMark.decode(slot) else { Issue.record("plain slot \(index)"); continue }
            #expect(mark.sequence == (index == 0 ? 3 : 2))
            // Under an authenticator a plain slot is not authentic.
            #expect(HighWaterMark.decode(slot, authenticator: authenticator, slot: index) == .unauthenticated)
        }
    }

    /// The writer tags every update; `reload` (multi-process support) follows an authentic
    /// newer mark and ignores a forged one.
    @Test func theWriterTagsEveryUpdateAndReloadVerifies() throws {
        let disk = SimulatedDisk(seed: 28)
        let (created, _) = try Self.harness(disk).open()
        let authenticator = try #require(created.cipher?.markAuthenticator)
        let start = try #require(created.writer.highWaterMark?.current)
        Self.close(created)
        let first = HighWaterMarkWriter(file: try disk.open(Self.path, mode: .readWrite), mark: start, authenticator: authenticator)
        let second = HighWaterMarkWriter(file: try disk.open(Self.path, mode: .readWrite), mark: start, authenticator: authenticator)
        try first.update { $0.checkpoint = 4 }
        try second.reload()
        #expect(second.current == first.current && second.current.sequence == start.sequence + 1)
        var forged = first.current
        forged.sequence += 1
        forged.checkpoint = 1
        try first.file.write(forged.encoded(), at: HighWaterMark.slotOffset(sequence: forged.sequence))
        try second.reload()
        #expect(second.current == first.current, "a forged newer slot is not taken in")
        first.file.close()
        second.file.close()
    }
}
