import Testing
import YapDBCrypto
import YapDBStorage
import YapDBSimulatedDisk

/// The encrypted format's bytes (docs/format.md §12): the version bit, cipher headers, the main
/// file's key slots and key check, and sealed record frames. Not wired into the writer yet.
@Suite struct EncryptedFormatTests {
    static let uuid = FileHeader.randomUUID()
    static let key = UserKey.raw(Array(0..<32))

    static func mainFile(_ disk: SimulatedDisk, key: UserKey = key, dataKey: DataKey = .generate()) throws -> (any StorageFile, DataKey) {
        try disk.mkdir("/db")
        let header = FileHeader(kind: .main, uuid: uuid, fileNumber: 0, baseSnapshot: 0)
        let slot = StoredKeySlot(sequence: 1, slot: try KeySlot.wrapping(dataKey, with: key, databaseUUID: uuid))
        let file = try disk.open("/db/main", mode: .createNew)
        try file.write(MainFile.encryptedImage(header, slot: slot, keyCheck: try dataKey.keyCheckBlock(databaseUUID: uuid)), at: 0)
        return (file, dataKey)
    }

    static func contents(_ file: any StorageFile) throws -> [UInt8] { try file.readExactly(Int(try file.size()), at: 0) }

    @Test func anEncryptedHeaderDecodesWithItsFlagAndOtherVersionsAreRefused() throws {
        var header = FileHeader(kind: .logSegment, uuid: Self.uuid, fileNumber: 1, baseSnapshot: 0)
        header.encrypted = true
        let decoded = try FileHeader.decode(header.encoded(), path: "/db/main-seg-0000000001")
        #expect(decoded.encrypted && decoded == header)
        // Any other bit beside the version is a format this build does not know.
        var bytes = header.encoded()
        bytes[Format.headerVersionOffset + 3] = 1
        let found = Int(Format.version | Format.encryptedVersionFlag | 0x0100_0000)
        #expect(throws: StorageError.unsupportedVersion(found: found, supported: Int(Format.version))) {
            try FileHeader.decode(bytes, path: "/db/main-seg-0000000001")
        }
    }

    @Test func cipherHeadersRoundTripAndRefuseDamage() throws {
        let header = CipherHeader.fresh(dataKeyID: 1)
        #expect(header.salt != CipherHeader.fresh(dataKeyID: 1).salt)
        let bytes = header.encoded()
        #expect(bytes.count == Format.cipherHeaderSize)
        #expect(try CipherHeader.decode(bytes, path: "/db/x", fileOffset: 64) == header)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x10
            #expect(throws: StorageError.self) { try CipherHeader.decode(damaged, path: "/db/x", fileOffset: 64) }
        }
    }

    @Test func keySlotsRoundTripAlternateAndRefuseDamage() throws {
        let slot = try KeySlot.wrapping(.generate(), with: Self.key, databaseUUID: Self.uuid)
        let stored = StoredKeySlot(sequence: 3, slot: slot)
        let bytes = stored.encoded()
        #expect(bytes.count == Format.mainKeySlotSize)
        #expect(StoredKeySlot.decode(bytes) == .valid(stored))
        #expect(StoredKeySlot.decode([UInt8](repeating: 0, count: Format.mainKeySlotSize)) == .empty)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x01
            #expect(StoredKeySlot.decode(damaged) == .damaged, "byte \(index)")
        }
        #expect(StoredKeySlot.offset(sequence: 1) == Int64(Format.mainKeySlotOffset))
        #expect(StoredKeySlot.offset(sequence: 2) == Int64(Format.mainHeaderCopyOffset + Format.mainKeySlotOffset))
    }

    @Test func theRightKeyUnlocksAndWrongOrMissingKeysChangeNothing() throws {
        let disk = SimulatedDisk(seed: 1)
        let (file, dataKey) = try Self.mainFile(disk)
        let before = try Self.contents(file)
        #expect(try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key).dataKey == dataKey)
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: .raw(Array(1...32))) }
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: .passphrase([1, 2])) }
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: .raw([1])) }
        #expect(throws: StorageError.keyUnavailable) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: nil) }
        #expect(try Self.contents(file) == before)
    }

    /// A rekey writes the next sequence into the other page's slot: the new key opens, the old
    /// one does not; a torn rekey (garbage in that slot) leaves the old key working.
    @Test func aRekeyWritesTheOtherSlotAndATornOneKeepsTheOldKey() throws {
        let disk = SimulatedDisk(seed: 2)
        let (file, dataKey) = try Self.mainFile(disk)
        let newKey = UserKey.passphrase(Array("new passphrase".utf8))
        let rekeyed = StoredKeySlot(sequence: 2, slot: try KeySlot.wrapping(dataKey, with: newKey, databaseUUID: Self.uuid, iterations: 1000))

        var torn = rekeyed.encoded()
        torn.replaceSubrange(64..<128, with: [UInt8](repeating: 0xEE, count: 64))
        try file.write(torn, at: StoredKeySlot.offset(sequence: 2))
        #expect(try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key).slot.sequence == 1)

        try file.write(rekeyed.encoded(), at: StoredKeySlot.offset(sequence: 2))
        let opened = try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: newKey)
        #expect(opened.dataKey == dataKey && opened.slot.sequence == 2)
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key) }
    }

    @Test func bothSlotsDamagedIsCorruptionNotAWrongKey() throws {
        let disk = SimulatedDisk(seed: 3)
        let (file, _) = try Self.mainFile(disk)
        try file.write([UInt8](repeating: 0xAB, count: Format.mainKeySlotSize), at: StoredKeySlot.offset(sequence: 1))
        do {
            _ = try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key)
            Issue.record("opened with both key slots damaged")
        } catch {
            guard case .corrupted(let offset, _) = error else { Issue.record("\(error)"); return }
            #expect(offset == Int64(Format.mainKeySlotOffset))
        }
    }

    @Test func aDamagedKeyCheckCopyIsSurvivedAndBothAreAWrongKey() throws {
        let disk = SimulatedDisk(seed: 4)
        let (file, dataKey) = try Self.mainFile(disk)
        try file.write([UInt8](repeating: 0, count: CipherFormat.keyCheckSize), at: Int64(Format.mainKeyCheckOffset))
        #expect(try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key).dataKey == dataKey)
        try file.write([UInt8](repeating: 0, count: CipherFormat.keyCheckSize), at: Int64(Format.mainHeaderCopyOffset + Format.mainKeyCheckOffset))
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: Self.uuid, key: Self.key) }
    }

    @Test func sealedRecordsOpenOnlyWhereTheyWereSealed() throws {
        var header = FileHeader(kind: .logSegment, uuid: Self.uuid, fileNumber: 7, baseSnapshot: 0)
        header.encrypted = true
        let cipher = CipherHeader.fresh(dataKeyID: 1)
        let sealer = try cipher.sealer(dataKey: try DataKey(bytes: Array(repeating: 4, count: 32), id: 1), header: header)
        var record: [UInt8] = []
        RecordCodec.appendRemove(collection: "secret-collection", key: "secret-key", into: &record)
        let at128 = header.unitAddress(position: 128, type: .logRecord)
        let frame = try SealedRecord.seal(record, sealer: sealer, address: at128)
        #expect(frame.count == record.count + SealedRecord.overhead)
        #expect(try SealedRecord.frameSize(sealedLength: UInt32(record.count), bytesLeft: Int64(frame.count), path: "/db/s", offset: 128) == frame.count)
        #expect(try SealedRecord.open(frame, sealer: sealer, address: at128, path: "/db/s", offset: 128) == record)
        // Moved to another offset, or another unit type: refused as damage at that place.
        #expect(throws: StorageError.self) {
            try SealedRecord.open(frame, sealer: sealer, address: header.unitAddress(position: 200, type: .logRecord), path: "/db/s", offset: 200)
        }
        #expect(throws: StorageError.self) {
            try SealedRecord.open(frame, sealer: sealer, address: header.unitAddress(position: 128, type: .checkpointRecord), path: "/db/s", offset: 128)
        }
        // A length past the file's end or below a record header, before any allocation.
        #expect(throws: StorageError.self) { try SealedRecord.frameSize(sealedLength: UInt32(record.count), bytesLeft: 10, path: "/db/s", offset: 128) }
        #expect(throws: StorageError.self) { try SealedRecord.frameSize(sealedLength: 3, bytesLeft: 1000, path: "/db/s", offset: 128) }
        #expect(throws: StorageError.self) { try SealedRecord.frameSize(sealedLength: .max, bytesLeft: .max, path: "/db/s", offset: 128) }
        // Sealed again at the same place (a rollback's rewrite): new nonce, new bytes.
        let again = try SealedRecord.seal(record, sealer: sealer, address: at128)
        #expect(Array(again[4..<16]) != Array(frame[4..<16]))
        // A cipher header naming another data key.
        #expect(throws: StorageError.self) { try cipher.sealer(dataKey: .generate(id: 2), header: header) }
    }
}

/// Sealed index pages (docs/format.md §12): round trip, a swapped or moved page refused, a
/// page rewritten under the same number (the index writer resuming) with a new nonce.
@Suite struct SealedPageTests {
    @Test func pagesOpenOnlyUnderTheirOwnNumberAndFile() throws {
        let header = FileHeader(kind: .index, uuid: FileHeader.randomUUID(), fileNumber: 3, baseSnapshot: 0)
        let dataKey = DataKey.generate()
        let sealer = try CipherHeader.fresh(dataKeyID: dataKey.id).sealer(dataKey: dataKey, header: header)
        let pageSize = 256
        let first = (0..<SealedPage.plainSize(pageSize: pageSize)).map { UInt8(truncatingIfNeeded: $0) }
        let second = first.map { $0 ^ 0xFF }
        let sealedFirst = try SealedPage.seal(first, page: 1, pageSize: pageSize, sealer: sealer, header: header)
        let sealedSecond = try SealedPage.seal(second, page: 2, pageSize: pageSize, sealer: sealer, header: header)
        #expect(sealedFirst.count == pageSize)
        #expect(try SealedPage.open(sealedFirst, page: 1, sealer: sealer, header: header, path: "/db/main-index-0000000003") == first)
        // Swapped pages, and page 1 presented as page 1 of another index file.
        #expect(throws: StorageError.self) { try SealedPage.open(sealedFirst, page: 2, sealer: sealer, header: header, path: "/db/i") }
        #expect(throws: StorageError.self) { try SealedPage.open(sealedSecond, page: 1, sealer: sealer, header: header, path: "/db/i") }
        var otherFile = header
        otherFile.fileNumber = 4
        #expect(throws: StorageError.self) { try SealedPage.open(sealedFirst, page: 1, sealer: sealer, header: otherFile, path: "/db/i") }
        // A flipped bit anywhere.
        for index in stride(from: 0, to: pageSize, by: 7) {
            var damaged = sealedFirst
            damaged[index] ^= 0x04
            #expect(throws: StorageError.self) { try SealedPage.open(damaged, page: 1, sealer: sealer, header: header, path: "/db/i") }
        }
        // Page 1 written again after a resume: a new nonce, so new bytes for the same plaintext.
        let rewritten = try SealedPage.seal(first, page: 1, pageSize: pageSize, sealer: sealer, header: header)
        #expect(Array(rewritten.prefix(CipherFormat.nonceSize)) != Array(sealedFirst.prefix(CipherFormat.nonceSize)))
        #expect(try SealedPage.open(rewritten, page: 1, sealer: sealer, header: header, path: "/db/i") == first)
    }
}

/// `MainFile.rekey` (docs/format.md §12, "Rekey"): both slots end under the new key, and a
/// crash at any I/O call leaves a main file that opens with the old key or the new one.
@Suite struct RekeyTests {
    static let oldKey = UserKey.raw(Array(0..<32))
    static let newKey = UserKey.passphrase(Array("new passphrase".utf8))

    @Test func aRekeyLeavesNoSlotUnderTheOldKey() throws {
        let disk = SimulatedDisk(seed: 5)
        let (file, dataKey) = try EncryptedFormatTests.mainFile(disk, key: Self.oldKey)
        let uuid = EncryptedFormatTests.uuid
        let written = try MainFile.rekey(file: file, path: "/db/main", uuid: uuid, current: Self.oldKey, new: Self.newKey, iterations: 1000)
        #expect(written.sequence == 3)
        #expect(try MainFile.unlock(file: file, path: "/db/main", uuid: uuid, key: Self.newKey).dataKey == dataKey)
        #expect(throws: StorageError.wrongKey) { try MainFile.unlock(file: file, path: "/db/main", uuid: uuid, key: Self.oldKey) }
        // Neither stored slot unwraps with the old key.
        for page in [0, Format.mainHeaderCopyOffset] {
            guard case .valid(let stored) = StoredKeySlot.decode(try file.readExactly(Format.mainKeySlotSize, at: Int64(page + Format.mainKeySlotOffset))) else {
                Issue.record("slot in page \(page) is not valid"); continue
            }
            #expect(throws: CipherError.wrongKey) { try stored.slot.unwrap(with: Self.oldKey, databaseUUID: uuid) }
        }
        // A wrong current key writes nothing.
        let before = try EncryptedFormatTests.contents(file)
        #expect(throws: StorageError.wrongKey) {
            try MainFile.rekey(file: file, path: "/db/main", uuid: uuid, current: Self.oldKey, new: Self.oldKey, iterations: 1000)
        }
        #expect(try EncryptedFormatTests.contents(file) == before)
    }

    @Test func aCrashAtAnyCallLeavesTheOldKeyOrTheNewOne() throws {
        let uuid = EncryptedFormatTests.uuid
        var crashes = 0
        for mode in [PowerCutMode.drop, .torn, .garble, .keepAll] {
            for point in 0... {
                let disk = SimulatedDisk(seed: UInt64(point) + 100)
                let (file, dataKey) = try EncryptedFormatTests.mainFile(disk, key: Self.oldKey)
                try file.sync()
                try disk.syncDirectory("/db")
                disk.crashAfter(operations: point)
                let finished = (try? MainFile.rekey(file: file, path: "/db/main", uuid: uuid, current: Self.oldKey, new: Self.newKey, iterations: 1000)) != nil
                disk.powerCut(seed: UInt64(point) * 31 + 7, mode: mode)
                let reopened = try disk.open("/db/main", mode: .readWrite)
                let withOld = try? MainFile.unlock(file: reopened, path: "/db/main", uuid: uuid, key: Self.oldKey)
                let withNew = try? MainFile.unlock(file: reopened, path: "/db/main", uuid: uuid, key: Self.newKey)
                #expect(withOld != nil || withNew != nil, "\(mode) crash after \(point) calls: neither key opens")
                #expect((withOld?.dataKey ?? withNew?.dataKey) == dataKey)
                if finished { break }
                crashes += 1
            }
        }
        #expect(crashes >= 8, "the sweep crashed at \(crashes) points in all")
    }
}
