import Foundation

/// SplitMix64: a small, fast generator with a fixed seed, so every run and every engine sees
/// the same keys, values and orders.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The rows every engine stores: 16-byte keys (hex of a random 64-bit number, so index order is
/// random key order) and fixed-size values, all from one seed. Keys and values exist both as
/// Swift values (YapDB's API takes `String` and `Data`) and as flat byte buffers (the C APIs take
/// pointers), built before any timing starts.
final class Dataset: @unchecked Sendable {  // immutable after init
    static let collection = "bench"
    static let keySize = 16

    let count: Int
    let valueSize: Int
    let keys: [String]
    let values: [Data]
    /// `count` keys of `keySize` bytes, back to back.
    let keyBytes: [UInt8]
    /// `count` values of `valueSize` bytes, back to back.
    let valueBytes: [UInt8]
    /// Indices in ascending key order (the "sequential" variant inserts in this order).
    let sortedOrder: [Int]
    /// A random permutation of the indices, unrelated to insertion order (reads use it).
    let readOrder: [Int]

    enum ValueKind: String { case random, json }

    init(count: Int, valueSize: Int, kind: ValueKind, seed: UInt64) {
        self.count = count
        self.valueSize = valueSize
        var rng = SplitMix64(seed: seed)
        var keys: [String] = []
        keys.reserveCapacity(count)
        var seen = Set<UInt64>()
        seen.reserveCapacity(count)
        while keys.count < count {
            let n = rng.next()
            guard seen.insert(n).inserted else { continue }
            let hex = String(n, radix: 16)
            keys.append(String(repeating: "0", count: 16 - hex.count) + hex)
        }
        self.keys = keys
        keyBytes = keys.flatMap { Array($0.utf8) }
        var valueBytes = [UInt8](repeating: 0, count: count * valueSize)
        switch kind {
        case .random:
            valueBytes.withUnsafeMutableBytes { raw in
                let words = raw.count / 8
                for w in 0..<words { raw.storeBytes(of: rng.next(), toByteOffset: w * 8, as: UInt64.self) }
                for b in (words * 8)..<raw.count { raw[b] = UInt8(truncatingIfNeeded: rng.next()) }
            }
        case .json:
            for i in 0..<count {
                let text = Dataset.jsonLike(index: i, size: valueSize, rng: &rng)
                valueBytes.replaceSubrange((i * valueSize)..<((i + 1) * valueSize), with: text)
            }
        }
        self.valueBytes = valueBytes
        values = (0..<count).map { i in Data(valueBytes[(i * valueSize)..<((i + 1) * valueSize)]) }
        sortedOrder = (0..<count).sorted { keys[$0] < keys[$1] }
        var order = Array(0..<count)
        order.shuffle(using: &rng)
        readOrder = order
    }

    /// Keys only, for a child process that reads rows a parent wrote: no values, no orders.
    init(keys: [String], valueSize: Int) {
        count = keys.count
        self.valueSize = valueSize
        self.keys = keys
        keyBytes = keys.flatMap { Array($0.utf8) }
        values = []
        valueBytes = []
        sortedOrder = []
        readOrder = []
    }

    /// The checksum of row `i`'s value, straight from the dataset.
    func valueChecksum(_ i: Int) -> UInt64 {
        valueBytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[(i * valueSize)..<((i + 1) * valueSize)])) }
    }

    /// A JSON object of exactly `size` bytes that reads like application data: repeated field
    /// names, words from a small vocabulary, numbers (so it compresses as real JSON does).
    static func jsonLike(index: Int, size: Int, rng: inout SplitMix64) -> [UInt8] {
        let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                     "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"]
        func word() -> String { words[Int(rng.next() % UInt64(words.count))] }
        var text = "{\"id\":\(index),\"name\":\"\(word()) \(word())\",\"email\":\"\(word()).\(word())@example.com\","
        text += "\"active\":\(rng.next() % 2 == 0),\"score\":\(rng.next() % 100_000),\"tags\":[\"\(word())\",\"\(word())\"],"
        text += "\"address\":{\"street\":\"\(rng.next() % 999) \(word()) street\",\"city\":\"\(word())\",\"zip\":\"\(rng.next() % 99_999)\"},"
        text += "\"bio\":\""
        while text.utf8.count < size - 2 { text += word() + " " }
        var bytes = Array(text.utf8.prefix(size - 2))
        bytes += Array("\"}".utf8)
        return bytes
    }

    /// The key of row `i` as bytes.
    func withKey<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try keyBytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[(i * Dataset.keySize)..<((i + 1) * Dataset.keySize)])) }
    }

    /// The payload of `rows` rows as the engines would see it raw: key plus value bytes.
    func payloadBytes(rows: Int) -> Int64 { Int64(rows) * Int64(Dataset.keySize + valueSize) }
}

/// `checksum` of a string's UTF-8 bytes, read in place: the engines that hand out keys as
/// `String`s pay for the check what the C engines pay for theirs (a pass over bytes), not a
/// copy into a new array per row.
@inline(__always)
func checksum(utf8 string: String) -> UInt64 {
    var string = string
    return string.withUTF8 { checksum(UnsafeRawBufferPointer($0)) }
}

/// A checksum of a read result, folded into a running total, so no read can be optimised away
/// and every engine's reads can be compared: the same rows give the same total.
@inline(__always)
func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var sum = UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
    let words = bytes.count / 8
    var offset = 0
    for _ in 0..<words {
        sum = (sum &+ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x100_0000_01B3
        offset += 8
    }
    while offset < bytes.count {
        sum = (sum &+ UInt64(bytes[offset])) &* 0x100_0000_01B3
        offset += 1
    }
    return sum
}
