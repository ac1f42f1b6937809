import Foundation
import Testing
@testable import YapDB

/// Serializers, deserializers, sanitizers and policies registered after connections exist apply
/// to those connections too, from their next transaction (issue 10, item 2): apps register
/// after creating connections, as YapDatabase's Hello World does.
@Suite struct LateRegistrationTests {
    /// A type the built-in format cannot store: only a registered block serializer can.
    /// `isCopy` tells a `.copy` hand-over from a fresh decode.
    final class Note: NSObject, NSCopying, @unchecked Sendable {
        let text: String
        let isCopy: Bool
        init(_ text: String, isCopy: Bool = false) {
            self.text = text
            self.isCopy = isCopy
        }
        func copy(with zone: NSZone? = nil) -> Any { Note(text, isCopy: true) }
    }

    static let encodeNote: YapDatabaseSerializer = { _, _, object in Data(("note:" + (object as! Note).text).utf8) }
    static let decodeNote: YapDatabaseDeserializer = { _, _, data in
        let text = String(decoding: data, as: UTF8.self)
        return text.hasPrefix("note:") ? Note(String(text.dropFirst(5))) : nil
    }

    /// A database with two connections that have each run a transaction before anything was
    /// registered (the fixture keeps the database open).
    func oldConnections() throws -> (DatabaseFixture, YapDatabaseConnection, YapDatabaseConnection) {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let a = database.newConnection(), b = database.newConnection()
        a.readWrite { tx in tx.setObject("before", forKey: "warm", inCollection: "misc") }
        #expect(b.read { tx in tx.object(forKey: "warm", inCollection: "misc") as? String } == "before")
        return (fixture, a, b)
    }

    /// The texts of the `Note` object and metadata under `key` in `collection`, read on `connection`.
    func noteTexts(_ connection: YapDatabaseConnection, _ key: String, _ collection: String) -> [String?] {
        connection.read { tx in
            [(tx.object(forKey: key, inCollection: collection) as? Note)?.text, (tx.metadata(forKey: key, inCollection: collection) as? Note)?.text]
        }
    }

    @Test func codableRegisteredAfterConnectionsIsUsedByThem() throws {
        let (fixture, a, b) = try oldConnections()
        let database = fixture.database!
        database.registerCodableSerialization(Person.self, forCollection: "people")
        database.registerCodableSerialization(Address.self, metadata: Shape.self, forCollection: "places")
        try a.write { tx in
            tx.setObject(Person.sample(1), forKey: "p1", inCollection: "people")
            tx.setObject(Address(street: "Elm", zip: 7), forKey: "home", inCollection: "places", withMetadata: Shape.circle(radius: 2))
        }
        b.read { tx in
            #expect(tx.object(forKey: "p1", inCollection: "people") as? Person == Person.sample(1))
            #expect(tx.object(forKey: "home", inCollection: "places") as? Address == Address(street: "Elm", zip: 7))
            #expect(tx.metadata(forKey: "home", inCollection: "places") as? Shape == .circle(radius: 2))
        }
    }

    @Test func blockSerializersPerCollectionAndDefaultAreUsedByOldConnections() throws {
        let (fixture, a, b) = try oldConnections()
        let database = fixture.database!
        // Per collection, objects and metadata through separate registrations.
        database.registerObjectSerializer(Self.encodeNote, forCollection: "notes")
        database.registerObjectDeserializer(Self.decodeNote, forCollection: "notes")
        database.registerMetadataSerializer(Self.encodeNote, forCollection: "notes")
        database.registerMetadataDeserializer(Self.decodeNote, forCollection: "notes")
        try a.write { tx in tx.setObject(Note("hello"), forKey: "n", inCollection: "notes", withMetadata: Note("meta")) }
        #expect(noteTexts(b, "n", "notes") == ["hello", "meta"])
        // The default pair, for every other collection.
        database.registerDefaultSerializer { collection, key, object in
            if let note = object as? Note { return try Self.encodeNote(collection, key, note) }
            return Data(String(describing: object).utf8)
        }
        database.registerDefaultDeserializer(Self.decodeNote)
        try b.write { tx in tx.setObject(Note("anywhere"), forKey: "x", inCollection: "elsewhere") }
        #expect(noteTexts(a, "x", "elsewhere") == ["anywhere", nil])
        // Both forms of the per-collection pair.
        database.registerSerializer(Self.encodeNote, forCollection: "pair")
        database.registerDeserializer(Self.decodeNote, forCollection: "pair")
        try a.write { tx in tx.setObject(Note("paired"), forKey: "p", inCollection: "pair", withMetadata: Note("m")) }
        #expect(noteTexts(b, "p", "pair") == ["paired", "m"])
    }

    @Test func sanitizersRegisteredLateRunOnOldConnections() throws {
        let (fixture, a, b) = try oldConnections()
        let database = fixture.database!
        let seen = LockedLog()
        database.registerPreSanitizer({ _, _, value in (value as? String)?.uppercased() ?? value }, forCollection: "loud")
        database.registerPostSanitizer({ _, key, value in seen.append("\(key)=\(value)") }, forCollection: "loud")
        try a.write { tx in tx.setObject("quiet", forKey: "k", inCollection: "loud") }
        #expect(seen.entries == ["k=QUIET"], "the post-sanitizer saw the pre-sanitized object")
        #expect(b.read { tx in tx.object(forKey: "k", inCollection: "loud") as? String } == "QUIET")
        #expect(a.read { tx in tx.object(forKey: "k", inCollection: "loud") as? String } == "QUIET")
    }

    @Test func policiesSetLateApplyToOldConnections() throws {
        let (fixture, a, b) = try oldConnections()
        let database = fixture.database!
        database.registerSerializer(Self.encodeNote, forCollection: "notes")
        database.registerDeserializer(Self.decodeNote, forCollection: "notes")
        try a.write { tx in tx.setObject(Note("v1"), forKey: "k", inCollection: "notes") }
        _ = b.read { tx in tx.object(forKey: "k", inCollection: "notes") }   // b caches the key
        database.setObjectPolicy(.share, forCollection: "notes")
        let shared = Note("v2")
        try a.write { tx in tx.setObject(shared, forKey: "k", inCollection: "notes") }
        #expect(b.read { tx in tx.object(forKey: "k", inCollection: "notes") as? Note } === shared,
                ".share set after both connections existed hands over the writer's instance")
        // The default policy, for a collection without its own.
        database.registerSerializer(Self.encodeNote, forCollection: "copies")
        database.registerDeserializer(Self.decodeNote, forCollection: "copies")
        try a.write { tx in tx.setObject(Note("c1"), forKey: "k", inCollection: "copies") }
        _ = b.read { tx in tx.object(forKey: "k", inCollection: "copies") }
        database.setDefaultObjectPolicy(.copy)
        let copied = Note("c2")
        try a.write { tx in tx.setObject(copied, forKey: "k", inCollection: "copies") }
        let afterCopy = b.read { tx in tx.object(forKey: "k", inCollection: "copies") as? Note }
        #expect(afterCopy !== copied && afterCopy?.text == "c2" && afterCopy?.isCopy == true, "the default .copy hands over a copy")
        // Metadata policies too.
        database.setMetadataPolicy(.share, forCollection: "notes")
        database.setDefaultMetadataPolicy(.share)
        let meta = Note("m1")
        try a.write { tx in tx.setObject(Note("v4"), forKey: "k", inCollection: "notes", withMetadata: Note("m0")) }
        _ = b.read { tx in tx.metadata(forKey: "k", inCollection: "notes") }
        try a.write { tx in tx.replaceMetadata(meta, forKey: "k", inCollection: "notes") }
        #expect(b.read { tx in tx.metadata(forKey: "k", inCollection: "notes") as? Note } === meta)
    }

    @Test func aTransactionKeepsTheRegistrationsItStartedWith() throws {
        let (fixture, a, _) = try oldConnections()
        let database = fixture.database!
        try a.write { tx in
            database.registerPreSanitizer({ _, _, _ in "sanitized" }, forCollection: "misc")
            tx.setObject("raw", forKey: "during", inCollection: "misc")
        }
        try a.write { tx in tx.setObject("raw", forKey: "after", inCollection: "misc") }
        a.read { tx in
            #expect(tx.object(forKey: "during", inCollection: "misc") as? String == "raw", "the running transaction kept its registrations")
            #expect(tx.object(forKey: "after", inCollection: "misc") as? String == "sanitized", "the next one took the new ones")
        }
    }

    @Test func anUnchangedRegistryIsNotReloaded() {
        let registry = SerializationRegistry()
        let (first, version) = registry.versionedSnapshot
        #expect(registry.current(ifNewerThan: version) == nil)
        registry.setDefaultObjectPolicy(.share)
        let next = registry.current(ifNewerThan: version)
        #expect(next != nil && next!.version != version && next!.snapshot !== first)
        #expect(next?.snapshot.objectPolicy(forCollection: "any") == .share)
    }
}
