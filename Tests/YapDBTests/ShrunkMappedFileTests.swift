#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import TestSupport
@testable import YapDB

/// Another program truncates a file the database reads through a memory map (a restore with
/// `cp` over a live database does): the next transaction finds the file shorter than its map,
/// and every read that would have touched the missing bytes — and stopped the process with
/// `SIGBUS` — reports `corrupted` instead; rows in intact files still read. Real files (the
/// simulated disk copies instead of mapping), checked at every transaction.
@Suite struct ShrunkMappedFileTests {
    static let rows = 400

    /// A database in `.memoryMapped` mode on 64 KiB segments, with `rows` rows of 1 KiB
    /// (several sealed segments, mapped whole) and an index checkpoint (the index file mapped).
    static func database(in directory: TemporaryDirectory) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .normal
        options.indexReadMode = .memoryMapped
        let database = try YapDatabase.open(path: directory.file("db.yapdb"), options: options, segmentLimit: 64 << 10,
                                            mappedFileCheckInterval: .zero)
        // Random (incompressible) values, 20 rows per commit: the segments roll between commits.
        var random = SeededRandom(seed: 5)
        let connection = database.newConnection()
        for batch in stride(from: 0, to: rows, by: 20) {
            let values = (batch..<(batch + 20)).map { _ in Data(random.bytes(1024)) }
            try connection.write { tx in
                for (i, value) in zip(batch..., values) { tx.setObject(value, forKey: "k\(i)", inCollection: "c") }
            }
        }
        try database.checkpoint()
        return database
    }

    /// Truncates `path` to `length` bytes through its path, as another program would.
    static func truncateFromOutside(_ path: String, to length: Int) {
        #expect(truncate(path, off_t(length)) == 0, "truncate \(path): errno \(errno)")
    }

    /// Reads every row with the lending read (which throws what the compatible read logs):
    /// the rows read and the errors, by kind.
    static func readAll(_ database: YapDatabase) -> (read: Int, corrupted: Int, other: [YapDatabaseError]) {
        var read = 0, corrupted = 0
        var other: [YapDatabaseError] = []
        database.newConnection().read { tx in
            for i in 0..<rows {
                do throws(YapDatabaseError) {
                    if try tx.withSerializedObject(forKey: "k\(i)", inCollection: "c", { $0.count }) ?? 0 >= 1024 { read += 1 }
                } catch {
                    if case .corrupted = error { corrupted += 1 } else { other.append(error) }
                }
            }
        }
        return (read, corrupted, other)
    }

    @Test func aTruncatedSegmentGivesCorruptedReadsNotASignal() throws {
        let directory = TemporaryDirectory("yapdb-shrunk-segment")
        defer { directory.remove() }
        let database = try Self.database(in: directory)
        defer { try? database.close() }
        let before = Self.readAll(database)
        #expect(before.read == Self.rows, "\(before)")
        let segment = directory.file("db.yapdb-seg-0000000001")
        #expect(FileManager.default.fileExists(atPath: segment))
        Self.truncateFromOutside(segment, to: 64)
        let result = Self.readAll(database)
        #expect(result.corrupted > 0, "the rows of the truncated segment report corrupted")
        #expect(result.read > 0 && result.read + result.corrupted == Self.rows, "the other segments still read")
        #expect(result.other.isEmpty, "\(result.other)")
    }

    @Test func aTruncatedIndexFileGivesCorruptedReadsNotASignal() throws {
        let directory = TemporaryDirectory("yapdb-shrunk-index")
        defer { directory.remove() }
        let database = try Self.database(in: directory)
        defer { try? database.close() }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("-index-") && !$0.hasSuffix("-root") }
        let index = try #require(names.sorted().last)
        Self.truncateFromOutside(directory.file(index), to: 4096)
        let result = Self.readAll(database)
        #expect(result.corrupted > 0, "lookups through the truncated index file report corrupted")
        #expect(result.other.isEmpty, "\(result.other)")
    }
}
