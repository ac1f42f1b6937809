import Foundation
import YapDB
import YapDBSimulatedDisk

/// Target (g), maintenance on an arbitrary database image: the recovery target's images
/// (`RecoveryImage`), but once one opens, the calls that add up what the files say — `stats()`,
/// `verify()`, `compact()` and `stats()` again — then a secondary index built from its rows
/// and `explain()`, counts and listings over it, with `LIMIT`/`OFFSET` near `Int.max` and a
/// `LIKE`. Counters and lengths taken from the image (row ids, segment usage, tree counts) must
/// give answers or typed errors: a trap is a finding.
enum MaintenanceTarget {
    static let name = "maintenance"
    /// The queries explained and counted over the index (`n`: the object's byte count).
    static let queries = [
        "WHERE n > 3 ORDER BY n LIMIT 9223372036854775807 OFFSET 9223372036854775807",
        "WHERE n >= 0 ORDER BY n DESC LIMIT 1 OFFSET 9223372036854775806",
        "WHERE n LIKE '%1%' OR n IN (1, 2, 3)",
        "",
    ]

    static func run(_ input: FuzzInput) {
        var input = input
        let image = RecoveryImage(decoding: &input)
        let disk = SimulatedDisk(seed: 1)
        RecoveryTarget.place(image, on: disk)
        let options = YapDatabaseOptions()
        options.durability = image.normalDurability ? .normal : .full
        options.createIfMissing = false
        options.indexReadMode = image.cachedIndexPages ? .cached(pages: 4) : .memoryMapped
        options.compactionThreshold = [0.5, 0, 0.2, 1][image.corruptAction]
        let database: YapDatabase
        do throws(YapDatabaseError) {
            database = try YapDatabase.open(path: RecoveryImage.mainPath, options: options, fileSystem: disk, segmentLimit: 4096)
        } catch {
            return   // a typed error: what a damaged image may get
        }
        _ = try? database.stats()
        _ = try? database.verify()
        _ = try? database.compact()
        _ = try? database.stats()
        _ = try? database.checkpoint()
        _ = try? database.verify()

        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("n", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            dict["n"] = (object as? Data)?.count ?? (object as? String)?.utf8.count ?? 0
        }
        if database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "n") {
            database.newConnection().read { tx in
                guard let index = tx.ext("n") as? YapDatabaseSecondaryIndexTransaction else { return }
                for text in queries {
                    let query = YapDatabaseQuery(string: text)
                    _ = try? index.explain(query)
                    _ = index.numberOfRows(matching: query)
                    var listed = 0
                    _ = index.iterateKeys(matching: query) { _, _, stop in
                        listed += 1
                        if listed >= 1_000 { stop = true }
                    }
                }
            }
        }
        _ = try? database.close()
        // The parses kept by the secondary index's shared table would be reported by the leak
        // check as lost (see `SharedParseCache.removeAll`): the next input starts without them.
        SharedParseCache.removeAll()
    }
}
