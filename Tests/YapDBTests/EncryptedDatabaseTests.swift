import Foundation
import Testing
@testable import YapDB
import TestSupport

/// Encryption at rest through the public API (docs/format.md §12; issue 26's "Done when"):
/// marker strings written as collection names, keys, values, secondary-index and full-text
/// keys are found in no byte of any file of an encrypted database (and are found in a plain
/// one written the same way, so the search can find them); the right key reads everything
/// back; a wrong key and no key are typed errors that change no file; a flipped bit in a
/// committed record is `corrupted`, never wrong data.
@Suite(.serialized) struct EncryptedDatabaseTests {
    static let collection = "MKCOLLECTION"
    static let markers = ["MKCOLLECTION", "MKKEY", "MKVALUE", "mkftsword", "MKINDEXED"]
    static let key = YapDatabaseCipherKey.raw(Data(repeating: 0xA5, count: 32))

    static func options(_ key: YapDatabaseCipherKey?) -> YapDatabaseOptions {
        let options = YapDatabaseOptions()
        options.durability = .full
        options.compression = .none
        options.cipherKey = key
        return options
    }

    static func register(_ database: YapDatabase) throws {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("indexed", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["indexed"] = "MKINDEXED-" + text.suffix(3) }
        }
        try #require(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "idx"))
        let fts = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in dict["content"] = object as? String }
        try #require(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: fts), withName: "fts"))
    }

    static func value(_ n: Int) -> String { "MKVALUE mkftsword " + String(format: "%03d", n) }

    /// Writes 30 rows in 30 commits, then a checkpoint (closing), so the data is in log
    /// segments, a checkpoint and index pages.
    static func fill(_ url: URL, key: YapDatabaseCipherKey?) throws {
        let database = try YapDatabase.open(url: url, options: options(key))
        try register(database)
        let connection = database.newConnection()
        for n in 0..<30 {
            try connection.write { tx in tx.setObject(value(n), forKey: "MKKEY-\(n)", inCollection: collection) }
        }
        try database.close()
    }

    static func everyFile(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
        }
        return files
    }

    static func found(_ files: [String: Data]) -> Set<String> {
        Set(markers.filter { marker in files.values.contains { $0.range(of: Data(marker.utf8)) != nil } })
    }

    @Test func noMarkerIsStoredInTheClearAndTheRightKeyReadsEverythingBack() throws {
        let plainDirectory = TemporaryDirectory("yapdb-plain-markers")
        defer { plainDirectory.remove() }
        try Self.fill(URL(fileURLWithPath: plainDirectory.file("db")), key: nil)
        // The search works: a plain database stores every marker in the clear.
        #expect(Self.found(try Self.everyFile(plainDirectory)) == Set(Self.markers))

        let directory = TemporaryDirectory("yapdb-encrypted-markers")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("db"))
        try Self.fill(url, key: Self.key)
        let files = try Self.everyFile(directory)
        #expect(files.keys.contains { $0.contains("-index-") } && files.keys.contains { $0.contains("-checkpoint-") })
        #expect(Self.found(files).isEmpty, "found in the clear: \(Self.found(files))")

        let database = try YapDatabase.open(url: url, options: Self.options(Self.key))
        try Self.register(database)
        database.newConnection().read { tx in
            for n in 0..<30 { #expect(tx.object(forKey: "MKKEY-\(n)", inCollection: Self.collection) as? String == Self.value(n)) }
            var hits: [String] = []
            (tx.ext("fts") as? YapDatabaseFullTextSearchTransaction)?.enumerateKeys(matching: "mkftsword") { _, key, _ in hits.append(key) }
            #expect(hits.count == 30)
            let query = YapDatabaseQuery(string: "WHERE indexed = ?", parameters: ["MKINDEXED-007"])
            var indexed: [String] = []
            (tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)?.enumerateKeys(matching: query) { _, key, _ in indexed.append(key) }
            #expect(indexed == ["MKKEY-7"])
        }
        try database.close()
    }

    @Test func aWrongKeyAndNoKeyAreTypedErrorsAndChangeNoFile() throws {
        let directory = TemporaryDirectory("yapdb-encrypted-keys")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("db"))
        try Self.fill(url, key: Self.key)
        let before = try Self.everyFile(directory)
        for action in [YapDatabaseCorruptAction.fail, .rename, .delete] {
            let wrong = Self.options(.raw(Data(repeating: 0xA6, count: 32)))
            wrong.corruptAction = action
            #expect(throws: YapDatabaseError.wrongKey) { try YapDatabase.open(url: url, options: wrong) }
            let none = Self.options(nil)
            none.corruptAction = action
            #expect(throws: YapDatabaseError.keyUnavailable) { try YapDatabase.open(url: url, options: none) }
            let locked = Self.options(nil)
            locked.corruptAction = action
            locked.cipherKeyBlock = { Data() }
            #expect(throws: YapDatabaseError.keyUnavailable) { try YapDatabase.open(url: url, options: locked) }
        }
        #expect(try Self.everyFile(directory) == before)
    }

    @Test func aFlippedBitInACommittedRecordIsCorruptionNeverWrongData() throws {
        let directory = TemporaryDirectory("yapdb-encrypted-flip")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("db"))
        let database = try YapDatabase.open(url: url, options: Self.options(Self.key))
        let connection = database.newConnection()
        for n in 0..<5 { try connection.write { tx in tx.setObject(Self.value(n), forKey: "k\(n)", inCollection: "c") } }
        try database.close()
        // The log segment holds the first commit's object record at byte 128 (after both
        // headers): one bit of its ciphertext.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let segment = try #require(names.filter { $0.contains("-seg-") }.sorted().first)
        let path = URL(fileURLWithPath: directory.file(segment))
        var bytes = try Data(contentsOf: path)
        bytes[170] ^= 0x08
        try bytes.write(to: path)
        // The checkpoint replays nothing before it, so the open succeeds; the record is read
        // when asked for and fails to authenticate: no value, never another one, and verify
        // reports the damage.
        let reopened = try YapDatabase.open(url: url, options: Self.options(Self.key))
        reopened.newConnection().read { tx in
            #expect(tx.object(forKey: "k0", inCollection: "c") == nil)
            for n in 1..<5 { #expect(tx.object(forKey: "k\(n)", inCollection: "c") as? String == Self.value(n)) }
        }
        let report = try reopened.verify()
        #expect(!report.isValid && report.problems.contains { $0.contains("authenticate") })
        try reopened.close()
    }

    @Test func rekeyChangesTheKeyAndKeepsTheData() throws {
        let directory = TemporaryDirectory("yapdb-encrypted-rekey")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("db"))
        let options = Self.options(Self.key)
        options.kdfIterNumber = 1000
        let database = try YapDatabase.open(url: url, options: options)
        try database.newConnection().write { tx in tx.setObject("kept", forKey: "k", inCollection: "c") }
        try database.rekey(to: .passphrase("a new passphrase"))
        try database.close()
        #expect(throws: YapDatabaseError.wrongKey) { try YapDatabase.open(url: url, options: Self.options(Self.key)) }
        let reopened = try YapDatabase.open(url: url, options: Self.options(.passphrase("a new passphrase")))
        reopened.newConnection().read { tx in #expect(tx.object(forKey: "k", inCollection: "c") as? String == "kept") }
        try reopened.close()
    }
}
