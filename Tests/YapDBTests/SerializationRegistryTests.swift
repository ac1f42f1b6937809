import Foundation
import Testing
@testable import YapDB

@Suite struct SerializationRegistryTests {
    typealias Part = SerializationRegistry.Part

    @Test func defaultSerializerStoresDataAndStringTagged() throws {
        let s = SerializationRegistry().snapshot
        let data = Data([9, 8, 7])
        let storedData = try s.serialize(.object, data, forKey: "k", inCollection: "c")
        #expect(storedData == Data([0x00, 9, 8, 7]))
        #expect(s.deserialize(.object, storedData, forKey: "k", inCollection: "c") as? Data == data)
        let storedText = try s.serialize(.metadata, "héllo", forKey: "k", inCollection: "c")
        #expect(storedText == Data([0x01]) + Data("héllo".utf8))
        #expect(s.deserialize(.metadata, storedText, forKey: "k", inCollection: "c") as? String == "héllo")
        // Text stored as Data stays Data, and UTF-8 bytes stored as Data do not come back as String.
        let utf8AsData = try s.serialize(.object, Data("abc".utf8), forKey: "k", inCollection: "c")
        #expect(s.deserialize(.object, utf8AsData, forKey: "k", inCollection: "c") is Data)
        #expect(try s.serialize(.object, "", forKey: "k", inCollection: "c") == Data([0x01]))
        #expect(s.deserialize(.object, Data(), forKey: "k", inCollection: "c") == nil)
    }

    @Test func defaultSerializerHandlesStandardAndPropertyListValues() throws {
        let s = SerializationRegistry().snapshot
        func roundTrip(_ value: Any) throws -> Any? {
            s.deserialize(.object, try s.serialize(.object, value, forKey: "k", inCollection: ""), forKey: "k", inCollection: "")
        }
        #expect(try roundTrip(42) as? Int == 42)
        #expect(try roundTrip(true) as? Bool == true)
        #expect(try roundTrip(["a", "b"]) as? [String] == ["a", "b"])
        #expect(try roundTrip(["x": 1]) as? [String: Int] == ["x": 1])
        let plist = try roundTrip(["name": "n", "n": 3, "list": [1.5, 2.5]] as [String: Any]) as? [String: Any]
        #expect(plist?["name"] as? String == "n")
        #expect(plist?["n"] as? Int == 3)
    }

    @Test func unsupportedValueThrowsSerializationErrorNotEmptyData() {
        final class Opaque {}
        let s = SerializationRegistry().snapshot
        #expect(throws: YapDatabaseError.self) { try s.serialize(.object, Opaque(), forKey: "k", inCollection: "c") }
        do {
            _ = try s.serialize(.object, Opaque(), forKey: "key1", inCollection: "col1")
        } catch {
            guard case let .serialization(collection, key, underlying) = error else { Issue.record("wrong case \(error)"); return }
            #expect(collection == "col1" && key == "key1" && underlying.contains("Opaque"))
        }
    }

    @Test func encodingFailureBecomesSerializationError() {
        let registry = SerializationRegistry()
        registry.registerCodableSerialization(Unencodable.self, forCollection: "bad")
        let s = registry.snapshot
        #expect(throws: YapDatabaseError.serialization(collection: "bad", key: "k",
                                                       underlying: String(describing: EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refuses to encode"))))) {
            try s.serialize(.object, Unencodable(), forKey: "k", inCollection: "bad")
        }
        registry.registerSerializer({ _, _, _ in throw CocoaError(.fileWriteUnknown) }, forCollection: "throws")
        #expect(throws: YapDatabaseError.self) { try registry.snapshot.serialize(.object, "x", forKey: "k", inCollection: "throws") }
    }

    @Test func resolutionIsCollectionThenDefaultThenBuiltIn() throws {
        let registry = SerializationRegistry()
        registry.registerDefaultSerializer { _, _, _ in Data("default".utf8) }
        registry.registerSerializer({ _, _, _ in Data("special".utf8) }, forCollection: "special")
        registry.registerSerializer({ _, _, _ in Data("meta".utf8) }, forCollection: "m", parts: .metadata)
        let s = registry.snapshot
        #expect(try s.serialize(.object, 1, forKey: "k", inCollection: "special") == Data("special".utf8))
        #expect(try s.serialize(.metadata, 1, forKey: "k", inCollection: "special") == Data("special".utf8))
        #expect(try s.serialize(.object, 1, forKey: "k", inCollection: "other") == Data("default".utf8))
        #expect(try s.serialize(.metadata, 1, forKey: "k", inCollection: "m") == Data("meta".utf8))
        #expect(try s.serialize(.object, 1, forKey: "k", inCollection: "m") == Data("default".utf8))
        // Nothing registered: the built-in format.
        #expect(try SerializationRegistry().snapshot.serialize(.object, "a", forKey: "k", inCollection: "m") == Data([1, 0x61]))
    }

    @Test func deserializerResolutionAndArguments() {
        let registry = SerializationRegistry()
        registry.registerDefaultDeserializer { c, k, d in "default \(c) \(k) \(d.count)" }
        registry.registerDeserializer({ _, _, _ in "special" }, forCollection: "special", parts: .object)
        let s = registry.snapshot
        #expect(s.deserialize(.object, Data([1, 2]), forKey: "key", inCollection: "col") as? String == "default col key 2")
        #expect(s.deserialize(.object, Data(), forKey: "k", inCollection: "special") as? String == "special")
        #expect(s.deserialize(.metadata, Data(), forKey: "k", inCollection: "special") as? String == "default special k 0")
    }

    @Test func snapshotIsFrozen() throws {
        let registry = SerializationRegistry()
        let before = registry.snapshot
        registry.registerSerializer({ _, _, _ in Data("new".utf8) }, forCollection: "c")
        registry.setObjectPolicy(.share, forCollection: "c")
        #expect(try before.serialize(.object, "x", forKey: "k", inCollection: "c") == Data([1, 0x78]))
        #expect(before.objectPolicy(forCollection: "c") == .containment)
        #expect(try registry.snapshot.serialize(.object, "x", forKey: "k", inCollection: "c") == Data("new".utf8))
    }

    @Test func codableRoundTripWithEveryCoder() throws {
        let plist = PropertyListEncoder()
        plist.outputFormat = .binary
        let coders: [(any YapDatabaseEncoder, any YapDatabaseDecoder)?] = [
            nil, (JSONEncoder(), JSONDecoder()), (plist, PropertyListDecoder()), (YapBinaryEncoder(), YapBinaryDecoder()),
        ]
        for coder in coders {
            let registry = SerializationRegistry()
            registry.registerCodableSerialization(Person.self, forCollection: "people", encoder: coder?.0, decoder: coder?.1)
            let s = registry.snapshot
            for i in 0..<3 {
                let person = Person.sample(i)
                let bytes = try s.serialize(.object, person, forKey: "p", inCollection: "people")
                #expect(bytes.first == 0x02)
                #expect(s.deserialize(.object, bytes, forKey: "p", inCollection: "people") as? Person == person)
                let meta = try s.serialize(.metadata, person, forKey: "p", inCollection: "people")
                #expect(s.deserialize(.metadata, meta, forKey: "p", inCollection: "people") as? Person == person)
            }
            // Strings and Data still work in a Codable collection.
            let text = try s.serialize(.object, "plain", forKey: "p", inCollection: "people")
            #expect(s.deserialize(.object, text, forKey: "p", inCollection: "people") as? String == "plain")
        }
    }

    @Test func codableObjectAndMetadataTypesAndNamedFallback() throws {
        let registry = SerializationRegistry()
        registry.registerCodableSerialization(Person.self, metadata: Address.self, forCollection: "people")
        let s = registry.snapshot
        let address = Address(street: "s", zip: 1)
        let meta = try s.serialize(.metadata, address, forKey: "k", inCollection: "people")
        #expect(meta.first == 0x02)
        #expect(s.deserialize(.metadata, meta, forKey: "k", inCollection: "people") as? Address == address)
        // A registered type stored in another collection uses the self-describing tag.
        let elsewhere = try s.serialize(.object, address, forKey: "k", inCollection: "misc")
        #expect(elsewhere.first == 0x03)
        #expect(s.deserialize(.object, elsewhere, forKey: "k", inCollection: "misc") as? Address == address)
        // An Address stored as a people object (not the collection's type) still round-trips.
        let mixed = try s.serialize(.object, address, forKey: "k", inCollection: "people")
        #expect(mixed.first == 0x03)
        #expect(s.deserialize(.object, mixed, forKey: "k", inCollection: "people") as? Address == address)
    }

    @Test func malformedStoredBytesDeserializeToNil() {
        let registry = SerializationRegistry()
        registry.registerCodableSerialization(Person.self, forCollection: "people")
        let s = registry.snapshot
        #expect(s.deserialize(.object, Data([0x02, 0xFF]), forKey: "k", inCollection: "people") == nil)
        #expect(s.deserialize(.object, Data([0x02, 0x01]), forKey: "k", inCollection: "plain") == nil)
        #expect(s.deserialize(.object, Data([0x03, 0x50, 0x41]), forKey: "k", inCollection: "plain") == nil)
        #expect(s.deserialize(.object, Data([0x03, 0x01, 0x41, 0x00]), forKey: "k", inCollection: "plain") == nil)
        #expect(s.deserialize(.object, Data([0x7F]), forKey: "k", inCollection: "plain") == nil)
        #expect(s.deserialize(.object, Data([0x01, 0xFF, 0xFE]), forKey: "k", inCollection: "plain") == nil)
    }

    @Test func sanitizersResolveLikeSerializers() {
        let registry = SerializationRegistry()
        registry.registerDefaultPreSanitizer { _, _, value in "default(\(value))" }
        registry.registerPreSanitizer({ c, k, value in "\(c)/\(k)(\(value))" }, forCollection: "c", parts: .object)
        let log = LockedLog()
        registry.registerPostSanitizer({ c, k, value in log.append("\(c)/\(k)=\(value)") }, forCollection: "c")
        let s = registry.snapshot
        #expect(s.preSanitize(.object, 1, forKey: "k", inCollection: "c") as? String == "c/k(1)")
        #expect(s.preSanitize(.metadata, 1, forKey: "k", inCollection: "c") as? String == "default(1)")
        #expect(s.preSanitize(.object, 1, forKey: "k", inCollection: "d") as? String == "default(1)")
        s.postSanitize(.metadata, 5, forKey: "k", inCollection: "c")
        s.postSanitize(.object, 6, forKey: "k", inCollection: "other")
        #expect(log.entries == ["c/k=5"])
        #expect(s.hasSanitizers(.object) && !SerializationRegistry().snapshot.hasSanitizers(.object))
        #expect(SerializationRegistry().snapshot.preSanitize(.object, 3, forKey: "k", inCollection: "c") as? Int == 3)
    }

    @Test func policies() {
        let registry = SerializationRegistry()
        registry.setDefaultObjectPolicy(.copy)
        registry.setObjectPolicy(.share, forCollection: "shared")
        registry.setMetadataPolicy(.copy, forCollection: nil)
        registry.setDefaultMetadataPolicy(.share)
        let s = registry.snapshot
        #expect(s.objectPolicy(forCollection: "shared") == .share)
        #expect(s.objectPolicy(forCollection: "x") == .copy)
        #expect(s.metadataPolicy(forCollection: "") == .copy)
        #expect(s.metadataPolicy(forCollection: "x") == .share)
    }
}

/// A thread-safe list of strings for sanitizer and log handler tests.
final class LockedLog: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ s: String) { storage.withLock { $0.append(s) } }
    var entries: [String] { storage.withLock { $0 } }
}

import Synchronization
