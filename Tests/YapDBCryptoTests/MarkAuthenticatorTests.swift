import Testing
import YapDBCrypto

/// The high-water mark's tags (docs/format.md §2): a tag verifies only for the same fields,
/// slot index, database and data key.
@Suite struct MarkAuthenticatorTests {
    static let uuid: [UInt8] = Array(1...16)
    static let fields: [UInt8] = Array(100..<128)

    @Test func aTagVerifiesOnlyWhereItWasMade() throws {
        let dataKey = try DataKey(bytes: Array(repeating: 9, count: 32), id: 1)
        let authenticator = dataKey.markAuthenticator(databaseUUID: Self.uuid)
        let tag = authenticator.tag(fields: Self.fields, slot: 0)
        #expect(tag.count == MarkAuthenticator.tagSize)
        #expect(authenticator.verify(tag: tag, fields: Self.fields, slot: 0))
        // The same data key derives the same key: a rekey (which keeps it) keeps tags valid.
        #expect(dataKey.markAuthenticator(databaseUUID: Self.uuid).verify(tag: tag, fields: Self.fields, slot: 0))

        #expect(authenticator.tag(fields: Self.fields, slot: 1) != tag)
        #expect(!authenticator.verify(tag: tag, fields: Self.fields, slot: 1), "moved to the other slot")
        var changed = Self.fields
        changed[12] ^= 1
        #expect(!authenticator.verify(tag: tag, fields: changed, slot: 0), "a changed field")
        var flipped = tag
        flipped[31] ^= 0x80
        #expect(!authenticator.verify(tag: flipped, fields: Self.fields, slot: 0), "a changed tag")
        #expect(!authenticator.verify(tag: tag.dropLast(), fields: Self.fields, slot: 0), "a short tag")
        #expect(!authenticator.verify(tag: [UInt8](repeating: 0, count: 32), fields: Self.fields, slot: 0))
        #expect(!dataKey.markAuthenticator(databaseUUID: Array(2...17)).verify(tag: tag, fields: Self.fields, slot: 0), "another database")
        let otherKey = try DataKey(bytes: Array(repeating: 10, count: 32), id: 1)
        #expect(!otherKey.markAuthenticator(databaseUUID: Self.uuid).verify(tag: tag, fields: Self.fields, slot: 0), "another data key")
    }
}
