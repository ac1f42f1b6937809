import Testing
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport

@Suite struct CheckpointExtensionTests {
    @Test func extensionImagesRoundTripCompressedAndNot() throws {
        for compress in [false, true] {
            let disk = SimulatedDisk(seed: 1)
            try disk.mkdir("/db")
            let files = DatabaseFiles(mainPath: "/db/main")
            let uuid = FileHeader.randomUUID()
            let info = CheckpointInfo(snapshot: 3, nextRowid: 2, replay: LogPosition(segment: 1, offset: 64), rowCount: 1, collectionCount: 1)
            let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: uuid, number: 1, info: info, compress: compress)
            try writer.beginCollection("c", rowCount: 1)
            try writer.add(CheckpointEntry(key: "k", rowid: 1, object: RecordLocation(segment: 1, offset: 64, length: 20), metadata: nil))
            try writer.setSegmentUsage([1: 20])
            let big = [UInt8](repeating: 7, count: 5000) + Array("tail".utf8)
            try writer.addExtensionImage(name: "view:a", image: big)
            try writer.addExtensionImage(name: "view:b", image: [])
            _ = try writer.finish()
            var images: [String: [UInt8]] = [:]
            let (read, usage) = try CheckpointReader.read(files: files, fileSystem: disk, uuid: uuid, number: 1,
                                                          collection: { _, _ in }, entry: { _ in },
                                                          extensionImage: { name, image in images[name] = image })
            #expect(read == info && usage == [1: 20])
            #expect(images == ["view:a": big, "view:b": []], "compress \(compress)")
            // Every flipped byte of the file is caught.
            let bytes = disk.currentBytes(of: files.checkpointPath(1))!
            var rng = SeededRandom(seed: 3)
            for _ in 0..<200 {
                var damaged = bytes
                damaged[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(1 + rng.next() % 255)
                try disk.setBytes(damaged, of: files.checkpointPath(1))
                #expect(throws: StorageError.self) {
                    _ = try CheckpointReader.read(files: files, fileSystem: disk, uuid: uuid, number: 1, collection: { _, _ in }, entry: { _ in })
                }
            }
        }
    }
}
