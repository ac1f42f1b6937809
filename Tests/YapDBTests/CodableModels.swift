import Foundation

// Codable shapes shared by the coder and serializer tests.

struct Address: Codable, Hashable, Sendable {
    var street: String
    var zip: Int
}

enum Shape: Codable, Hashable, Sendable {
    case circle(radius: Double)
    case rect(Double, Double)
    case labelled(String, inner: [Shape])
    case empty
}

struct Person: Codable, Hashable, Sendable {
    var name: String
    var age: Int
    var score: Double
    var active: Bool
    var born: Date
    var tags: [String]
    var address: Address
    var nickname: String?
    var avatar: Data?
    var shapes: [Shape] = []
    var counts: [String: Int] = [:]
    var byNumber: [Int: String] = [:]
    var optionals: [Int?] = []
    var nested: [[UInt8]] = []
    var tiny: Int8 = -5
    var big: UInt64 = .max
    var ratio: Float = 0.25

    static func sample(_ i: Int = 1) -> Person {
        Person(name: "Person \(i) ü", age: 30 + i, score: 3.25 * Double(i), active: i % 2 == 0,
               born: Date(timeIntervalSinceReferenceDate: 123_456.5 + Double(i)), tags: ["a", "bb", "ccc"],
               address: Address(street: "Main St", zip: 10_000 + i), nickname: i % 2 == 0 ? nil : "nick",
               avatar: Data([1, 2, 3, UInt8(i & 0xFF)]),
               shapes: [.circle(radius: 1.5), .rect(2, 3), .labelled("x", inner: [.empty, .circle(radius: 0)]), .empty],
               counts: ["one": 1, "two": 2], byNumber: [1: "one", -7: "minus seven"], optionals: [1, nil, 3],
               nested: [[], [1], [2, 3]])
    }
}

/// A class hierarchy that encodes its superclass through `superEncoder()`.
class Animal: Codable, @unchecked Sendable {
    var legs: Int
    init(legs: Int) { self.legs = legs }
}

final class Dog: Animal, @unchecked Sendable {
    var name: String
    init(name: String, legs: Int) { self.name = name; super.init(legs: legs) }
    private enum CodingKeys: String, CodingKey { case name }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try super.encode(to: c.superEncoder())
    }
}

/// Fills two nested containers in interleaved order, and uses nested unkeyed/keyed containers
/// and a keyed `superEncoder(forKey:)`.
struct Interleaved: Codable, Equatable {
    var a: [Int]
    var b: [String: String]
    var c: String

    private enum Keys: String, CodingKey { case a, b, c, sup }
    private enum Inner: String, CodingKey { case x, y }

    init(a: [Int], b: [String: String], c: String) { self.a = a; self.b = b; self.c = c }

    func encode(to encoder: any Encoder) throws {
        var root = encoder.container(keyedBy: Keys.self)
        var listA = root.nestedUnkeyedContainer(forKey: .a)
        var inner = root.nestedContainer(keyedBy: Inner.self, forKey: .b)
        try listA.encode(a.first ?? 0)
        try inner.encode(b["x"], forKey: .x)
        try root.encode(c, forKey: .c)
        for v in a.dropFirst() { try listA.encode(v) }
        try inner.encode(b["y"], forKey: .y)
        let sup = root.superEncoder(forKey: .sup)
        var single = sup.singleValueContainer()
        try single.encode(c.count)
    }

    init(from decoder: any Decoder) throws {
        let root = try decoder.container(keyedBy: Keys.self)
        c = try root.decode(String.self, forKey: .c)
        let inner = try root.nestedContainer(keyedBy: Inner.self, forKey: .b)
        var dict: [String: String] = [:]
        dict["x"] = try inner.decodeIfPresent(String.self, forKey: .x)
        dict["y"] = try inner.decodeIfPresent(String.self, forKey: .y)
        b = dict
        var listA = try root.nestedUnkeyedContainer(forKey: .a)
        var values: [Int] = []
        while !listA.isAtEnd { values.append(try listA.decode(Int.self)) }
        a = values
        let count = try root.superDecoder(forKey: .sup).singleValueContainer().decode(Int.self)
        guard count == c.count else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "sup")) }
    }
}

/// A recursive type, for depth limits.
indirect enum Chain: Codable, Equatable {
    case end
    case link(Chain)

    static func of(depth: Int) -> Chain {
        var chain = Chain.end
        for _ in 0..<depth { chain = .link(chain) }
        return chain
    }
}

/// A value whose encoding always fails.
struct Unencodable: Codable {
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refuses to encode"))
    }
    init() {}
}
