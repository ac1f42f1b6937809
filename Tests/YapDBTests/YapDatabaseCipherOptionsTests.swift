import Foundation
import Testing
@testable import YapDB
import TestSupport

/// YapDatabase's cipher options and the Swift-native key (docs/format.md §12): defaults,
/// copies, which key source wins, and that a key source giving no key writes nothing.
@Suite struct YapDatabaseCipherOptionsTests {
    @Test func defaultsAreAPlainDatabase() throws {
        let o = YapDatabaseOptions()
        #expect(o.cipherKey == nil)
        #expect(o.cipherCompatability == .default)
        #expect(o.kdfIterNumber == 0 && o.cipherDefaultkdfIterNumber == 0)
        #expect(o.cipherPageSize == 0 && o.cipherUnencryptedHeaderLength == 0)
        #expect(o.cipherKeyBlock().isEmpty && o.cipherSaltBlock().isEmpty && o.cipherKeySpecBlock().isEmpty)
        #expect(!o.values.cipher.requestsEncryption)
        #expect(try o.values.cipher.resolvedKey() == nil)
    }

    @Test func theSpellingsOfYapDatabaseCompile() {
        // As YapDatabase's Swift users write them (YapDatabaseOptions.h under SQLITE_HAS_CODEC).
        let o = YapDatabaseOptions()
        o.cipherKeyBlock = { Data("passphrase".utf8) }
        o.cipherSaltBlock = { Data(repeating: 1, count: 16) }
        o.cipherKeySpecBlock = { Data(repeating: 2, count: 48) }
        o.cipherCompatability = .version3
        o.kdfIterNumber = 64_000
        o.cipherDefaultkdfIterNumber = 4000
        o.cipherPageSize = 4096
        o.cipherUnencryptedHeaderLength = 32
        let c = o.copy()
        #expect(c.cipherCompatability == .version3 && c.kdfIterNumber == 64_000 && c.cipherDefaultkdfIterNumber == 4000)
        #expect(c.cipherPageSize == 4096 && c.cipherUnencryptedHeaderLength == 32)
        #expect(c.cipherKeyBlock() == Data("passphrase".utf8) && c.cipherSaltBlock().count == 16)
        #expect(c.values == o.values)
        c.cipherKey = .raw(Data(count: 32))
        #expect(c.values != o.values)
        #expect(YapDatabaseCipherCompatability(rawValue: 4) == .version4)
    }

    @Test func theNativeKeyWinsThenTheKeySpecThenTheKeyBlock() throws {
        let o = YapDatabaseOptions()
        o.cipherKeyBlock = { Data("phrase".utf8) }
        #expect(try o.values.cipher.resolvedKey() == .passphrase(Array("phrase".utf8)))
        o.cipherKeySpecBlock = { Data(repeating: 7, count: 48) }
        #expect(try o.values.cipher.resolvedKey() == .raw([UInt8](repeating: 7, count: 48)))
        o.cipherKey = .passphrase("native")
        #expect(try o.values.cipher.resolvedKey() == .passphrase(Array("native".utf8)))
        o.cipherKey = .raw(Data(repeating: 3, count: 32))
        #expect(try o.values.cipher.resolvedKey() == .raw([UInt8](repeating: 3, count: 32)))
    }

    @Test func aSourceThatGivesNoKeyIsKeyUnavailable() {
        let block = YapDatabaseOptions()
        block.cipherKeyBlock = { Data() }
        #expect(throws: YapDatabaseError.keyUnavailable) { try block.values.cipher.resolvedKey() }
        let spec = YapDatabaseOptions()
        spec.cipherKeySpecBlock = { Data() }
        #expect(throws: YapDatabaseError.keyUnavailable) { try spec.values.cipher.resolvedKey() }
        let native = YapDatabaseOptions()
        native.cipherKey = .passphrase("")
        #expect(throws: YapDatabaseError.keyUnavailable) { try native.values.cipher.resolvedKey() }
    }

    @Test func creationIterationsFollowKdfIterNumberThenTheDefault() {
        let o = YapDatabaseOptions()
        #expect(o.values.cipher.creationIterations == 256_000)
        o.cipherDefaultkdfIterNumber = 100_000
        #expect(o.values.cipher.creationIterations == 100_000)
        o.kdfIterNumber = 64_000
        #expect(o.values.cipher.creationIterations == 64_000)
        o.kdfIterNumber = UInt.max
        #expect(o.values.cipher.creationIterations == 10_000_000)
    }

    @Test func theKeyNeverShowsInDescriptions() {
        #expect(!"\(YapDatabaseCipherKey.passphrase("hunter2"))".contains("hunter2"))
        #expect(!String(reflecting: YapDatabaseCipherKey.raw(Data("rawsecret".utf8))).contains("rawsecret"))
    }

    /// A key source that gives no key (a locked keychain) fails the open before any file
    /// exists: no database is ever created in the clear for a caller who asked for a key.
    @Test func aKeySourceWithoutAKeyWritesNothing() throws {
        let directory = TemporaryDirectory("yapdb-cipher-open")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("db"))
        let locked = YapDatabaseOptions()
        locked.cipherKeyBlock = { Data() }
        #expect(throws: YapDatabaseError.keyUnavailable) { try YapDatabase.open(url: url, options: locked) }
        let lockedSpec = YapDatabaseOptions()
        lockedSpec.cipherKeySpecBlock = { Data() }
        #expect(YapDatabase(url: url, options: lockedSpec) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func rekeyOfAPlainDatabaseIsRefused() throws {
        let directory = TemporaryDirectory("yapdb-cipher-rekey")
        defer { directory.remove() }
        let database = try YapDatabase.open(url: URL(fileURLWithPath: directory.file("db")))
        #expect(throws: YapDatabaseError.io(errno: ENOTSUP, operation: "rekey")) { try database.rekey(to: .passphrase("new")) }
        #expect(throws: YapDatabaseError.keyUnavailable) { try database.rekey(to: .raw(Data())) }
        try database.close()
    }
}
