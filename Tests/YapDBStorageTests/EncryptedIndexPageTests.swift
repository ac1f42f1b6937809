import Testing
import YapDBCrypto
import YapDBStorage
import YapDBSimulatedDisk

/// Index pages of an encrypted database (docs/format.md §12): the writer seals each page for its
/// file and number; the page store reads through its cache (never a map of ciphertext) and opens
/// each page as it enters it; a flipped bit or a moved page is `corrupted`; a writer resuming at
/// the published length writes new nonces under page numbers it wrote before.
@Suite struct EncryptedIndexPageTests {
    static let uuid = FileHeader.randomUUID()
    static let pageSize = 512
    static let files = DatabaseFiles(mainPath: "/db/main")

    static func disk() throws -> SimulatedDisk {
        let disk = SimulatedDisk(seed: 21)
        try disk.mkdir("/db")
        return disk
    }

    static func page(_ n: Int, plainSize: Int) -> [UInt8] {
        let marker = Array("MARKER-PAGE-\(n)-".utf8)
        return (0..<plainSize).map { marker[$0 % marker.count] }
    }

    @Test func sealedPagesReadBackThroughTheCacheAndHideTheirBytes() throws {
        let disk = try Self.disk()
        let cipher = DatabaseCipher(dataKey: .generate(), uuid: Self.uuid)
        let writer = try IndexFileWriter(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize,
                                         fileSizeLimit: Int64(Self.pageSize * 4), newFile: 1, sequence: 1, cipher: cipher)
        #expect(writer.plainPageSize == Self.pageSize - CipherFormat.sealOverhead)
        var ids: [IndexPageID] = []
        for n in 0..<7 { ids.append(try writer.append(Self.page(n, plainSize: writer.plainPageSize))) }
        let extents = try writer.sync()
        writer.close()
        #expect(extents.count > 1)

        // Asked for maps, the store reads through its cache.
        let store = IndexPageStore(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize, mode: .mapped, cipher: cipher)
        #expect(store.mode != .mapped)
        try store.adopt(extents)
        for (n, id) in ids.enumerated() {
            #expect(!store.view().isMapped(id.file))
            #expect(try store.page(id).array == Self.page(n, plainSize: writer.plainPageSize))
        }
        for extent in extents {
            let bytes = try #require(disk.currentBytes(of: Self.files.indexPath(extent.number)))
            #expect(!bytes.contains(subsequence: Array("MARKER-PAGE".utf8)))
        }
        // A plain store refuses the encrypted files.
        let plain = IndexPageStore(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize, mode: .cached(pages: 4))
        #expect(throws: IndexFileError.self) { try plain.adopt(extents) }
    }

    @Test func aFlippedBitOrAMovedPageIsCorruption() throws {
        let disk = try Self.disk()
        let cipher = DatabaseCipher(dataKey: .generate(), uuid: Self.uuid)
        let writer = try IndexFileWriter(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize,
                                         newFile: 1, sequence: 1, cipher: cipher)
        let first = try writer.append(Self.page(1, plainSize: writer.plainPageSize))
        let second = try writer.append(Self.page(2, plainSize: writer.plainPageSize))
        let extents = try writer.sync()
        writer.close()
        let path = Self.files.indexPath(1)
        let original = try #require(disk.currentBytes(of: path))
        func read(_ id: IndexPageID) throws {
            let store = IndexPageStore(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize,
                                       mode: .cached(pages: 4), cipher: cipher)
            try store.adopt(extents)
            _ = try store.page(id)
        }
        try read(first)
        for offset in [Self.pageSize, Self.pageSize + 12, Self.pageSize + 300, 2 * Self.pageSize - 1] {
            var damaged = original
            damaged[offset] ^= 0x20
            try disk.setBytes(damaged, of: path)
            #expect(throws: IndexFileError.self, "byte \(offset)") { try read(first) }
        }
        // Page 2's bytes where page 1 should be.
        var moved = original
        moved.replaceSubrange(Self.pageSize..<(2 * Self.pageSize), with: original[(2 * Self.pageSize)..<(3 * Self.pageSize)])
        try disk.setBytes(moved, of: path)
        #expect(throws: IndexFileError.self) { try read(first) }
        try read(second)
    }

    /// The index writer resuming at the published length reuses page numbers: new nonces.
    @Test func aResumedWriterNeverRepeatsANonceUnderAPageNumber() throws {
        let disk = try Self.disk()
        let cipher = DatabaseCipher(dataKey: .generate(), uuid: Self.uuid)
        let first = try IndexFileWriter(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize,
                                        newFile: 1, sequence: 1, cipher: cipher)
        _ = try first.append(Self.page(0, plainSize: first.plainPageSize))
        let published = try first.sync()[0].length
        first.close()
        var nonces: Set<[UInt8]> = []
        for round in 0..<5 {
            let writer = try IndexFileWriter(files: Self.files, fileSystem: disk, uuid: Self.uuid, pageSize: Self.pageSize,
                                             resume: 1, length: published, sequence: 2, cipher: cipher)
            let id = try writer.append(Self.page(round, plainSize: writer.plainPageSize))
            _ = try writer.sync()
            writer.close()
            #expect(id.page == UInt32(published / Int64(Self.pageSize)))
            let bytes = try #require(disk.currentBytes(of: Self.files.indexPath(1)))
            let start = Int(published)
            nonces.insert(Array(bytes[start..<(start + CipherFormat.nonceSize)]))
        }
        #expect(nonces.count == 5)
    }
}
