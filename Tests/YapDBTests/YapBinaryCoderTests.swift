import Foundation
import Testing
import TestSupport
@testable import YapDB

@Suite struct YapBinaryCoderTests {
    let encoder = YapBinaryEncoder()
    let decoder = YapBinaryDecoder()

    func roundTrip<T: Codable & Equatable>(_ value: T, file: String = #fileID, line: Int = #line) throws {
        let bytes = try encoder.encode(value)
        let back = try decoder.decode(T.self, from: bytes)
        #expect(back == value)
    }

    @Test func scalarsRoundTripAtTheTopLevel() throws {
        try roundTrip("héllo")
        try roundTrip("")
        try roundTrip(Int.min)
        try roundTrip(Int.max)
        try roundTrip(UInt64.max)
        try roundTrip(Int8.min)
        try roundTrip(UInt16.max)
        try roundTrip(-0.0 as Double)
        try roundTrip(Double.greatestFiniteMagnitude)
        try roundTrip(Float(1.5))
        try roundTrip(true)
        try roundTrip(Data([0, 255, 7]))
        try roundTrip(Date(timeIntervalSinceReferenceDate: -12.25))
        try roundTrip(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        try roundTrip(URL(string: "https://example.com/a?b=c")!)
        try roundTrip(Optional<Int>.none)
        try roundTrip(Optional<Int>.some(4))
        try roundTrip(Decimal(string: "12.345")!)
    }

    @Test func everyShapeRoundTrips() throws {
        for i in 0..<5 { try roundTrip(Person.sample(i)) }
        try roundTrip([Person.sample(1), Person.sample(2)])
        try roundTrip(["k": [Shape.empty, .rect(1, 2)]])
        try roundTrip([[String?]]([["a", nil], [], [nil]]))
        try roundTrip(Interleaved(a: [1, 2, 3], b: ["x": "ex", "y": "why"], c: "see"))
        try roundTrip(Chain.of(depth: 100))
        try roundTrip(Set(["a", "b"]))
    }

    @Test func superEncoderRoundTripsAClassHierarchy() throws {
        let dog = Dog(name: "Rex", legs: 3)
        let back = try decoder.decode(Dog.self, from: encoder.encode(dog))
        #expect(back.name == "Rex")
        #expect(back.legs == 3)
    }

    @Test func keysAreByNameSoTypesMayEvolve() throws {
        struct V1: Codable { var name: String; var old: Int }
        struct V2: Codable, Equatable { var name: String; var added: String? }
        let bytes = try encoder.encode(V1(name: "n", old: 5))
        #expect(try decoder.decode(V2.self, from: bytes) == V2(name: "n", added: nil))
        struct Needs: Codable { var missing: Int }
        #expect(throws: DecodingError.self) { try decoder.decode(Needs.self, from: bytes) }
    }

    @Test func typeMismatchAndOverflowThrow() throws {
        let bytes = try encoder.encode(300)
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: bytes) }
        #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: bytes) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: try encoder.encode(-1)) }
        #expect(try decoder.decode(UInt16.self, from: bytes) == 300)
    }

    @Test func encodingFailureAndMisuseThrow() throws {
        #expect(throws: EncodingError.self) { try encoder.encode(Unencodable()) }
        struct TwoKinds: Encodable {
            func encode(to encoder: any Encoder) throws {
                _ = encoder.container(keyedBy: YapBinaryKey.self)
                _ = encoder.unkeyedContainer()
            }
        }
        #expect(throws: EncodingError.self) { try encoder.encode(TwoKinds()) }
    }

    @Test func depthLimitIsEnforcedOnBothSides() throws {
        var shallow = YapBinaryEncoder()
        shallow.maxDepth = 10
        #expect(throws: EncodingError.self) { try shallow.encode(Chain.of(depth: 50)) }
        let deep = try encoder.encode(Chain.of(depth: 50))
        var strict = YapBinaryDecoder()
        strict.maxDepth = 10
        #expect(throws: DecodingError.self) { try strict.decode(Chain.self, from: deep) }
        #expect(try decoder.decode(Chain.self, from: deep) == Chain.of(depth: 50))
    }

    @Test func userInfoReachesTheValue() throws {
        struct Reads: Codable {
            static let key = CodingUserInfoKey(rawValue: "k")!
            var seen: String
            init(seen: String) { self.seen = seen }
            init(from decoder: any Decoder) throws { seen = decoder.userInfo[Self.key] as? String ?? "none" }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                try c.encode(encoder.userInfo[Self.key] as? String ?? "none")
            }
        }
        var enc = YapBinaryEncoder()
        enc.userInfo[Reads.key] = "enc"
        var dec = YapBinaryDecoder()
        dec.userInfo[Reads.key] = "dec"
        let bytes = try enc.encode(Reads(seen: ""))
        #expect(try decoder.decode(String.self, from: bytes) == "enc")
        #expect(try dec.decode(Reads.self, from: bytes).seen == "dec")
    }

    @Test func formatBytesAreAsDocumented() throws {
        #expect(try encoder.encodeBytes(-2) == [0x03, 0x03])
        #expect(try encoder.encodeBytes("ab") == [0x07, 0x02, 0x61, 0x62])
        #expect(try encoder.encodeBytes([true]) == [0x0B, 0x02, 0x01, 0x02])
        #expect(try encoder.encodeBytes(Address(street: "s", zip: 1)) ==
                [0x0A, 0x11, 0x02, 0x06] + Array("street".utf8) + [0x07, 0x01, 0x73, 0x03] + Array("zip".utf8) + [0x03, 0x02])
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: [0x03, 0x02, 0x00]) }
    }

    @Test func hostileRandomBytesNeverTrap() {
        var rng = SeededRandom(seed: 0xC0DE)
        for round in 0..<20_000 {
            let count = Int(rng.next() % 64)
            var bytes = rng.bytes(count)
            // Bias towards plausible headers so the decoder gets deep into the input.
            if count > 0, round % 2 == 0 { bytes[0] = [0x0A, 0x0B, 0x07, 0x03][Int(rng.next() % 4)] }
            _ = try? decoder.decode(Person.self, from: bytes)
            _ = try? decoder.decode([Shape].self, from: bytes)
            _ = try? decoder.decode([String: Int].self, from: bytes)
            _ = try? decoder.decode(Chain.self, from: bytes)
            _ = try? decoder.decode(String.self, from: bytes)
        }
    }

    @Test func truncationsAndBitFlipsOfValidEncodingsThrowOrDecode() throws {
        let valid = try encoder.encodeBytes(Person.sample(3))
        for cut in 0..<valid.count {
            #expect(throws: DecodingError.self) { try decoder.decode(Person.self, from: Array(valid[..<cut])) }
        }
        var rng = SeededRandom(seed: 7)
        for _ in 0..<5_000 {
            var flipped = valid
            let i = Int(rng.next() % UInt64(valid.count))
            flipped[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            _ = try? decoder.decode(Person.self, from: flipped)
        }
        // Huge lengths and counts are rejected before any allocation.
        #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: [0x0B, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
        #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: [0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: [0x03] + [UInt8](repeating: 0xFF, count: 11)) }
    }

    /// A container's count is checked against the bytes left divided by its entries' smallest
    /// size (2 for a keyed entry, 1 for an unkeyed element) before anything is reserved.
    @Test func containerCountsAreBoundedByTheSmallestEntry() throws {
        // Keyed: content = count varint (1 byte) + 10 bytes, so at most 5 entries.
        let keyed: (UInt8) -> [UInt8] = { count in [0x0A, 11, count] + [UInt8](repeating: 0, count: 10) }
        let source = { (bytes: [UInt8]) in ByteSource(bytes: bytes, userInfo: [:], maxDepth: 8) }
        #expect(throws: DecodingError.self, "6 keyed entries cannot fit 10 bytes") {
            try source(keyed(6)).containerHeader(YapBinaryFormat.keyedTag, at: 0, end: 13, path: [])
        }
        #expect(try source(keyed(5)).containerHeader(YapBinaryFormat.keyedTag, at: 0, end: 13, path: []).count == 5)
        let unkeyed: [UInt8] = [0x0B, 11, 10] + [UInt8](repeating: 0, count: 10)
        #expect(try source(unkeyed).containerHeader(YapBinaryFormat.unkeyedTag, at: 0, end: 13, path: []).count == 10)
    }
}
