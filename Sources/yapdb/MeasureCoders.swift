import ArgumentParser
import Foundation
import YapDB

/// `yapdb measure-coders`: ns per encode and decode, and bytes per value, of a typical 8-field
/// Codable struct with each candidate coder (the numbers behind the default Codable coder in
/// docs/api.md). Build with `-c release`.
struct MeasureCoders: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-coders",
        abstract: "Measure JSON, binary property list and YapBinary Codable coders (build with -c release).",
        shouldDisplay: false)

    @Option(help: "Encode/decode round trips per coder.") var iterations = 100_000
    @Option(help: "Measure only coders whose name starts with this.") var only: String?

    struct Location: Codable, Equatable {
        var city: String
        var latitude: Double
        var longitude: Double
    }

    /// The measured value: 8 fields, one of each common kind.
    struct Person: Codable, Equatable {
        var name: String
        var age: Int
        var score: Double
        var isActive: Bool
        var created: Date
        var tags: [String]
        var home: Location
        var nickname: String?
    }

    func run() throws {
        var people: [Person] = []
        for i in 0..<64 {
            let d = Double(i)
            let home = Location(city: "Springfield", latitude: 39.78 + d, longitude: -89.65)
            let nickname: String? = i % 3 == 0 ? nil : "nick\(i)"
            people.append(Person(name: "Person number \(i)", age: 20 + i, score: d * 1.25, isActive: i % 2 == 0,
                                 created: Date(timeIntervalSinceReferenceDate: 700_000_000 + d),
                                 tags: ["swift", "database", "tag\(i)"], home: home, nickname: nickname))
        }
        let plist = PropertyListEncoder()
        plist.outputFormat = .binary
        let coders: [(String, any YapDatabaseEncoder, any YapDatabaseDecoder)] = [
            ("JSONEncoder/JSONDecoder", JSONEncoder(), JSONDecoder()),
            ("PropertyListEncoder/Decoder (binary)", plist, PropertyListDecoder()),
            ("YapBinaryEncoder/Decoder", YapBinaryEncoder(), YapBinaryDecoder()),
        ]
        print("coder | encode ns | decode ns | bytes per value")
        print("---|---:|---:|---:")
        for (name, encoder, decoder) in coders where only.map(name.hasPrefix) ?? true {
            let encoded = try people.map { try encoder.encode($0) }
            for (p, data) in zip(people, encoded) where try decoder.decode(Person.self, from: data) != p {
                throw ValidationError("\(name) does not round-trip")
            }
            let bytes = Double(encoded.reduce(0) { $0 + $1.count }) / Double(encoded.count)
            var sink = 0
            let t0 = DispatchTime.now().uptimeNanoseconds
            for i in 0..<iterations { sink &+= try encoder.encode(people[i & 63]).count }
            let t1 = DispatchTime.now().uptimeNanoseconds
            for i in 0..<iterations { sink &+= try decoder.decode(Person.self, from: encoded[i & 63]).age }
            let t2 = DispatchTime.now().uptimeNanoseconds
            let enc = Int((Double(t1 - t0) / Double(iterations)).rounded())
            let dec = Int((Double(t2 - t1) / Double(iterations)).rounded())
            let size = String(format: "%.1f", bytes)
            let mark = sink == 42 ? " " : ""
            print("\(name) | \(enc) | \(dec) | \(size)\(mark)")
        }
    }
}
