import Testing
import YapDBCrypto

/// Key slots and the key-check block (docs/format.md §12): the right key opens, a wrong or
/// mismatched key gives `wrongKey` (never damage), and hostile slot bytes are refused before
/// any work.
@Suite struct KeySlotTests {
    static let uuid: [UInt8] = Array(101...116)
    static let rawKey = UserKey.raw(Array(0..<32))
    static let passphrase = UserKey.passphrase(Array("correct horse".utf8))

    @Test func rawKeyWrapsAndUnwraps() throws {
        let dataKey = DataKey.generate()
        let slot = try KeySlot.wrapping(dataKey, with: Self.rawKey, databaseUUID: Self.uuid)
        #expect(slot.derivation == .raw && slot.iterations == 0)
        let decoded = try KeySlot(decoding: slot.encoded())
        #expect(decoded == slot)
        #expect(try decoded.unwrap(with: Self.rawKey, databaseUUID: Self.uuid) == dataKey)
        // A 48-byte SQLCipher key spec: its first 32 bytes are the key.
        #expect(try decoded.unwrap(with: .raw(Array(0..<32) + Array(repeating: 5, count: 16)), databaseUUID: Self.uuid) == dataKey)
    }

    @Test func passphraseWrapsAndUnwraps() throws {
        let dataKey = DataKey.generate()
        let salt = [UInt8](repeating: 3, count: CipherFormat.kdfSaltSize)
        let slot = try KeySlot.wrapping(dataKey, with: Self.passphrase, databaseUUID: Self.uuid, iterations: 1000, kdfSalt: salt)
        #expect(slot.derivation == .pbkdf2SHA512 && slot.iterations == 1000 && slot.kdfSalt == salt)
        #expect(try KeySlot(decoding: slot.encoded()).unwrap(with: Self.passphrase, databaseUUID: Self.uuid) == dataKey)
        // No salt given: a random one.
        let random = try KeySlot.wrapping(dataKey, with: Self.passphrase, databaseUUID: Self.uuid, iterations: 1000)
        #expect(random.kdfSalt != salt && random.kdfSalt.count == CipherFormat.kdfSaltSize)
    }

    @Test func aWrongOrMismatchedKeyIsWrongKey() throws {
        let dataKey = DataKey.generate()
        let raw = try KeySlot.wrapping(dataKey, with: Self.rawKey, databaseUUID: Self.uuid)
        let phrase = try KeySlot.wrapping(dataKey, with: Self.passphrase, databaseUUID: Self.uuid, iterations: 1000)
        #expect(throws: CipherError.wrongKey) { try raw.unwrap(with: .raw(Array(1...32)), databaseUUID: Self.uuid) }
        #expect(throws: CipherError.wrongKey) { try raw.unwrap(with: Self.passphrase, databaseUUID: Self.uuid) }
        #expect(throws: CipherError.wrongKey) { try phrase.unwrap(with: .passphrase(Array("wrong".utf8)), databaseUUID: Self.uuid) }
        #expect(throws: CipherError.wrongKey) { try phrase.unwrap(with: Self.rawKey, databaseUUID: Self.uuid) }
        // A slot copied from another database.
        #expect(throws: CipherError.wrongKey) { try raw.unwrap(with: Self.rawKey, databaseUUID: Array(repeating: 0, count: 16)) }
        #expect(throws: CipherError.malformed(reason: "a raw key has 16 bytes; it needs 32")) {
            try raw.unwrap(with: .raw(Array(0..<16)), databaseUUID: Self.uuid)
        }
    }

    /// Any single changed byte of a slot's body is either refused as malformed or fails to
    /// unwrap as `wrongKey`; none gives a data key.
    @Test func everyChangedByteOfASlotIsRefused() throws {
        let slot = try KeySlot.wrapping(DataKey.generate(), with: Self.rawKey, databaseUUID: Self.uuid)
        let body = slot.encoded()
        for index in body.indices {
            var changed = body
            changed[index] ^= 0x40
            do {
                let decoded = try KeySlot(decoding: changed)
                #expect(throws: CipherError.wrongKey) { try decoded.unwrap(with: Self.rawKey, databaseUUID: Self.uuid) }
            } catch {
                guard case .malformed = error else { Issue.record("byte \(index): \(error)"); continue }
            }
        }
    }

    @Test func hostileSlotFieldsAreRefusedBeforeAnyWork() throws {
        let slot = try KeySlot.wrapping(DataKey.generate(), with: Self.passphrase, databaseUUID: Self.uuid, iterations: 1000)
        var body = slot.encoded()
        // Iterations 0xFFFFFFFF: PBKDF2 would run for hours.
        body.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: CipherError.self) { try KeySlot(decoding: body) }
        #expect(throws: CipherError.self) { try KeySlot(decoding: Array(body.prefix(95))) }
        var unknownCipher = slot.encoded()
        unknownCipher[0] = 2
        #expect(throws: CipherError.malformed(reason: "key slot cipher 2 is unknown")) { try KeySlot(decoding: unknownCipher) }
    }

    @Test func keyCheckPassesOnlyForTheDatabasesDataKey() throws {
        let dataKey = DataKey.generate()
        let block = try dataKey.keyCheckBlock(databaseUUID: Self.uuid)
        #expect(block.count == CipherFormat.keyCheckSize)
        try dataKey.verifyKeyCheck(block, databaseUUID: Self.uuid)
        #expect(throws: CipherError.wrongKey) { try DataKey.generate().verifyKeyCheck(block, databaseUUID: Self.uuid) }
        #expect(throws: CipherError.wrongKey) { try dataKey.verifyKeyCheck(block, databaseUUID: Array(repeating: 1, count: 16)) }
        for index in block.indices {
            var changed = block
            changed[index] ^= 1
            #expect(throws: CipherError.wrongKey) { try dataKey.verifyKeyCheck(changed, databaseUUID: Self.uuid) }
        }
    }

    /// PBKDF2-HMAC-SHA512, one iteration, "password" and "salt": the published test vector's
    /// first 32 bytes (RFC 6070's inputs, SHA-512 as in its errata and common test suites).
    @Test func passphraseDerivationIsPBKDF2WithSHA512() throws {
        let key = try UserKey.passphrase(Array("password".utf8)).keyEncryptionKey(iterations: 1, salt: Array("salt".utf8))
        let hex = key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252")
        #expect(throws: CipherError.self) { try UserKey.passphrase([1]).keyEncryptionKey(iterations: 0, salt: []) }
    }
}
