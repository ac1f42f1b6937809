#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDB
import YapDBEngine
import YapDBStorage
import TestSupport

/// Bad input (issue 5, item 4): one test per row. Each opens through `YapDatabase.open`,
/// expects its typed `YapDatabaseError`, and compares every file of the directory, byte for
/// byte, before and after — except where changing them is the design (a torn tail is cut).
@Suite(.serialized) struct BadInputTests {
    /// A temporary directory with a database path in it.
    final class Place {
        let directory = TemporaryDirectory("yapdb-bad")
        var path: String { directory.file("db") }
        var url: URL { URL(fileURLWithPath: path) }
        deinit { directory.remove() }

        /// Every file in the directory and its bytes.
        func files() -> [String: [UInt8]] {
            var result: [String: [UInt8]] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                var isDirectory: ObjCBool = false
                let full = directory.file(name)
                if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), isDirectory.boolValue {
                    result[name + "/"] = []
                } else {
                    result[name] = FileManager.default.contents(atPath: full).map { [UInt8]($0) } ?? []
                }
            }
            return result
        }

        func write(_ bytes: [UInt8], to name: String = "db") {
            _ = FileManager.default.createFile(atPath: directory.file(name), contents: Data(bytes))
        }

        /// Builds a database of `commits` commits through the engine and stops without a
        /// checkpoint or close, as a killed process would; returns the last segment's path.
        @discardableResult
        func build(commits: Int) throws -> String {
            let engine = try Engine.open(path: path)
            for index in 0..<commits {
                _ = try engine.write { tx in
                    try Workload.Operation.set(collection: "c", key: "k\(index)", object: Array("value \(index)".utf8) + [UInt8](repeating: UInt8(index), count: 300),
                                               metadata: nil).apply(to: tx)
                }
            }
            engine.abandon()
            return directory.file(files().keys.filter { $0.hasPrefix("db-seg-") }.sorted().last!)
        }
    }

    /// Opens `place` expecting `expected`; checks the files did not change.
    func expectOpen(_ place: Place, fails expected: YapDatabaseError, options: YapDatabaseOptions = YapDatabaseOptions(),
                    sourceLocation: SourceLocation = #_sourceLocation) {
        let before = place.files()
        #expect(throws: expected, sourceLocation: sourceLocation) { _ = try YapDatabase.open(url: place.url, options: options) }
        #expect(place.files() == before, "the files are unchanged", sourceLocation: sourceLocation)
    }

    @Test func missingFileWithoutCreate() {
        let place = Place()
        let options = YapDatabaseOptions()
        options.createIfMissing = false
        expectOpen(place, fails: .fileNotFound, options: options)
        #expect(place.files().isEmpty, "nothing was created")
    }

    @Test func zeroByteFile() {
        let place = Place()
        place.write([])
        expectOpen(place, fails: .notADatabase)
    }

    @Test func randomBytes() {
        let place = Place()
        var rng = SeededRandom(seed: 99)
        place.write(rng.bytes(20_000))
        expectOpen(place, fails: .notADatabase)
    }

    @Test func anotherFormatsFile() {
        let place = Place()
        // An SQLite 3 database header: "SQLite format 3\0", page size 4096, …
        var sqlite = Array("SQLite format 3\0".utf8) + [0x10, 0x00, 0x01, 0x01, 0x00, 0x40, 0x20, 0x20]
        sqlite += [UInt8](repeating: 0, count: 8192 - sqlite.count)
        place.write(sqlite)
        expectOpen(place, fails: .notADatabase)
    }

    @Test func newerVersion() throws {
        let place = Place()
        try place.build(commits: 3)
        var main = place.files()["db"]!
        for copy in [0, Format.mainHeaderCopyOffset] { main[copy + 8] = UInt8(Format.version + 1) }
        place.write(main)
        expectOpen(place, fails: .unsupportedVersion(found: Int(Format.version) + 1, supported: Int(Format.version)))
    }

    /// Not an error by design: the other copy opens the database (a warning is logged). The
    /// damaged copy is left as it is (header bytes are never rewritten; only the high-water
    /// mark slots after them are).
    @Test func oneHeaderCopyDamaged() throws {
        let place = Place()
        try place.build(commits: 3)
        var main = place.files()["db"]!
        main[Format.mainHeaderCopyOffset + 20] ^= 0xFF
        place.write(main)
        let database = try YapDatabase.open(url: place.url)
        #expect(database.snapshot == 3)
        #expect(try database.verify().isValid)
        try database.close()
        let after = place.files()["db"]!
        for copy in [0, Format.mainHeaderCopyOffset] {
            #expect(after[copy..<(copy + Format.headerSize)] == main[copy..<(copy + Format.headerSize)], "the header copies are not rewritten")
        }
    }

    /// By design not unchanged: a commit cut off mid-record is a torn tail, and recovery
    /// truncates it (reported in `stats().recoveredTruncatedBytes`). Every earlier commit stays.
    @Test func truncatedMidLog() throws {
        let place = Place()
        let segment = try place.build(commits: 5)
        let size = place.files()[Paths.fileName(of: segment)]!.count
        #expect(truncate(segment, off_t(size - 20)) == 0)
        let database = try YapDatabase.open(url: place.url)
        #expect(database.snapshot == 4, "the torn last commit is gone, the four before it remain")
        #expect(try database.stats().recoveredTruncatedBytes > 0)
        #expect(try database.verify().isValid)
        database.newConnection().read { tx in
            #expect(tx.numberOfKeys(inCollection: "c") == 4)
        }
    }

    @Test func bitFlipInsideACommittedRecord() throws {
        let place = Place()
        let segment = try place.build(commits: 5)
        let name = Paths.fileName(of: segment)
        var bytes = place.files()[name]!
        bytes[Format.headerSize + 40] ^= 0x10   // inside the first commit's first record
        place.write(bytes, to: name)
        let before = place.files()
        #expect {
            _ = try YapDatabase.open(url: place.url)
        } throws: { error in
            guard case .corrupted = error as? YapDatabaseError else { return false }
            return true
        }
        #expect(place.files() == before, "the files are unchanged")
    }

    @Test func lockedByAnotherProcess() throws {
        let place = Place()
        try place.build(commits: 2)
        let child = try ChildProcess(["hold", place.path])
        #expect(child.readLine(timeout: 30) == "ready")
        expectOpen(place, fails: .locked)
        child.closeInput()
        child.waitForExit()
        let database = try YapDatabase.open(url: place.url)
        #expect(database.snapshot == 2, "opens once the other process let go")
        try database.close()
    }

    @Test func openedTwiceInOneProcess() throws {
        let place = Place()
        let first = try YapDatabase.open(url: place.url)
        first.newConnection().readWrite { tx in tx.setObject("x", forKey: "k", inCollection: nil) }
        expectOpen(place, fails: .alreadyOpen)
        #expect(YapDatabase(url: place.url) == nil, "the compatible form gives nil")
        try first.close()
    }

    @Test func directoryInsteadOfAFile() throws {
        let place = Place()
        try FileManager.default.createDirectory(atPath: place.path, withIntermediateDirectories: false)
        expectOpen(place, fails: .notADatabase)
    }
}
