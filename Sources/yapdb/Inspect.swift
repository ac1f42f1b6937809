import ArgumentParser
import Foundation
import YapDB

/// `yapdb verify PATH`.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check every checksum, the commit sequence, and the index against the log.")
    @Argument(help: "The database's main file.") var path: String
    @OptionGroup var lock: ReadLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: true, busyTimeout: lock.busyTimeout, key: try cipher.key())
            let progress = Progress("verify")
            let report: YapDatabaseIntegrityReport
            do throws(YapDatabaseError) {
                report = try database.verify { step in progress.show(Verify.describe(step)) }
            } catch { throw ToolFailure(error, path: path) }
            progress.finish()
            print("commits checked: \(report.commitsChecked)")
            print("records checked: \(report.recordsChecked)")
            print("bytes checked: \(report.bytesChecked)")
            if report.isValid {
                print("valid")
            } else {
                for problem in report.problems { print("problem: \(problem)") }
                throw ToolFailure("\(report.problems.count) problem(s) found", code: 4)
            }
        }
    }
}

extension Verify {
    /// One progress line: "12,288 index pages walked, 3,072 commits replayed, 1,024 / 40,000 records read".
    static func describe(_ step: YapDatabaseVerifyProgress) -> String {
        var text = "\(step.pagesWalked) index pages walked, \(step.commitsReplayed) commits replayed"
        if step.recordsTotal > 0 { text += ", \(step.recordsRead) / \(step.recordsTotal) records read" }
        return text
    }
}

/// `yapdb stats PATH`.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show sizes and counts.")
    @Argument(help: "The database's main file.") var path: String
    @OptionGroup var lock: ReadLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: true, busyTimeout: lock.busyTimeout, key: try cipher.key())
            let stats: YapDatabaseStats
            do throws(YapDatabaseError) { stats = try database.stats() } catch { throw ToolFailure(error, path: path) }
            let collections = database.newConnection().read { $0.numberOfCollections() }
            print("snapshot: \(stats.snapshot)")
            print("rows: \(stats.rowCount) in \(collections) collection(s)")
            print("file bytes: \(stats.fileBytes)")
            print("log segments: \(stats.segmentBytes) bytes, live \(stats.liveBytes), dead \(stats.deadBytes)")
            print("index files: \(stats.indexBytes) bytes, live \(stats.indexLiveBytes), dead \(stats.indexDeadBytes)")
            print("index pages: \(stats.indexPages) of \(stats.indexPageSize) bytes (\(stats.indexBytes) bytes); dirty (unwritten): \(stats.unwrittenIndexPages)")
            print("checkpoint: \(stats.checkpointBytes + stats.deadCheckpointBytes) bytes, live \(stats.checkpointBytes), dead \(stats.deadCheckpointBytes)")
            // A read-only open cuts nothing: the bytes stay for the next read-write open.
            print("torn tail not read (the next read-write open cuts it): \(stats.recoveredTruncatedBytes) bytes")
        }
    }
}

/// `yapdb dump PATH [--collection C]`.
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print every row (or one collection's) as collection/key = value.")
    @Argument(help: "The database's main file.") var path: String
    @Option(help: "Only this collection.") var collection: String?
    @OptionGroup var lock: ReadLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: true, busyTimeout: lock.busyTimeout, key: try cipher.key())
            let progress = Progress("dump")
            var count = 0
            database.newConnection().read { tx in
                let collections = collection.map { [$0] } ?? tx.allCollections().sorted()
                for name in collections {
                    for key in tx.allKeys(inCollection: name).sorted() {
                        let value = describe(tx.object(forKey: key, inCollection: name), serialized: tx.serializedObject(forKey: key, inCollection: name))
                        let metadata = tx.serializedMetadata(forKey: key, inCollection: name) == nil ? ""
                            : "  [metadata: \(describe(tx.metadata(forKey: key, inCollection: name), serialized: tx.serializedMetadata(forKey: key, inCollection: name)))]"
                        print("\(name)/\(key) = \(value)\(metadata)")
                        count += 1
                        progress.update(count, unit: "rows")
                    }
                }
            }
            progress.finish()
            FileHandle.standardError.write(Data("\(count) row(s)\n".utf8))
        }
    }
}

/// `yapdb get PATH COLLECTION KEY`.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print one row's object.")
    @Argument(help: "The database's main file.") var path: String
    @Argument(help: "The collection (\"\" for none).") var collection: String
    @Argument(help: "The key.") var key: String
    @OptionGroup var lock: ReadLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: true, busyTimeout: lock.busyTimeout, key: try cipher.key())
            let found: String? = database.newConnection().read { tx in
                guard tx.hasObject(forKey: key, inCollection: collection) else { return nil }
                return describe(tx.object(forKey: key, inCollection: collection), serialized: tx.serializedObject(forKey: key, inCollection: collection))
            }
            guard let found else { throw ToolFailure("no row \(collection)/\(key)", code: 1) }
            print(found)
        }
    }
}

/// `yapdb put PATH COLLECTION KEY VALUE`.
struct Put: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Store a string value (creates the database if it is missing).")
    @Argument(help: "The database's main file.") var path: String
    @Argument(help: "The collection (\"\" for none).") var collection: String
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value, stored as a string.") var value: String
    @OptionGroup var lock: WriteLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let options = YapDatabaseOptions()
            options.busyTimeout = lock.busyTimeout
            options.cipherKey = try cipher.key()
            let database: YapDatabase
            do throws(YapDatabaseError) { database = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options) } catch { throw ToolFailure(error, path: path) }
            do {
                try database.newConnection().write { tx in tx.setObject(value, forKey: key, inCollection: collection) }
                try database.close()
            } catch let error as YapDatabaseError {
                throw ToolFailure(error, path: path)
            }
            print("stored \(collection)/\(key) at snapshot \(database.snapshot)")
        }
    }
}

/// `yapdb compact PATH`.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Rewrite segments with dead data and reclaim their space.")
    @Argument(help: "The database's main file.") var path: String
    @OptionGroup var lock: WriteLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: false, busyTimeout: lock.busyTimeout, key: try cipher.key())
            do {
                let before = try database.stats()
                let progress = Progress("compact")
                progress.update(0, unit: "bytes")
                try database.compact()
                progress.finish()
                let after = try database.stats()
                print("file bytes: \(before.fileBytes) → \(after.fileBytes) (dead \(before.deadBytes) → \(after.deadBytes))")
                try database.close()
            } catch let error as YapDatabaseError {
                throw ToolFailure(error, path: path)
            }
        }
    }
}

/// `--busy-timeout` of the commands that only read: they open the database read-only (beside
/// other readers, on read-only media), waiting this long for a process that writes it.
struct ReadLockOptions: ParsableArguments {
    @Option(help: "Seconds to wait while another process has the database open read-write (default 0: fail at once).")
    var busyTimeout: Double = 0
}

/// `--busy-timeout` of the commands that write: how long they wait for the database's lock.
struct WriteLockOptions: ParsableArguments {
    @Option(help: "Seconds to wait while another process has the database open (default 5).")
    var busyTimeout: Double = 5
}
