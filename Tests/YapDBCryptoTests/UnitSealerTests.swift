import Testing
import YapDBCrypto

/// Sealing one unit (docs/format.md §12): round trip, a tampered byte, a unit moved to another
/// address, another file key, and fresh nonces for every seal of the same place.
@Suite struct UnitSealerTests {
    static let uuid: [UInt8] = Array(1...16)
    static let dataKey = DataKey.generate()
    static let salt = [UInt8](repeating: 7, count: CipherFormat.fileSaltSize)

    static func sealer(salt: [UInt8] = salt, kind: UInt8 = 2, number: UInt32 = 1, key: DataKey = dataKey) throws -> UnitSealer {
        try key.fileSealer(salt: salt, databaseUUID: uuid, fileKind: kind, fileNumber: number)
    }

    static func address(_ position: UInt64 = 64, kind: UInt8 = 2, number: UInt32 = 1,
                        type: SealedUnitType = .logRecord, uuid: [UInt8] = uuid) -> UnitAddress {
        UnitAddress(databaseUUID: uuid, fileKind: kind, fileNumber: number, position: position, unitType: type)
    }

    @Test func roundTripsAndHidesThePlaintext() throws {
        let plaintext = Array("collection:secret-marker-key:value".utf8)
        let sealed = try Self.sealer().seal(plaintext, at: Self.address())
        #expect(sealed.count == plaintext.count + CipherFormat.sealOverhead)
        #expect(try Self.sealer().open(sealed, at: Self.address()) == plaintext)
        // No run of 8 plaintext bytes appears in the sealed bytes.
        for start in 0...(plaintext.count - 8) {
            let run = plaintext[start..<start + 8]
            #expect(!(0...(sealed.count - 8)).contains { Array(sealed[$0..<$0 + 8]) == Array(run) })
        }
        #expect(try Self.sealer().open(try Self.sealer().seal([], at: Self.address()), at: Self.address()) == [])
    }

    @Test func everyFlippedBitFailsAuthentication() throws {
        let sealer = try Self.sealer()
        let sealed = try sealer.seal(Array("a value".utf8), at: Self.address())
        for index in sealed.indices {
            for bit in [0, 3, 7] {
                var damaged = sealed
                damaged[index] ^= UInt8(1 << bit)
                #expect(throws: CipherError.authenticationFailed) { try sealer.open(damaged, at: Self.address()) }
            }
        }
        #expect(throws: CipherError.authenticationFailed) { try sealer.open(sealed.dropLast(), at: Self.address()) }
        #expect(throws: CipherError.malformed(reason: "a sealed unit of 27 bytes is shorter than its nonce and tag")) {
            try sealer.open(sealed.prefix(27), at: Self.address())
        }
    }

    @Test func aUnitOpensOnlyAtTheAddressItWasSealedFor() throws {
        let sealer = try Self.sealer()
        let first = try sealer.seal(Array("first record".utf8), at: Self.address(64))
        let second = try sealer.seal(Array("other record".utf8), at: Self.address(110))
        // Swapped: each unit at the other's offset.
        #expect(throws: CipherError.authenticationFailed) { try sealer.open(first, at: Self.address(110)) }
        #expect(throws: CipherError.authenticationFailed) { try sealer.open(second, at: Self.address(64)) }
        // The same offset, but another file number, file kind, unit type or database.
        for moved in [Self.address(64, number: 2), Self.address(64, kind: 3), Self.address(64, type: .checkpointRecord),
                      Self.address(64, uuid: Array(repeating: 9, count: 16))] {
            #expect(throws: CipherError.authenticationFailed) { try sealer.open(first, at: moved) }
        }
        #expect(try sealer.open(first, at: Self.address(64)) == Array("first record".utf8))
    }

    @Test func fileKeysDependOnSaltFileAndDataKey() throws {
        let sealed = try Self.sealer().seal(Array("x".utf8), at: Self.address())
        // The same inputs derive the same key.
        #expect(try Self.sealer().open(sealed, at: Self.address()) == Array("x".utf8))
        let others = [try Self.sealer(salt: [UInt8](repeating: 8, count: CipherFormat.fileSaltSize)),
                      try Self.sealer(number: 2), try Self.sealer(kind: 3), try Self.sealer(key: DataKey.generate())]
        for other in others {
            #expect(throws: CipherError.authenticationFailed) { try other.open(sealed, at: Self.address()) }
        }
        #expect(throws: CipherError.self) { try Self.sealer(salt: [1, 2, 3]) }
    }

    /// The four paths that rewrite an offset (rollback, the cut-back after a failed sync,
    /// torn-tail truncation, the index writer resuming) seal new bytes at a place sealed before:
    /// every seal must draw a new nonce.
    @Test func resealingOnePlaceNeverRepeatsANonce() throws {
        let sealer = try Self.sealer()
        var nonces = Set<[UInt8]>()
        var ciphertexts = Set<[UInt8]>()
        let count = 20_000
        for _ in 0..<count {
            let sealed = try sealer.seal(Array("the same bytes at the same place".utf8), at: Self.address(64))
            nonces.insert(Array(sealed.prefix(CipherFormat.nonceSize)))
            ciphertexts.insert(sealed)
        }
        #expect(nonces.count == count)
        #expect(ciphertexts.count == count)
    }
}
