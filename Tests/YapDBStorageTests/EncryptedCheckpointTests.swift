import Testing
import YapDBCrypto
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport

/// Checkpoint files of an encrypted database (docs/format.md §12): every record sealed for its
/// offset; read back whole with the database's keys; nothing of the records in the clear; any
/// flipped bit past the file header, a swap of two records, or a plain reader is `corrupted`.
@Suite struct EncryptedCheckpointTests {
    static let cipher = DatabaseCipher(dataKey: .generate(), uuid: CheckpointFixture.uuid)

    static func write(_ image: CheckpointImage, _ disk: SimulatedDisk, _ files: DatabaseFiles, blockLimit: Int = 1 << 12) throws -> String {
        let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: CheckpointFixture.uuid, number: 3, info: image.info,
                                          cipher: cipher)
        writer.blockLimit = blockLimit
        try writer.setSegmentUsage(image.usage)
        for pending in image.pending { try writer.addPendingExtension(pending) }
        if let root = image.root { try writer.setIndexRoot(root) }
        return try writer.finish()
    }

    static func read(_ disk: SimulatedDisk, _ files: DatabaseFiles, cipher: DatabaseCipher? = cipher) throws -> CheckpointImage {
        var pending: [CheckpointPendingExtension] = []
        var root: [UInt8]?
        let (info, usage) = try CheckpointReader.read(files: files, fileSystem: disk, uuid: CheckpointFixture.uuid, number: 3, cipher: cipher,
                                                      indexRoot: { root = $0 }, pendingExtension: { pending.append($0) })
        return CheckpointImage(info: info, usage: usage, pending: pending, root: root)
    }

    @Test func aSealedCheckpointReadsBackAndHidesItsRecords() throws {
        let (disk, files) = try CheckpointFixture.disk()
        var image = CheckpointImage.make(extensions: 6, seed: 5)
        image.pending[1].name = "MARKER-EXTENSION-NAME"
        let path = try Self.write(image, disk, files)
        #expect(try Self.read(disk, files) == image)
        let bytes = try #require(disk.currentBytes(of: path))
        #expect(!bytes.contains(subsequence: Array("MARKER-EXTENSION-NAME".utf8)))
        #expect(!bytes.contains(subsequence: Array(image.root!.prefix(24))))
        // A plain reader, or another database's keys, never reads it.
        #expect(throws: StorageError.self) { try Self.read(disk, files, cipher: nil) }
        let other = DatabaseCipher(dataKey: .generate(), uuid: CheckpointFixture.uuid)
        #expect(throws: StorageError.self) { try Self.read(disk, files, cipher: other) }
    }

    @Test func everyFlippedBitPastTheHeaderIsCorruption() throws {
        let (disk, files) = try CheckpointFixture.disk()
        let image = CheckpointImage.make(extensions: 1, seed: 6)
        let path = try Self.write(image, disk, files)
        let original = try #require(disk.currentBytes(of: path))
        var rng = SeededRandom(seed: 9)
        for _ in 0..<200 {
            let index = Format.headerSize + Int(rng.next() % UInt64(original.count - Format.headerSize))
            var damaged = original
            damaged[index] ^= UInt8(1 << (rng.next() % 8))
            try disk.setBytes(damaged, of: path)
            #expect(throws: StorageError.self, "byte \(index)") { try Self.read(disk, files) }
            do { _ = try Self.read(disk, files) } catch let error as StorageError {
                guard case .corrupted = error else { Issue.record("byte \(index): \(error)"); continue }
            }
        }
    }
}
