import Foundation
import Testing
import YapDB
import YapDBSimulatedDisk
@testable import YapDBFuzzEntry

/// The recovery target's images carry index files (format 2) and the checkpoint's record-22
/// root, so its inputs reach the paged index at open: the seeds made from clean shutdowns open
/// and list their rows from the index pages, in both read modes; and a page damaged under a
/// repaired checksum is reported as a typed error, never a trap.
@Suite struct RecoveryImageIndexTests {
    static func images() -> [RecoveryImage] {
        FuzzEntry.seeds(for: .recovery).map { seed in
            var input = FuzzInput(bytes: seed)
            return RecoveryImage(decoding: &input)
        }
    }

    static func open(_ image: RecoveryImage, cached: Bool) -> (SimulatedDisk, Result<YapDatabase, YapDatabaseError>) {
        let disk = SimulatedDisk(seed: 1)
        RecoveryTarget.place(image, on: disk)
        let options = YapDatabaseOptions()
        options.createIfMissing = false
        options.indexReadMode = cached ? .cached(pages: 4) : .memoryMapped
        do throws(YapDatabaseError) {
            return (disk, .success(try YapDatabase.open(path: RecoveryImage.mainPath, options: options, fileSystem: disk, segmentLimit: 4096)))
        } catch {
            return (disk, .failure(error))
        }
    }

    @Test func recoverySeedsCarryIndexFilesThatOpenInBothReadModes() throws {
        let images = Self.images()
        let indexed = images.filter { image in image.files.contains { $0.kind == .index } && image.files.contains { $0.kind == .checkpoint } }
        #expect(indexed.count >= 6, "\(indexed.count) seeds with index files and a checkpoint")
        #expect(indexed.contains { $0.cachedIndexPages } && indexed.contains { !$0.cachedIndexPages })
        // Every index file of a seed round-trips through the input encoding.
        for image in indexed {
            var input = FuzzInput(bytes: image.encoded())
            let decoded = RecoveryImage(decoding: &input)
            #expect(decoded.files.filter { $0.kind == .index }.map(\.bytes) == image.files.filter { $0.kind == .index }.map(\.bytes))
        }
        var opened = 0
        for image in indexed {
            for cached in [false, true] {
                let (_, result) = Self.open(image, cached: cached)
                guard case .success(let database) = result else { continue }
                opened += 1
                let rows = database.newConnection().read { $0.numberOfKeysInAllCollections() }
                #expect(rows > 0)
                #expect(try database.verify().isValid)
                try database.close()
            }
        }
        #expect(opened >= 6, "\(opened) opens of seeds with index files")
    }

    /// Flipping one byte offset in every tree page of a seed's index file, with every checksum
    /// recomputed (bit 6), gets past the page checksums: opening, reading or `verify()` then
    /// find the damage as a typed error or a problem, and the whole target run returns normally.
    @Test func aDamagedIndexPageUnderARepairedChecksumEndsInATypedError() throws {
        let image = try #require(Self.images().first { image in
            !image.repairChecksums && image.files.contains { $0.kind == .index && $0.bytes.count >= 3 * Seeds.recoveryIndexPageSize }
        })
        var outcomes: [String] = []
        for offset in stride(from: 4, to: Seeds.recoveryIndexPageSize, by: 37) {
            var damaged = image
            damaged.repairChecksums = true
            let index = damaged.files.firstIndex { $0.kind == .index }!
            let size = Seeds.recoveryIndexPageSize
            for page in stride(from: size, to: damaged.files[index].bytes.count - size + 1, by: size) {
                damaged.files[index].bytes[page + offset] ^= 0x5A
            }
            let (_, result) = Self.open(damaged, cached: offset % 2 == 0)
            switch result {
            case .success(let database):
                _ = database.newConnection().read { tx in tx.allCollections().map { tx.allKeys(inCollection: $0).count } }
                let valid = (try? database.verify())?.isValid ?? false
                try? database.close()
                outcomes.append(valid ? "opened" : "opened, verify found damage")
            case .failure(let error):
                outcomes.append("\(error)")
            }
            damaged.encoded().withUnsafeBytes { FuzzEntry.run(.recovery, $0) }
        }
        #expect(outcomes.contains { $0 != "opened" }, "some damage is found: \(outcomes)")
    }
}
