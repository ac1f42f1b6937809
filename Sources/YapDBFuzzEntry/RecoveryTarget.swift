import Foundation
import YapDB
import YapDBStorage
import YapDBSimulatedDisk

/// Target (b), recovery of an arbitrary database image. See `FuzzEntry.recoverImage`.
enum RecoveryTarget {
    static let name = "recovery"
    static let probeCollection = "fuzz-probe"

    static func run(_ input: FuzzInput) {
        var input = input
        let image = RecoveryImage(decoding: &input)
        let disk = SimulatedDisk(seed: 1)
        place(image, on: disk)

        let options = YapDatabaseOptions()
        options.corruptAction = [.fail, .rename, .delete, .fail][image.corruptAction]
        options.durability = image.normalDurability ? .normal : .full
        options.createIfMissing = image.createIfMissing
        options.compression = image.compression ? .lz4 : YapDatabaseCompression.none
        options.indexReadMode = image.cachedIndexPages ? .cached(pages: 4) : .memoryMapped
        let database: YapDatabase
        do throws(YapDatabaseError) {
            database = try YapDatabase.open(path: RecoveryImage.mainPath, options: options, fileSystem: disk, segmentLimit: 4096)
        } catch {
            return   // a typed error: what a damaged image may get
        }

        // It opened: everything in it must be readable without trapping, and it must take a
        // commit, close, and open again with the same rows.
        // Index pages are read on demand, so damage may show only now: the listing must agree
        // with the counts only when verify() finds the index sound.
        let connection = database.newConnection()
        let sound = (try? database.verify())?.isValid == true
        let rows = readEverything(connection, strict: sound)
        var probed = true
        do {
            try connection.write { tx in
                tx.setObject(Data("probe".utf8), forKey: "probe", inCollection: probeCollection)
            }
        } catch YapDatabaseError.valueTooLarge {
            // The image's root record chose index pages too small for the probe's key (256-byte
            // pages hold no row key at all): a typed refusal, and nothing was stored.
            probed = false
        } catch YapDatabaseError.corrupted {
            // Index pages are read when a commit first touches them, not at open: a damaged
            // page the commit's path crosses is found here, as a typed error, and nothing
            // was stored.
            probed = false
        } catch {
            finding(name, "a database that opened refuses a commit: \(error)")
        }
        if image.compact { _ = try? database.compact() }
        _ = try? database.close()

        let reopenOptions = options.copy()
        reopenOptions.corruptAction = .fail
        let again: YapDatabase
        do throws(YapDatabaseError) {
            again = try YapDatabase.open(path: RecoveryImage.mainPath, options: reopenOptions, fileSystem: disk, segmentLimit: 4096)
        } catch {
            finding(name, "a database that opened, committed and closed does not open again: \(error)")
        }
        var expected = rows
        if probed { expected.insert(RowKey(collection: probeCollection, key: "probe")) }
        let after = readEverything(again.newConnection(), strict: sound)
        // With a damaged index, listings stop at the damage (which the probe's insert may have
        // moved): only an undamaged one must come back row for row.
        guard after == expected || !sound else {
            finding(name, "reopened with \(after.count) rows, expected \(expected.count): "
                    + "missing \(expected.subtracting(after).sorted().prefix(3)), extra \(after.subtracting(expected).sorted().prefix(3))")
        }
        _ = try? again.close()
    }

    /// Writes the image's files, synced, with their directory synced.
    static func place(_ image: RecoveryImage, on disk: SimulatedDisk) {
        do throws(IOFailure) {
            try disk.mkdir(RecoveryImage.directory)
            for (path, bytes) in image.placed() {
                let file = try disk.open(path, mode: .create)
                try file.truncate(to: 0)
                try file.write(bytes, at: 0)
                try file.sync()
                file.close()
            }
            try disk.syncDirectory(RecoveryImage.directory)
        } catch {
            finding(name, "simulated disk refused the image: \(error)")
        }
    }

    struct RowKey: Hashable, Comparable, CustomStringConvertible {
        var collection: String
        var key: String
        static func < (a: RowKey, b: RowKey) -> Bool { (a.collection, a.key) < (b.collection, b.key) }
        var description: String { "\(collection)/\(key)" }
    }

    /// Every row's key, after reading its object and metadata (which may fail: the values of
    /// an arbitrary image can be anything). `strict`: the keys listed must be as many as the
    /// index counts (not so when a damaged index page stops a listing: the counts are in the
    /// branch pages above it).
    static func readEverything(_ connection: YapDatabaseConnection, strict: Bool) -> Set<RowKey> {
        connection.read { tx in
            var keys = Set<RowKey>()
            for collection in tx.allCollections() {
                for key in tx.allKeys(inCollection: collection) {
                    _ = tx.object(forKey: key, inCollection: collection)
                    _ = tx.metadata(forKey: key, inCollection: collection)
                    keys.insert(RowKey(collection: collection, key: key))
                }
            }
            guard !strict || keys.count == tx.numberOfKeysInAllCollections() else {
                finding(name, "\(keys.count) keys listed, \(tx.numberOfKeysInAllCollections()) counted")
            }
            return keys
        }
    }
}
